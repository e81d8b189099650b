"""Run at interpreter start in every Python process of a job under ``stepscope run`` (through
the sitecustomize module it puts on PYTHONPATH): records the process start and instruments
PyTorch as soon as the script imports it, without importing torch itself.

Set STEPSCOPE_TORCH=0 in the job's environment to keep PyTorch uninstrumented.

Every Python process of the job pays for this module's imports before its script starts, so
it imports nothing beyond what the interpreter has already loaded and the package itself
(benchmarks/run_startup_benchmark.py); importlib.util is imported only when torch is.
"""

import os
import sys

from stepscope import _core


def _warn(message):
    sys.stderr.write(f"stepscope: {message}\n")


def _instrument_torch():
    try:
        import stepscope.torch

        stepscope.torch.instrument()
    except Exception as error:  # never let instrumentation break the job
        _warn(f"PyTorch instrumentation is off in process {os.getpid()}: {type(error).__name__}: {error}")


class _TorchImportWatcher:
    """Lets torch import normally, then instruments it before the script sees it.

    A meta path finder by protocol (find_spec), not by deriving from importlib.abc's: that
    module imports importlib.resources, tempfile, pathlib and more (15 ms).
    """

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)  # one-shot, and keeps find_spec below from finding us
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _instrument_torch()

        spec.loader.exec_module = exec_module
        return spec


def main():
    if not _core.is_enabled():
        return
    launcher = os.environ.get("STEPSCOPE_LAUNCHER_VERSION")
    if launcher:
        import stepscope

        if launcher != stepscope.__version__:
            _warn(f"this job imports stepscope {stepscope.__version__} ({os.path.dirname(stepscope.__file__)}) "
                  f"but was launched by stepscope {launcher}; install one version in both places")
    _core.mark("Lifecycle:ProcessStart")
    if os.environ.get("STEPSCOPE_TORCH", "1") == "0":
        return
    if "torch" in sys.modules:
        _instrument_torch()
    else:
        sys.meta_path.insert(0, _TorchImportWatcher())
