"""Automatic PyTorch instrumentation: steps with phases, forward/backward/optimizer spans,
data-loader waits and facts, worker batches, and the job's lifecycle.

``stepscope run -- python3 train.py`` turns this on in every Python process of the job with no
change to the script. A script that starts itself calls::

    import stepscope.torch
    stepscope.torch.instrument(model=model, optimizer=optimizer, loader=loader)

All arguments are optional: ``model`` names the model whose forward marks steps in loops
without a DataLoader, ``optimizer`` one created before the call. The step rules are in
``stepscope/torch/_steps.py`` and docs/pytorch.md.
"""

import stepscope
from stepscope import _step as _user_steps
from stepscope.torch import _clock_sync, _data, _gpu_tracing, _patches, _windows
from stepscope.torch._steps import tracker
from stepscope.torch._windows import profile

__all__ = ["instrument", "is_instrumented", "profile"]

_instrumented = False


def instrument(model=None, optimizer=None, loader=None, detail=None):
    """Instruments PyTorch in this process (idempotent). Starts recording into
    ./stepscope-runs if nothing records yet (as ``stepscope.start()``). ``detail``: a list of
    detail windows replacing the run config's (docs/detail-windows.md); ValueError if invalid."""
    global _instrumented
    if not stepscope.is_enabled():
        stepscope.start()
    step_tracker = tracker()
    _windows.install(step_tracker, detail)
    if not _instrumented:
        _patches.install(step_tracker)
        _data.install(step_tracker)
        _user_steps.set_step_observer(step_tracker)
        _clock_sync.install()  # multi-node torchrun jobs only: one time axis for every node
        if _gpu_tracing.enabled():
            # The profiler guard makes every torch profiler session hand CUPTI over and back.
            from stepscope.torch import _operators  # noqa: F401 -- importing installs the guard
        _instrumented = True
    if model is not None:
        step_tracker.set_anchor_model(model)
    if optimizer is not None:
        _patches.wrap_optimizer_class(step_tracker, type(optimizer))
    del loader  # DataLoaders are instrumented by class; accepted for symmetry and clarity
    return step_tracker


def is_instrumented():
    return _instrumented
