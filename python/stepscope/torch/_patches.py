"""Patches that report forward, backward and optimizer steps to the step tracker and record
them as spans ("Forward", "Backward", "OptimizerStep").

Only top-level module calls are recorded: ``Module.__call__`` is replaced by a wrapper that
costs one thread-local read for nested calls, and records a span (with the module's class)
around calls made outside any other module's forward. A try/finally keeps the nesting right
when a forward raises (forward hooks would not run then).
"""

import functools
import threading

import torch

from stepscope import _core

_tls = threading.local()
_installed = False


def install(step_tracker):
    """Installs the patches once per process; later calls do nothing."""
    global _installed
    if _installed:
        return
    _installed = True
    _patch_module_call(step_tracker)
    _patch_backward(step_tracker)
    _patch_optimizer_init(step_tracker)


def _patch_module_call(step_tracker):
    original_call = torch.nn.Module.__call__

    def __call__(self, *args, **kwargs):
        if getattr(_tls, "in_forward", False):
            return original_call(self, *args, **kwargs)
        _tls.in_forward = True
        try:
            step_tracker.top_level_forward(self, self.training and torch.is_grad_enabled())
            _core.begin("Forward")
            _core.args({"module": type(self).__name__})
            try:
                return original_call(self, *args, **kwargs)
            finally:
                _core.end("Forward")
        finally:
            _tls.in_forward = False

    __call__._stepscope_original = original_call
    torch.nn.Module.__call__ = __call__


def _patch_backward(step_tracker):
    # Tensor.backward() calls torch.autograd.backward through the module attribute, so this one
    # patch sees both spellings.
    original_backward = torch.autograd.backward

    @functools.wraps(original_backward)
    def backward(*args, **kwargs):
        step_tracker.backward_or_optimizer()
        _core.begin("Backward")
        try:
            return original_backward(*args, **kwargs)
        finally:
            _core.end("Backward")

    torch.autograd.backward = backward


def wrap_optimizer_class(step_tracker, optimizer_class):
    """Wraps ``optimizer_class.step`` once (each optimizer class has its own step)."""
    step = optimizer_class.step
    if getattr(step, "_stepscope_wrapped", False):
        return

    @functools.wraps(step)
    def wrapped_step(self, *args, **kwargs):
        step_tracker.backward_or_optimizer()
        _core.begin("OptimizerStep")
        _core.args({"optimizer": type(self).__name__})
        try:
            return step(self, *args, **kwargs)
        finally:
            _core.end("OptimizerStep")

    # functools.wraps copied torch's own "hooked" marker, so torch will not wrap it again.
    wrapped_step._stepscope_wrapped = True
    optimizer_class.step = wrapped_step


def _patch_optimizer_init(step_tracker):
    original_init = torch.optim.Optimizer.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        wrap_optimizer_class(step_tracker, type(self))

    torch.optim.Optimizer.__init__ = __init__
