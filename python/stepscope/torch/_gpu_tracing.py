"""The Python side of stepscope's CUPTI tracer (libstepscope_cupti.so, src/gpu_tracer).

`stepscope run` names the library in ``CUDA_INJECTION64_PATH``: the CUDA driver loads it into
the job's processes at ``cuInit`` and it traces from then on, with no code in the job. CUPTI has
one set of activity callbacks per process, and torch's profiler (Kineto) takes them when it
starts; so around every torch profiler session (a script's own, or stepscope's operators
window) the tracer must hand CUPTI over and take it back afterwards. The ProfilerGuard of
``_operators`` sees every start and end and calls ``yield_to`` and ``take_back`` here.

The library is opened here with ctypes by the path the driver uses (the same file, so the same
loaded copy once the driver has it). Opening it starts nothing: only the driver's call of
``InitializeInjection`` does. A yield before that call is remembered by the library, which then
starts tracing only when CUPTI is given back.

Nested sessions (a script's profiler while stepscope's window is open) yield once and give back
once, when the last one ends. Nothing here raises into the job: a library that cannot be opened
turns these calls into no-ops, said once on stderr.

Detail windows of kind "gpu" (``--gpu-steps``, ``stepscope ctl --gpu-steps``) switch the tracer
to its "everything" mode (memsets, synchronizations, every CUDA call, NVTX ranges) for their
steps and back to the run's mode after: ``EverythingWindowCollector``. The GPU records stay in the
process's GPU stream; the window's document says when the mode was on and whether it took.
"""

import ctypes
import os
import sys
import threading

_lock = threading.Lock()
_library = None        # the opened library, False when it cannot be
_yield_depth = 0       # torch profiler sessions now holding CUPTI


def _warn(message):
    sys.stderr.write(f"stepscope: {message}\n")


def enabled():
    """Whether `stepscope run` injected the tracer into this process's CUDA driver."""
    return (os.environ.get("STEPSCOPE_GPU_TRACER_MODE") in ("whole_job", "everything")
            and bool(os.environ.get("CUDA_INJECTION64_PATH")))


def _open():
    global _library
    if _library is None:
        path = os.environ.get("CUDA_INJECTION64_PATH", "")
        try:
            library = ctypes.CDLL(path)
            for name in ("stepscope_gpu_tracing_yield", "stepscope_gpu_tracing_resume"):
                getattr(library, name).argtypes = [ctypes.c_char_p]
                getattr(library, name).restype = ctypes.c_int
            library.stepscope_gpu_tracing_set_mode.argtypes = [ctypes.c_int]
            library.stepscope_gpu_tracing_flush.argtypes = []
            _library = library
        except (OSError, AttributeError) as error:
            _warn(f"GPU tracing cannot give way to torch's profiler ({path}: {error}); "
                  "the two may disturb each other")
            _library = False
    return _library or None


def yield_to(reason):
    """Hands CUPTI to a torch profiler that is about to start."""
    global _yield_depth
    if not enabled():
        return
    with _lock:
        _yield_depth += 1
        library = _open() if _yield_depth == 1 else None
        if library is not None:
            library.stepscope_gpu_tracing_yield(reason.encode("utf-8", "replace"))


def take_back(reason):
    """Takes CUPTI back once the last torch profiler session has ended."""
    global _yield_depth
    if not enabled():
        return
    with _lock:
        if _yield_depth == 0:
            return
        _yield_depth -= 1
        library = _open() if _yield_depth == 0 else None
        if library is not None:
            library.stepscope_gpu_tracing_resume(reason.encode("utf-8", "replace"))


class EverythingWindowCollector:
    """A "gpu" detail window: the tracer records everything while it is open.

    Skipped (WindowSkipped, the reason in the run) when the tracer does not run in this process:
    GPU tracing off for the run, or no CUDA call yet (the driver has not loaded the tracer)."""

    def __init__(self):
        self._mode = os.environ.get("STEPSCOPE_GPU_TRACER_MODE", "off")

    def start(self):
        from stepscope.torch._windows import WindowSkipped  # the windows module imports this one
        if not enabled():
            raise WindowSkipped(f"GPU tracing is off for this run (gpu_tracing: {self._mode}; stepscope info says why)")
        with _lock:
            library = _open()
            if library is None or library.stepscope_gpu_tracing_set_mode(1) != 0:
                raise WindowSkipped("the GPU tracer does not run in this process (no CUDA call yet, or CUPTI refused)")

    def step_ended(self, phase, number, more):
        pass

    def _back_to_the_runs_mode(self):
        with _lock:
            library = _open()
            if library is not None:
                library.stepscope_gpu_tracing_set_mode(1 if self._mode == "everything" else 0)

    def stop(self):
        self._back_to_the_runs_mode()
        return {"gpu_tracing": {"window_mode": "everything", "run_mode": self._mode}}

    def discard(self):
        self._back_to_the_runs_mode()

    def abandon_in_child(self):
        pass  # the parent's tracer; a forked child has none


def _forget_after_fork():
    """A forked child holds no torch profiler session of its parent's, nor its lock."""
    global _yield_depth, _lock
    _yield_depth = 0
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
