"""Patches that report forward, backward and optimizer steps to the step tracker and record
them as spans ("Forward", "Backward", "OptimizerStep").

Only top-level module calls are recorded: ``Module.__call__`` is replaced by a wrapper that
costs one thread-local read for nested calls, and records a span (with the module's class)
around calls made outside any other module's forward. A try/finally keeps the nesting right
when a forward raises (forward hooks would not run then).

Wrappers are seen through: a call of ``torch.compile(model)`` (OptimizedModule),
``DistributedDataParallel(model)`` or ``DataParallel(model)`` is a call of ``model`` (its
class names the span, and calling the unwrapped model later is the same anchor model); the
outermost wrapper is kept in the span's ``wrapper`` argument.

torch.compile and torch.export: dynamo meets a patch in two ways, and each is handled so that
stepscope adds no graph break and records what runs eagerly:
- inlined while it traces a frame: ``torch.compiler.is_compiling()`` is a constant there, and
  every patch then calls straight through (nothing of stepscope's lands in a graph);
- as a frame of its own, called from eager code while a compiled function runs (after a graph
  break, ``loss.backward()`` calls the backward patch): dynamo would compile that frame too, and
  the compiled frame would skip the recording, so every patch's code is marked to run eagerly
  (``skip_code``: this frame only; the torch code it calls is handled by dynamo as usual).
What runs inside a compiled graph is not seen as spans; a call of a compiled function
(``@torch.compile``) still tells the tracker that a forward ran.

Optimizer steps: ``step(closure)`` runs the closure's forward and backward inside the step, so
the OptimizerStep span is cut around each closure call (the closure's spans are its siblings,
and its forward does not begin a step). A ``GradScaler.step`` that skips the optimizer (inf or
NaN gradients) records an ``OptimizerStepSkipped`` instant. LR schedulers wrap ``step`` on the
optimizer instance; they call the class's step, which is the wrapped one.
"""

import functools
import sys
import threading

import torch

from stepscope import _core

_tls = threading.local()
_installed = False
_eager_codes = []  # the patches' code objects, run eagerly by dynamo (see the module docstring)
_eager_codes_marked = 0


def _runs_eagerly(function):
    """Registers a patch to be run eagerly by dynamo; returns it."""
    _eager_codes.append(function.__code__)
    if "torch._dynamo" in sys.modules:
        mark_eager_codes()
    return function


def mark_eager_codes():
    """Marks the registered patches with dynamo (once dynamo is loaded: importing it costs
    a second, so a job that never compiles never pays for it)."""
    global _eager_codes_marked
    skip_code = getattr(getattr(sys.modules.get("torch._dynamo"), "eval_frame", None), "skip_code", None)
    if skip_code is None:
        return
    for code in _eager_codes[_eager_codes_marked:]:
        skip_code(code)
    _eager_codes_marked = len(_eager_codes)


def _compiling_check():
    compiler = getattr(torch, "compiler", None)
    check = getattr(compiler, "is_compiling", None)  # torch >= 2.3
    if check is None:
        dynamo = getattr(torch, "_dynamo", None)  # torch 2.0 - 2.2 (torch 1.x has neither)
        check = getattr(dynamo, "is_compiling", None)
    return check if check is not None else (lambda: False)


is_compiling = _compiling_check()


def _wrapper_classes():
    classes = [torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel]
    return tuple(classes)


_WRAPPERS = _wrapper_classes()


def unwrap(module):
    """(the user's model inside ``module``, the outermost wrapper's class name or None)."""
    wrapper = None
    while True:
        inner = getattr(module, "_orig_mod", None)  # torch.compile's OptimizedModule
        if inner is None and isinstance(module, _WRAPPERS):
            inner = module.module
        if not isinstance(inner, torch.nn.Module):
            return module, wrapper
        if wrapper is None:
            wrapper = type(module).__name__
        module = inner


def install(step_tracker):
    """Installs the patches once per process; later calls do nothing."""
    global _installed
    if _installed:
        return
    _installed = True
    _patch_module_call(step_tracker)
    _patch_backward(step_tracker)
    _patch_optimizer_init(step_tracker)
    _patch_grad_scaler(step_tracker)
    _patch_compile(step_tracker)


def _patch_module_call(step_tracker):
    original_call = torch.nn.Module.__call__

    def __call__(self, *args, **kwargs):
        if is_compiling() or getattr(_tls, "in_forward", False):
            return original_call(self, *args, **kwargs)
        _tls.in_forward = True
        try:
            model, wrapper = unwrap(self)
            closure_call = getattr(_tls, "closure_call", 0)  # 1, 2, ... inside an optimizer closure
            step_tracker.top_level_forward(model, model.training and torch.is_grad_enabled(),
                                           in_closure=closure_call > 0, first_in_closure=closure_call == 1)
            _core.begin("Forward")
            _core.args({"module": type(model).__name__} if wrapper is None
                       else {"module": type(model).__name__, "wrapper": wrapper})
            try:
                return original_call(self, *args, **kwargs)
            finally:
                _core.end("Forward")
        finally:
            _tls.in_forward = False

    __call__._stepscope_original = original_call
    torch.nn.Module.__call__ = _runs_eagerly(__call__)


def _patch_backward(step_tracker):
    # Tensor.backward() calls torch.autograd.backward through the module attribute, so this one
    # patch sees both spellings.
    original_backward = torch.autograd.backward

    @functools.wraps(original_backward)
    def backward(*args, **kwargs):
        if is_compiling():
            return original_backward(*args, **kwargs)
        step_tracker.backward_ran()
        _core.begin("Backward")
        try:
            return original_backward(*args, **kwargs)
        finally:
            _core.end("Backward")

    torch.autograd.backward = _runs_eagerly(backward)


class _ClosureCutter:
    """Wraps an optimizer closure so that the OptimizerStep span pauses while it runs."""

    __slots__ = ("closure", "optimizer_name", "calls")

    def __init__(self, closure, optimizer_name):
        self.closure = closure
        self.optimizer_name = optimizer_name
        self.calls = 0

    def __call__(self, *args, **kwargs):
        _core.end("OptimizerStep")
        self.calls += 1
        _tls.closure_call = self.calls
        try:
            return self.closure(*args, **kwargs)
        finally:
            _tls.closure_call = 0
            _core.begin("OptimizerStep")
            _core.args({"optimizer": self.optimizer_name, "after_closure": 1})


def wrap_optimizer_class(step_tracker, optimizer_class):
    """Wraps ``optimizer_class.step`` once (each optimizer class has its own step)."""
    step = optimizer_class.step
    if getattr(step, "_stepscope_wrapped", False):
        return

    @functools.wraps(step)
    def wrapped_step(self, *args, **kwargs):
        if is_compiling() or getattr(_tls, "in_optimizer_step", False):
            return step(self, *args, **kwargs)  # traced, or a subclass's step calling its base's
        name = type(self).__name__
        if args and callable(args[0]):
            args = (_ClosureCutter(args[0], name),) + args[1:]
        elif callable(kwargs.get("closure")):
            kwargs["closure"] = _ClosureCutter(kwargs["closure"], name)
        _tls.in_optimizer_step = True
        _core.begin("OptimizerStep")
        _core.args({"optimizer": name})
        try:
            return step(self, *args, **kwargs)
        finally:
            _core.end("OptimizerStep")
            _tls.in_optimizer_step = False
            # Counted once over: a closure's forward may have begun the step it belongs to.
            step_tracker.optimizer_step_ran()

    # functools.wraps copied torch's own "hooked" marker, so torch will not wrap it again.
    wrapped_step._stepscope_wrapped = True
    optimizer_class.step = _runs_eagerly(wrapped_step)


def _patch_optimizer_init(step_tracker):
    original_init = torch.optim.Optimizer.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        wrap_optimizer_class(step_tracker, type(self))

    torch.optim.Optimizer.__init__ = __init__


def _grad_scaler_classes():
    classes = []
    amp = getattr(torch, "amp", None)
    if getattr(amp, "GradScaler", None) is not None:
        classes.append(amp.GradScaler)  # torch >= 2.3; torch.cuda.amp.GradScaler derives from it
    cuda_amp = getattr(getattr(torch, "cuda", None), "amp", None)
    if getattr(cuda_amp, "GradScaler", None) is not None and not any(
            issubclass(cuda_amp.GradScaler, c) for c in classes):
        classes.append(cuda_amp.GradScaler)  # torch 1.x and 2.0 - 2.2
    return classes


def _patch_grad_scaler(step_tracker):
    for scaler_class in _grad_scaler_classes():
        original_step = scaler_class.step
        if getattr(original_step, "_stepscope_wrapped", False):
            continue

        def make(original_step):
            @functools.wraps(original_step)
            def step(self, optimizer, *args, **kwargs):
                if is_compiling() or not self.is_enabled():
                    return original_step(self, optimizer, *args, **kwargs)
                before = step_tracker.optimizer_steps_total()
                result = original_step(self, optimizer, *args, **kwargs)
                if step_tracker.optimizer_steps_total() == before:
                    step_tracker.optimizer_step_skipped()
                    _core.mark("OptimizerStepSkipped")
                    _core.args({"optimizer": type(optimizer).__name__,
                                "reason": "GradScaler found inf or NaN gradients"})
                return result

            step._stepscope_wrapped = True
            return step

        scaler_class.step = _runs_eagerly(make(original_step))


class _CompiledFunctionCall:
    """What torch.compile returns for a function: the compiled function, whose calls tell the
    tracker that a forward ran."""

    def __init__(self, step_tracker, compiled):
        self._step_tracker = step_tracker
        self._compiled = compiled
        functools.update_wrapper(self, compiled)

    def __call__(self, *args, **kwargs):
        if not is_compiling():
            self._step_tracker.compiled_call()
        return self._compiled(*args, **kwargs)

    def __get__(self, instance, owner):
        # A compiled method stays a method when it is a class attribute.
        return self if instance is None else functools.partial(self.__call__, instance)

    def __getattr__(self, name):
        return getattr(self._compiled, name)


def _patch_compile(step_tracker):
    """A function compiled with torch.compile runs its forward inside a graph, where no patch
    sees it: each call of the compiled function tells the tracker that a forward ran."""
    original_compile = getattr(torch, "compile", None)
    if original_compile is None or getattr(original_compile, "_stepscope_wrapped", False):
        return

    def note_calls(compiled):
        if isinstance(compiled, torch.nn.Module) or not callable(compiled):
            return compiled  # an OptimizedModule: its calls go through Module.__call__
        return _CompiledFunctionCall(step_tracker, compiled)

    @functools.wraps(original_compile)
    def compile(model=None, *args, **kwargs):
        compiled = original_compile(model, *args, **kwargs)
        mark_eager_codes()  # torch.compile has loaded dynamo by now
        if model is None:  # @torch.compile(...) with arguments: a decorator comes back
            decorator = compiled
            return functools.wraps(decorator)(lambda fn: note_calls(decorator(fn)))
        return note_calls(compiled)

    compile._stepscope_wrapped = True
    torch.compile = compile


_runs_eagerly(_ClosureCutter.__call__)
_runs_eagerly(_CompiledFunctionCall.__call__)
