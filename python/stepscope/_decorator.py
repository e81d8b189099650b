"""The decorator form of :func:`stepscope.annotate` (``@annotate("name")`` and ``@annotate``).

The native ``Annotation`` type hands functions to :func:`decorate`; keeping the wrapper in
Python lets :func:`functools.wraps` and method binding behave exactly as for any decorator.
functools is imported when the first function is decorated, not with the package: ``import
stepscope`` stays cheap for every process of a job (benchmarks/import_time_benchmark.py).
"""

from stepscope import _core


def decorate(name, func):
    """Returns ``func`` wrapped so that each call is a span called ``name``.

    Args:
        name: the span name, or None to use the function's ``__qualname__``.
        func: the function (or other callable, not a class) to wrap. For a coroutine
            function the span covers creating the coroutine, not awaiting it; annotate the
            awaited code with ``with stepscope.annotate(...)`` inside it instead.
    """
    import functools

    if isinstance(func, type):  # what inspect.isclass tests, without importing inspect
        raise TypeError(
            "stepscope.annotate decorates functions and methods, not classes; "
            f"annotate {func.__qualname__}'s methods instead")
    if name is None:
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    annotation = _core.Annotation

    # A new Annotation per call: each one ends only the span it began, also across threads.
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with annotation(name):
            return func(*args, **kwargs)

    return wrapper
