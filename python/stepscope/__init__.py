"""Annotate PyTorch (or any Python) training scripts for the stepscope profiler.

Under ``stepscope run -- python3 train.py`` the recorder is already on; elsewhere call
:func:`start` first. When nothing is recording, every call here is a cheap no-op, so
annotations can stay in production code::

    import stepscope

    @stepscope.annotate("load")
    def load(path): ...

    for batch in loader:
        with stepscope.step():                 # a TRAIN step, numbered 0, 1, 2, ...
            with stepscope.annotate("forward"):
                loss = model(batch)
            stepscope.counter("loss", loss.item())

Spans, steps and marks are per thread; forked children (DataLoader workers) record into
their own streams automatically.
"""

from stepscope import _core
from stepscope._decorator import decorate as _decorate
from stepscope._session import flush, is_enabled, start, stats, stop
from stepscope._step import PHASES, step

__all__ = [
    "PHASES",
    "annotate",
    "annotation_begin",
    "annotation_end",
    "counter",
    "flush",
    "is_enabled",
    "mark",
    "start",
    "stats",
    "step",
    "stop",
]

__version__ = "0.1.0"

# The record calls are the native objects themselves: a Python-level wrapper would cost more
# than the recording (see benchmarks/python_annotate_benchmark.py).
annotate = _core.Annotation
annotation_begin = _core.begin
annotation_end = _core.end
mark = _core.mark
counter = _core.counter

_core._set_decorator(_decorate)
