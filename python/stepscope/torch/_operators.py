"""The operators detail window: PyTorch's own profiler around the window's steps.

Which profiler is chosen by what this torch can do, asked at run time, never by its version:
- Kineto (``torch.autograd.kineto_available()``, torch 2.x builds and CUDA builds of 1.x):
  ``torch.profiler.profile(activities=[CPU] + [CUDA if torch.cuda.is_available()],
  record_shapes=True)``: operators, shapes, and with CUDA the kernels and memory copies;
- otherwise the legacy autograd profiler (Debian's torch 1.13 has no Kineto):
  ``torch.autograd.profiler.profile(use_kineto=False, record_shapes=True, use_cuda=<CUDA present>)``.

Both hand back ``FunctionEvent`` objects whose ``time_range`` is in microseconds since the
profiler's trace start, which is taken inside ``__enter__``. They are placed on the Unix clock
(the clock of the run's events) so:
- where the profiler's result tells its trace start (``kineto_results.trace_start_ns()``, older
  ``trace_start_us()``: Kineto, and torch 1.13's profiler even without Kineto) and that time lies
  within a second of ``time.time_ns()`` read just before and just after ``__enter__``, it is used
  ("clock": "trace_start"; "clock_error_ns" is how far outside that bracket it fell, usually 0);
- otherwise (older legacy profilers, a trace clock that is not the Unix clock) the midpoint of
  the bracket, with half its width as the error bound ("clock": "bracket").

Events are capped at MAX_EVENTS (the earliest are kept, ``events_capped`` says so); the
per-operator table (``operators``, as key_averages()) always covers every event.

Closing a window (docs/detail-windows.md, "When a window is open"):
- on the training thread only torch's own stop runs (``__exit__``; on torch 1.13-2.0, which
  parse every event inside it, ``stop_profiler`` disables the profiler and leaves the parsing);
- on the writer thread, with Kineto results that can ``save()`` and tell ``trace_start_ns()``
  (torch 2.x): torch saves its Chrome trace (holding the GIL), and ``_core.write_kineto_window``
  (src/importers/kineto/kineto_window_writer.h, without the GIL) writes it as
  ``operators-<pid>-<window>.pt.trace.json.gz`` (for Perfetto, TensorBoard, Holistic Trace
  Analysis) and converts it, in C++, into the document's operators payload. No Python walks the
  events: a Python-bound training loop is not held up by the conversion. Otherwise (the legacy
  profiler, older Kineto) the payload is built here from FunctionEvents, as before.

The script's own profiler (``ProfilerGuard``): stepscope never runs beside it. A window due while
torch's profiler runs is skipped (``WindowSkipped``); a script that starts torch's profiler while
a window is open first closes the window (``complete: false`` with a reason), then starts.
"""

import contextlib
import inspect
import json
import os
import sys
import threading
import time
import weakref

import torch

from stepscope import _core
from stepscope.torch import _detail_store, _gpu_tracing, _windows

MAX_EVENTS = 200_000
# Above every level Kineto logs at (its USDT lines included).
KINETO_QUIET_LOG_LEVEL = "6"
# A trace start this far outside the bracket is not on the Unix clock (e.g. a monotonic one).
_MAX_SKEW_NS = 1_000_000_000
USER_PROFILER_RUNNING = "torch's profiler is already running in this process (the script's own)"
USER_PROFILER_STARTED = "the script started torch's profiler"


def _kineto_available():
    check = getattr(torch.autograd, "kineto_available", None)
    try:
        return bool(check()) if check is not None else False
    except Exception:  # noqa: BLE001 -- an odd build: fall back to the legacy profiler
        return False


def choose_profiler(kineto=None, cuda=None):
    """("kineto" | "legacy", whether CUDA is profiled, a factory of the profiler context)."""
    kineto = _kineto_available() if kineto is None else kineto
    cuda = torch.cuda.is_available() if cuda is None else cuda
    if kineto and hasattr(torch, "profiler") and hasattr(torch.profiler, "profile"):
        activities = [torch.profiler.ProfilerActivity.CPU]
        if cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        return "kineto", cuda, lambda: torch.profiler.profile(activities=activities, record_shapes=True)
    legacy = torch.autograd.profiler.profile
    parameters = inspect.signature(legacy).parameters
    kwargs = {"record_shapes": True}
    if "use_kineto" in parameters:
        kwargs["use_kineto"] = False
    if cuda and "use_cuda" in parameters:
        kwargs["use_cuda"] = True
    return "legacy", cuda, lambda: legacy(**kwargs)


def _first_attribute(obj, names, default=0.0):
    """The first of ``names`` that ``obj`` has (device_time_total in torch >= 2.4, cuda_time_total
    before)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _us_to_ns(value_us):
    return int(round(float(value_us) * 1000.0))


def _self_ns(value_us):
    """A self time: torch computes it as total minus the children's totals, which the profiler's
    microsecond rounding can push a few µs below zero; floored at 0."""
    return max(0, _us_to_ns(value_us))


def _device_name(event):
    device_type = getattr(event, "device_type", None)
    name = getattr(device_type, "name", None) or str(device_type or "CPU")
    return name.rsplit(".", 1)[-1].lower()


def _shapes(event):
    shapes = getattr(event, "input_shapes", None)
    if not shapes:
        return []
    return [list(shape) if isinstance(shape, (list, tuple)) else [] for shape in shapes]


def profiler_start_ns(profiler, before_ns, after_ns):
    """(Unix ns of the profiler's zero, clock name, error bound in ns). See the module doc."""
    inner = getattr(profiler, "profiler", None) or profiler  # torch.profiler.profile wraps one
    results = getattr(inner, "kineto_results", None)
    if results is not None:
        for attribute, scale in (("trace_start_ns", 1), ("trace_start_us", 1000)):
            method = getattr(results, attribute, None)
            if method is None:
                continue
            try:
                start = int(method()) * scale
            except Exception:  # noqa: BLE001 -- fall back to the bracket below
                continue
            if before_ns - _MAX_SKEW_NS <= start <= after_ns + _MAX_SKEW_NS:
                # The trace starts inside __enter__: outside the bracket is clock disagreement.
                error = max(0, before_ns - start, start - after_ns)
                return start, "trace_start", error
    return (before_ns + after_ns) // 2, "bracket", (after_ns - before_ns + 1) // 2


def events_payload(events, start_ns, max_events=MAX_EVENTS):
    """The ``events`` (host operators) and ``device_events`` (kernels, memory copies and sets
    that Kineto reports as events of their own) of a window, on the Unix clock."""
    host, device = [], []
    for event in events:
        time_range = event.time_range
        begin = start_ns + _us_to_ns(time_range.start)
        end = start_ns + _us_to_ns(time_range.end)
        device_type = _device_name(event)
        if device_type != "cpu":
            device.append({"name": event.name, "device_type": device_type,
                           "device": int(getattr(event, "device_index", 0) or 0),
                           "start_ns": begin, "end_ns": end})
            continue
        record = {
            "name": event.name,
            "tid": int(getattr(event, "thread", 0) or 0),
            "start_ns": begin,
            "end_ns": end,
            "cpu_ns": _us_to_ns(getattr(event, "cpu_time_total", 0) or 0),
            "self_cpu_ns": _self_ns(getattr(event, "self_cpu_time_total", 0) or 0),
            "shapes": _shapes(event),
        }
        if getattr(event, "is_async", False):
            record["async"] = True
        device_total = _first_attribute(event, ("device_time_total", "cuda_time_total"))
        kernels = getattr(event, "kernels", None) or []
        if device_total or kernels:
            record["device_ns"] = _us_to_ns(device_total)
            record["self_device_ns"] = _self_ns(
                _first_attribute(event, ("self_device_time_total", "self_cuda_time_total")))
            record["kernels"] = [{"name": k.name, "device": int(k.device), "duration_ns": _us_to_ns(k.duration)}
                                 for k in kernels]
        host.append(record)
    host.sort(key=lambda e: (e["start_ns"], -e["end_ns"]))
    device.sort(key=lambda e: e["start_ns"])
    return {
        "events": host[:max_events],
        "events_total": len(host),
        "events_capped": len(host) > max_events,
        "device_events": device[:max_events],
        "device_events_total": len(device),
        "device_events_capped": len(device) > max_events,
    }


def operators_table(averages):
    """key_averages() as rows, by self CPU time, largest first."""
    rows = []
    for average in averages:
        row = {
            "name": average.key,
            "calls": int(average.count),
            "cpu_ns": _us_to_ns(average.cpu_time_total),
            "self_cpu_ns": _self_ns(average.self_cpu_time_total),
        }
        device_total = _first_attribute(average, ("device_time_total", "cuda_time_total"))
        if device_total:
            row["device_ns"] = _us_to_ns(device_total)
            row["self_device_ns"] = _self_ns(
                _first_attribute(average, ("self_device_time_total", "self_cuda_time_total")))
        rows.append(row)
    rows.sort(key=lambda r: (-r["self_cpu_ns"], r["name"]))
    return rows


def _parse_later_possible(profiler):
    """Whether ``profiler`` (an autograd profile) parses its results inside ``__exit__`` the way
    torch 1.13 to 2.0 do: ``kineto_results = _disable_profiler()``, then ``_parse_kineto_results``
    and ``EventList(...)._build_tree()``. Those versions spend most of ``__exit__`` (milliseconds
    to seconds: per event Python work) in the parsing, on the training thread. Newer torch parses
    lazily on the first ``function_events`` access, and an unknown layout stops the usual way."""
    return (type(profiler).__module__ == "torch.autograd.profiler"
            and hasattr(profiler, "_parse_kineto_results")
            and not hasattr(profiler, "_ensure_function_events")
            and hasattr(torch.autograd.profiler, "_disable_profiler")
            and hasattr(torch.autograd.profiler, "EventList")
            and getattr(profiler, "enabled", False)
            and getattr(profiler, "entered", False))


def stop_profiler(profiler):
    """Stops collecting on the calling thread (the thread that started it: torch keeps the
    profiler's state per thread) and returns a function, to be called on any thread, that
    finishes the parsing and returns the profiler. See ``_parse_later_possible``."""
    inner = getattr(profiler, "profiler", None)  # torch.profiler.profile wraps an autograd profile
    autograd_profile = inner if inner is not None else profiler
    if not _parse_later_possible(autograd_profile) or getattr(autograd_profile, "use_cuda", False):
        # With CUDA, __exit__ also synchronizes the device: stay on the documented path.
        profiler.__exit__(None, None, None)
        return lambda: profiler
    autograd_profile.kineto_results = torch.autograd.profiler._disable_profiler()
    if inner is not None:
        profiler.profiler = None  # as stop_trace leaves it; the wrapper is done

    def parse():
        parsed = autograd_profile._parse_kineto_results(autograd_profile.kineto_results)
        events = torch.autograd.profiler.EventList(
            parsed, use_cuda=autograd_profile.use_cuda, profile_memory=autograd_profile.profile_memory,
            with_flops=autograd_profile.with_flops)
        events._build_tree()
        autograd_profile.function_events = events
        return autograd_profile

    return parse


def _kineto_results(profiler):
    """The results of a stopped profiler (torch.profiler.profile wraps an autograd profile)."""
    inner = getattr(profiler, "profiler", None) or profiler
    return getattr(inner, "kineto_results", None)


def _native_write_possible(mode, results):
    """Whether the window can be written from torch's saved trace (torch 2.x Kineto results)."""
    return (mode == "kineto" and results is not None and callable(getattr(results, "save", None))
            and callable(getattr(results, "trace_start_ns", None)) and hasattr(_core, "write_kineto_window"))


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


class KinetoWindow(_detail_store.SelfWrittenWindow):
    """What the writer thread does with a window torch 2.x's Kineto recorded: see the module
    docstring. ``write(document)`` returns (document path, compressed bytes) like
    ``_detail_store.write_window``."""

    def __init__(self, results, metadata, profiler_clock, max_events):
        self._results = results
        self._metadata = metadata
        self._clock = profiler_clock  # (trace start on the trace clock, on the Unix clock)
        self._max_events = max_events

    def write(self, document):
        directory = _detail_store.detail_dir()
        if directory is None:
            return None, 0
        began = time.perf_counter_ns()
        kind, pid, index = document["kind"], document["pid"], document["window"]["index"]
        document_path = os.path.join(directory, _detail_store.window_file_name(kind, pid, index))
        trace_name = _detail_store.trace_file_name(kind, pid, index)
        saved = os.path.join(directory, f".{kind}-{pid}-{index}.trace.json.tmp")
        document.setdefault("format_version", _detail_store.FORMAT_VERSION)
        document.update(self._metadata, trace_file=trace_name)
        # torch's own export (export_chrome_trace is this save). It holds the GIL (~5 µs per
        # event), as freeing torch's results does (~3 µs per event, the next line): what a
        # Python-bound training loop still waits for; all that follows runs without the GIL.
        try:
            self._results.save(saved)
        except BaseException:
            if os.path.exists(saved):
                os.unlink(saved)
            raise
        self._results = None
        trace_start_ns, unix_start_ns = self._clock
        written = _core.write_kineto_window(
            saved, os.path.join(directory, trace_name), document_path,
            json.dumps(document, separators=(",", ":"), allow_nan=False), trace_start_ns, unix_start_ns,
            self._max_events, rank=_env_int("RANK", 0), world_size=_env_int("WORLD_SIZE", 1),
            elapsed_ns=time.perf_counter_ns() - began)
        return document_path, written["document_bytes"]


class OperatorsCollector:
    """Runs the chosen torch profiler from start() to stop(); see the module docstring.

    stop() only stops collecting (on the training thread) and returns a function that converts
    the events off that thread (the window scheduler's writer thread calls it): a dict, or a
    KinetoWindow that writes its files itself."""

    def __init__(self, max_events=MAX_EVENTS, choice=None):
        self._max_events = max_events
        self._mode, self._cuda, self._factory = choice or choose_profiler()
        self._profiler = None
        self._before_ns = self._after_ns = 0

    def start(self):
        reason = GUARD.busy_reason()
        if reason is not None:
            raise _windows.WindowSkipped(reason)
        # Kineto logs every start and stop (and, on a machine without a GPU, a CUDA error) to the
        # job's stderr; it reads the level when it first starts, so a user's setting wins.
        os.environ.setdefault("KINETO_LOG_LEVEL", KINETO_QUIET_LOG_LEVEL)
        profiler = self._factory()
        self._before_ns = time.time_ns()
        with GUARD.own_start():
            profiler.__enter__()
        self._after_ns = time.time_ns()
        self._profiler = profiler

    def set_preempt_handler(self, handler):
        """``handler(reason)`` closes this window; called when the script starts torch's profiler."""
        GUARD.preempt_handler = handler

    def step_ended(self, phase, number, more):
        pass

    def stop(self):
        GUARD.preempt_handler = None
        profiler, self._profiler = self._profiler, None
        finish_parsing = stop_profiler(profiler)
        before_ns, after_ns = self._before_ns, self._after_ns

        def metadata(start_ns, clock, error_ns):
            return {
                "profiler": self._mode,
                "torch_version": torch.__version__,
                "cuda": bool(self._cuda),
                "clock": clock,
                "clock_error_ns": error_ns,
                "profiler_start_ns": start_ns,
            }

        def payload():
            results = _kineto_results(profiler)
            if _native_write_possible(self._mode, results):
                start_ns, clock, error_ns = profiler_start_ns(profiler, before_ns, after_ns)
                # The KinetoWindow holds the only reference from here on, and drops it once torch
                # saved the trace: freeing torch's events holds the GIL (~2 µs per event).
                inner = getattr(profiler, "profiler", None) or profiler
                inner.kineto_results = None
                return KinetoWindow(results, metadata(start_ns, clock, error_ns),
                                    (int(results.trace_start_ns()), start_ns), self._max_events)
            stopped = finish_parsing()
            events_of = getattr(stopped, "events", None)
            events = events_of() if callable(events_of) else stopped.function_events
            result = metadata(*profiler_start_ns(stopped, before_ns, after_ns))
            result.update(events_payload(events or [], result["profiler_start_ns"], self._max_events))
            result["operators"] = operators_table(stopped.key_averages()) if events else []
            return result

        return payload

    def discard(self):
        GUARD.preempt_handler = None
        profiler, self._profiler = self._profiler, None
        if profiler is not None:
            profiler.__exit__(None, None, None)

    def abandon_in_child(self):
        # A forked child inherited an enabled profiler (thread-local callbacks of the forking
        # thread): stop it so the worker does not collect for nobody.
        self.discard()


_GPU_YIELDED = "_stepscope_gpu_tracing_yielded"


class ProfilerGuard:
    """Keeps stepscope's operator windows out of the way of the script's own torch profiler.

    Installed once (``install``) by wrapping, on the classes, the methods through which every
    torch profiler starts: ``torch.autograd.profiler.profile._prepare_trace`` (its ``__enter__``
    and ``torch.profiler.profile``, schedules included, start there, before Kineto is touched),
    ``torch.autograd.profiler_legacy.profile._start_trace``, and ``__enter__`` of ``emit_nvtx``
    and ``emit_itt``; and ``__exit__`` of the first two, to know when a script's profiler ended.
    Starts that stepscope makes itself (``own_start``) pass straight through.

    - ``busy_reason()``: why a window cannot start now (a script's profiler has started and not
      ended, or the profiler is enabled on this thread), or None;
    - a script's start while a window is open calls ``preempt_handler(reason)`` first, which
      closes the window on the training thread. Started on another thread, the window cannot be
      stopped from there (torch keeps profiler state per thread): a line on stderr, and the
      script's profiler starts beside it.
    """

    def __init__(self):
        self.preempt_handler = None
        self._owning_thread = None  # the thread inside own_start()
        self._sessions = weakref.WeakSet()  # the script's profilers between start and exit
        self._installed = False
        self._warned_other_thread = False

    @contextlib.contextmanager
    def own_start(self):
        """Around stepscope's own start of its profiler: the guard lets it through."""
        self._owning_thread = threading.get_ident()
        try:
            yield
        finally:
            self._owning_thread = None

    def busy_reason(self):
        if len(self._sessions) > 0:
            return USER_PROFILER_RUNNING
        enabled = getattr(torch._C._autograd, "_profiler_enabled", None)
        try:
            if enabled is not None and enabled():
                return USER_PROFILER_RUNNING
        except Exception:  # noqa: BLE001 -- an odd build: rely on the other checks
            pass
        if getattr(torch.autograd.profiler, "_is_profiler_enabled", False) is True:  # torch 2.x, any thread
            return USER_PROFILER_RUNNING
        return None

    def _starting(self, profiler):
        if self._owning_thread is not None and self._owning_thread == threading.get_ident():
            return
        try:
            self._sessions.add(profiler)
        except TypeError:  # not weak-referenceable: only the enabled checks see it
            pass
        handler = self.preempt_handler
        if handler is not None and not handler(USER_PROFILER_STARTED) and not self._warned_other_thread:
            self._warned_other_thread = True
            sys.stderr.write("stepscope: torch's profiler started on another thread while stepscope's "
                             "operators window is open on the training thread; the two may disturb each other "
                             "(turn the window off with --no-detail or a [[detail]] table)\n")

    def _ended(self, profiler):
        self._sessions.discard(profiler)

    # Every torch profiler session, stepscope's own included, takes CUPTI from stepscope's GPU
    # tracer while it runs (_gpu_tracing); each session gives it back once, at its exit.
    def _yield_gpu_tracing(self, profiler):
        if getattr(profiler, _GPU_YIELDED, False):
            return
        try:
            setattr(profiler, _GPU_YIELDED, True)
        except AttributeError:  # a profiler with __slots__: it cannot be matched at exit
            return
        _gpu_tracing.yield_to("torch profiler started")

    def _take_back_gpu_tracing(self, profiler):
        if getattr(profiler, _GPU_YIELDED, False):
            setattr(profiler, _GPU_YIELDED, False)
            _gpu_tracing.take_back("torch profiler ended")

    def install(self):
        if self._installed:
            return
        self._installed = True
        autograd = torch.autograd.profiler
        legacy = getattr(torch.autograd, "profiler_legacy", None)
        starts = [(autograd.profile, "_prepare_trace"), (getattr(legacy, "profile", None), "_start_trace")]
        starts += [(getattr(autograd, name, None), "__enter__") for name in ("emit_nvtx", "emit_itt")]
        for cls, name in starts:
            if cls is not None and callable(getattr(cls, name, None)):
                setattr(cls, name, self._wrap_start(getattr(cls, name)))
        for cls in (autograd.profile, getattr(legacy, "profile", None)):
            if cls is not None and callable(getattr(cls, "__exit__", None)):
                setattr(cls, "__exit__", self._wrap_exit(cls.__exit__))

    def _wrap_start(self, original):
        guard = self

        def start(profiler, *args, **kwargs):
            if getattr(profiler, "enabled", True):
                guard._starting(profiler)
                guard._yield_gpu_tracing(profiler)
            return original(profiler, *args, **kwargs)

        start.__wrapped__ = original
        start.__name__ = getattr(original, "__name__", "start")
        start.__doc__ = getattr(original, "__doc__", None)
        return start

    def _wrap_exit(self, original):
        guard = self

        def exit_(profiler, *args, **kwargs):
            try:
                return original(profiler, *args, **kwargs)
            finally:
                guard._ended(profiler)
                guard._take_back_gpu_tracing(profiler)

        exit_.__wrapped__ = original
        exit_.__name__ = "__exit__"
        exit_.__doc__ = getattr(original, "__doc__", None)
        return exit_


GUARD = ProfilerGuard()
# Imported when an operators window is configured (_windows._collector_module): from then on a
# script's own profiler is seen starting and ending.
GUARD.install()
