"""Detail windows: when the operator profiler, the Python profiler and the per-sample data-loader
timings run (docs/detail-windows.md; the contract is docs/pytorch.md §Detail windows).

A window is ``(start_step, num_steps)`` counting steps of its phase (TRAIN unless given), or
``(start_unix_time, duration_s)``. The windows come from ``stepscope._config.load_run_config()``
(keyword argument > run config > defaults) and from control files (``stepscope ctl``). The
``WindowScheduler`` is a listener of the step tracker (``_steps.StepTracker.listeners``) and
decides at step boundaries only:

- a step window opens at the begin of the first step of its phase numbered >= start_step (the
  tracker's predicted phase and number) and closes at the end of its num_steps-th step of that
  phase. Data-loader windows open one boundary earlier, at the end of the step before, so that
  their first step's wait for its batch is inside (without workers the batch is fetched there).
  If the first step to end inside a window is of another phase (a wrong prediction, or an
  evaluation loop in between), the window is discarded and waits for its phase again;
- a time window opens at the first step boundary (begin or end) in [start, start + duration)
  and closes at the first boundary at or after start + duration (or at exit). Boundaries and
  not a timer thread because the operator profiler and cProfile only see the thread that turns
  them on, and that must be the training loop's thread.

One window of a kind is open at a time; a due window whose kind is busy opens at the first
boundary after the other closed. Outside windows a step costs the scheduler two comparisons per
boundary: the step number against the next start of its phase (at a step's end: against the
next start of a data-loader window), and one flag that is set only while a window is open, a
time window is pending or a control file has arrived. Control files are looked
for by a thread (one stat() a second, ``_config.ControlWatcher``) that only sets that flag; they
are applied on the training thread at the next boundary and recorded as ``Control`` instants.

Each window records a ``DetailWindow:<kind>`` span (args window, first_step, last_step, steps)
in the process's stream, written when the window closes with the opening and closing
timestamps (``_core.span_at``): windows of different kinds overlap without nesting, and a span
kept open on the training thread would cut short any span the script opened meanwhile.

Closing a window stops its collector on the training thread (a ``DetailWindowStop`` span there,
between two steps: the step tracker begins the next step after it) and leaves converting and
writing to a writer thread (``_window_writer``; a ``DetailWindowWrite`` span on that thread).

A collector may refuse to start (``WindowSkipped``: the operator profiler while the script runs
torch's own): the window is dropped, with a zero-length ``DetailWindow:<kind>`` span (args
window, skipped, reason) and one line on stderr per process. A collector that gets a
``set_preempt_handler`` can close its window early from the training thread (the script starting
torch's profiler): ``complete: false`` and ``reason`` in the document and the span.

Threading: the scheduler runs on the training loop's thread (the tracker's), the GIL serialises
its state; the control thread hands over controls under a lock. Forked children (DataLoader
workers) drop the parent's windows.
"""

import importlib
import math
import multiprocessing
import os
import sys
import threading
import time

from stepscope import _config, _core
from stepscope.torch import _detail_store, _window_writer

KINDS = _config.KINDS
PHASES = _config.PHASES
PROFILERS = _config.PROFILERS
TIMERS = _config.TIMERS
CONTROL_POLL_INTERVAL_S = 1.0
_TRAIN = PHASES.index("TRAIN")
# stepscope's own work when a window closes: on the training thread, and on the writer thread.
STOP_SPAN = "DetailWindowStop"
WRITE_SPAN = "DetailWindowWrite"


def _warn(message):
    sys.stderr.write(f"stepscope: {message}\n")


class WindowSkipped(Exception):
    """Raised by a collector's start() when its window must not run now; the message says why."""


class WindowSpec:
    """One validated window. ``phase`` is a phase code (0..3): TRAIN unless given (time windows
    count steps of it in their ``steps`` field). ``source`` says where the window came from."""

    __slots__ = ("kind", "start_step", "num_steps", "start_unix_time", "duration_s", "phase", "profiler",
                 "timer", "source")

    def __init__(self, kind, start_step=None, num_steps=None, start_unix_time=None, duration_s=None,
                 phase=_TRAIN, profiler=None, timer=None, source="keyword argument"):
        self.kind = kind
        self.start_step = start_step
        self.num_steps = num_steps
        self.start_unix_time = start_unix_time
        self.duration_s = duration_s
        self.phase = phase
        self.profiler = profiler
        self.timer = timer
        self.source = source

    @classmethod
    def from_json(cls, window, origin, source):
        """From a window dict of the normalised form (src/launcher/detail_window.h), validated by
        ``_config.normalize_window``: ValueError, one line naming the key, when invalid."""
        w = _config.normalize_window(window, origin)
        return cls(w["kind"], w["start_step"], w["num_steps"], w["start_unix_time"], w["duration_s"],
                   PHASES.index(w["phase"] or "TRAIN"), w["profiler"], w["timer"], source)

    @property
    def is_step_window(self):
        return self.start_step is not None

    @property
    def is_time_window(self):
        return self.start_unix_time is not None

    @property
    def end_unix_time(self):
        return self.start_unix_time + self.duration_s

    @property
    def opens_early(self):
        # See the module docstring: a data-loader window includes its first step's data wait.
        return self.kind == "dataloader" and self.is_step_window and self.start_step > 0

    def to_json(self):
        """The normalised form, plus where the window came from."""
        return {"kind": self.kind, "start_step": self.start_step, "num_steps": self.num_steps,
                "start_unix_time": self.start_unix_time, "duration_s": self.duration_s,
                "phase": PHASES[self.phase], "profiler": self.profiler, "timer": self.timer,
                "source": self.source}

    def describe(self):
        if self.is_step_window:
            last = self.start_step + self.num_steps - 1
            steps = f"step {self.start_step}" if last == self.start_step else f"steps {self.start_step}-{last}"
            return f"{self.kind} {PHASES[self.phase]} {steps}"
        if self.is_time_window:
            return f"{self.kind} from {self.start_unix_time:.3f} for {self.duration_s:g} s"
        return f"{self.kind}, {self.source}"

    def __repr__(self):
        return f"WindowSpec({self.to_json()!r})"


def resolve_windows(detail=None):
    """The windows of this process: ``detail`` (keyword argument) if given, else the run config's
    (STEPSCOPE_CONFIG), else the defaults. A given list replaces the others entirely
    (``detail=[]`` turns every window off). ValueError for an invalid window."""
    config = _config.load_run_config(detail=detail)
    source = config.get("sources", {}).get("detail", "config file")
    return [WindowSpec.from_json(w, f"detail window {i + 1}", source) for i, w in enumerate(config["detail"])]


_COLLECTOR_MODULES = {"operators": "_operators", "python": "_python_profile", "dataloader": "_dataloader_detail",
                      "gpu": "_gpu_tracing"}


def _collector_module(kind):
    """The module of a kind's collector, imported when a window of the kind is configured (a
    process without such windows never loads it), so that opening the window imports nothing."""
    return importlib.import_module(f"stepscope.torch.{_COLLECTOR_MODULES[kind]}")


def _make_collector(spec, index):
    module = _collector_module(spec.kind)
    if spec.kind == "operators":
        return module.OperatorsCollector()
    if spec.kind == "python":
        if spec.profiler == "sampling":
            return module.SamplingCollector()
        return module.CProfileCollector(spec.timer or "total_time")
    if spec.kind == "gpu":
        return module.EverythingWindowCollector()
    return module.DataLoaderCollector(index)


class _OpenWindow:
    """A window while it collects."""

    __slots__ = ("index", "spec", "collector", "span", "start_ns", "start_ticks", "counted", "other_steps",
                 "explicit", "thread", "written")

    def __init__(self, index, spec, collector, explicit):
        self.index = index
        self.spec = spec
        self.collector = collector
        self.span = f"DetailWindow:{spec.kind}"
        self.start_ns = 0
        self.start_ticks = 0
        self.counted = []      # numbers of the steps of spec.phase that ended inside
        self.other_steps = 0   # steps of other phases that ended inside
        self.explicit = explicit
        self.thread = threading.get_ident()  # the thread that opened it, the only one that can stop it
        self.written = None    # (path, bytes) once an explicit window is written


class _ControlPoller:
    """A daemon thread that polls ``<node>/control`` and hands new controls to the scheduler."""

    def __init__(self, scheduler, watcher, interval_s=CONTROL_POLL_INTERVAL_S):
        self._scheduler = scheduler
        self._watcher = watcher
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stepscope-control", daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self._interval_s):
            try:
                controls = [c for c in self._watcher.poll() if c.get("detail") is not None]
            except Exception as error:  # noqa: BLE001 -- a bad control must not end the polling
                _warn(f"control files not read: {type(error).__name__}: {error}")
                continue
            if controls:
                self._scheduler.hand_over_controls(controls)

    def stop(self):
        self._stop.set()


class WindowScheduler:
    """Opens and closes the windows of one process. See the module docstring for the rules."""

    def __init__(self, specs=(), writer=None):
        self._writer = writer if writer is not None else _window_writer.BackgroundWriter()
        self._pending = []  # [(index, spec)] not open yet, in index order
        self._open = {}     # kind -> _OpenWindow
        self._next_index = 0
        self._opened_any = False
        self.configured = False  # True once the configured windows were given (replace_windows)
        self._next_step = [math.inf] * len(PHASES)
        self._next_early = [math.inf] * len(PHASES)
        self._slow = False
        self._controls = []  # handed over by the control thread, applied at the next boundary
        self._controls_lock = threading.Lock()
        self._poller = None
        self.written = []   # [(path, compressed bytes)] of the files written
        self._skip_warned = False
        for spec in specs:
            self._add(spec)
        self._refresh()
        os.register_at_fork(after_in_child=self._forget_after_fork)

    # Configuration -------------------------------------------------------------------------

    def _add(self, spec):
        _collector_module(spec.kind)
        index = self._next_index
        self._next_index += 1
        self._pending.append((index, spec))
        return index

    def replace_windows(self, specs):
        """Replaces every pending window (``instrument(detail=...)`` after the automatic
        ``instrument()``). Indices restart at 0 while no window has opened yet."""
        self._pending = []
        if not self._opened_any:
            self._next_index = 0
        for spec in specs:
            self._add(spec)
        self.configured = True
        self._refresh()

    def add_windows(self, specs, replace_kinds=True, source="control"):
        """Adds windows (WindowSpec or normalised dicts). With ``replace_kinds`` the pending
        windows of each kind in ``specs`` are dropped first, as a control file means (windows
        that are open run to their end). Returns the new windows' indices."""
        specs = [s if isinstance(s, WindowSpec) else WindowSpec.from_json(s, f"detail window {i + 1}", source)
                 for i, s in enumerate(specs)]
        if replace_kinds:
            kinds = {spec.kind for spec in specs}
            self._pending = [(i, s) for i, s in self._pending if s.kind not in kinds]
        indices = [self._add(spec) for spec in specs]
        self._refresh()
        return indices

    def pending(self):
        return list(self._pending)

    def watch_controls(self, watcher, interval_s=CONTROL_POLL_INTERVAL_S):
        """Starts the control thread (once)."""
        if self._poller is None:
            self._poller = _ControlPoller(self, watcher, interval_s)

    def hand_over_controls(self, controls):
        """Called by the control thread: queues controls for the next step boundary."""
        with self._controls_lock:
            self._controls.extend(controls)
            self._slow = True

    def _apply_controls(self):
        with self._controls_lock:
            controls, self._controls = self._controls, []
        for control in controls:
            try:
                indices = self.add_windows(control["detail"], replace_kinds=True)
            except ValueError as error:
                _warn(f"control {control.get('sequence')} not applied: {error}")
                continue
            _config.record_applied(control, {"detail": control["detail"], "windows": indices})

    def _refresh(self):
        """Recomputes the values that keep the per-step cost at two comparisons."""
        next_step = [math.inf] * len(PHASES)
        next_early = [math.inf] * len(PHASES)
        slow = False
        for _, spec in self._pending:
            if spec.is_step_window:
                next_step[spec.phase] = min(next_step[spec.phase], spec.start_step)
                if spec.opens_early:
                    next_early[spec.phase] = min(next_early[spec.phase], spec.start_step - 1)
            else:
                slow = True
        if self._open:
            slow = True  # open windows count steps, and time windows watch the clock
        self._next_step = next_step
        self._next_early = next_early
        # Under the lock: the control thread may hand over a control meanwhile and set _slow.
        with self._controls_lock:
            self._slow = slow or bool(self._controls)

    # Step tracker listener -----------------------------------------------------------------

    def on_step_begin(self, predicted_phase, predicted_number):
        if predicted_number >= self._next_step[predicted_phase] or self._slow:
            self._step_begin(predicted_phase, predicted_number)

    def on_step_end(self, phase, number):
        """True when a window closed here (the tracker then begins the next step after it)."""
        if self._slow or number >= self._next_early[phase]:
            return self._step_end(phase, number)
        return False

    def _step_begin(self, phase, number):
        if self._controls:
            self._apply_controls()
        now = time.time()
        for window in list(self._open.values()):
            if window.spec.is_time_window and now >= window.spec.end_unix_time:
                self._close(window, complete=True)
        self._open_due(now, lambda spec: spec.phase == phase and number >= spec.start_step)
        self._refresh()

    def _step_end(self, phase, number):
        if self._controls:
            self._apply_controls()
        now = time.time()
        closed = False
        for window in list(self._open.values()):
            spec = window.spec
            if phase == spec.phase:
                window.counted.append(number)
            elif spec.is_step_window and not window.explicit and not window.counted and not window.other_steps:
                self._discard(window)  # it opened for a step of its phase, and this was not one
                continue
            else:
                window.other_steps += 1
            if window.explicit:
                done = False
            elif spec.is_step_window:
                done = len(window.counted) >= spec.num_steps
            else:
                done = now >= spec.end_unix_time
            try:
                window.collector.step_ended(phase, number, not done)
            except Exception as error:  # noqa: BLE001 -- never into the training loop
                self._fail(window, error)
                continue
            if done:
                self._close(window, complete=True)
                closed = True
        # Windows that open at a step end, so that the next step's wait for its batch is inside:
        # due time windows, and data-loader windows whose first step is next.
        self._open_due(now, lambda spec: spec.opens_early and spec.phase == phase and number + 1 >= spec.start_step)
        self._refresh()
        return closed

    def _open_due(self, now, step_window_due):
        """Opens the pending windows that are due: step windows for which `step_window_due(spec)`
        holds, time windows whose start has come; one open window per kind."""
        for entry in list(self._pending):
            index, spec = entry
            if spec.kind in self._open:
                continue
            if spec.is_step_window:
                if not step_window_due(spec):
                    continue
            elif not self._time_window_due(entry, now):
                continue
            self._pending.remove(entry)
            self._open_window(index, spec)

    def _time_window_due(self, entry, now):
        index, spec = entry
        if now < spec.start_unix_time:
            return False
        if now >= spec.end_unix_time:
            # Its whole interval passed between two step boundaries (or before the first).
            self._pending.remove(entry)
            _warn(f"detail window {index} ({spec.describe()}) passed with no step boundary inside it; skipped")
            return False
        return True

    # Opening and closing -------------------------------------------------------------------

    def _open_window(self, index, spec, explicit=False, skipped_out=None):
        collector = _make_collector(spec, index)
        window = _OpenWindow(index, spec, collector, explicit)
        self._opened_any = True
        window.start_ns = time.time_ns()
        window.start_ticks = _core.now()
        try:
            collector.start()
        except WindowSkipped as skipped:
            now = _core.now()
            _core.span_at(window.span, window.start_ticks, now)
            _core.args({"window": index, "skipped": 1, "reason": str(skipped)})
            if not self._skip_warned:
                self._skip_warned = True
                _warn(f"detail window {index} ({spec.describe()}) skipped: {skipped}; stepscope's "
                      f"{spec.kind} windows are skipped while it runs")
            if skipped_out is not None:
                skipped_out.append(str(skipped))
            return None
        except Exception as error:  # a profiler that cannot start must not stop the job
            _core.span_at(window.span, window.start_ticks, _core.now())
            _core.args({"window": index, "error": f"{type(error).__name__}: {error}"})
            _warn(f"detail window {index} ({spec.describe()}) could not start: {type(error).__name__}: {error}")
            return None
        self._open[spec.kind] = window
        set_preempt_handler = getattr(collector, "set_preempt_handler", None)
        if set_preempt_handler is not None:
            set_preempt_handler(lambda reason: self._preempt(window, reason))
        return window

    def _preempt(self, window, reason):
        """Closes `window` early (complete: false, `reason`); True when it is closed afterwards.
        Only its own thread can stop it: False when called from another."""
        if self._open.get(window.spec.kind) is not window:
            return True
        if threading.get_ident() != window.thread:
            return False
        self._close(window, complete=False, reason=reason)
        self._refresh()
        return True

    def _discard(self, window):
        """Drops a window opened for a mispredicted step; it waits for its phase again."""
        del self._open[window.spec.kind]
        try:
            window.collector.discard()
        except Exception as error:  # noqa: BLE001 -- never into the training loop
            _warn(f"detail window {window.index} ({window.spec.describe()}): {type(error).__name__}: {error}")
        _core.span_at(window.span, window.start_ticks, _core.now())
        _core.args({"window": window.index, "discarded": 1})
        self._pending.append((window.index, window.spec))
        self._pending.sort(key=lambda entry: entry[0])

    def _fail(self, window, error):
        """Ends a window whose collector failed, without a file."""
        del self._open[window.spec.kind]
        message = f"{type(error).__name__}: {error}"
        _warn(f"detail window {window.index} ({window.spec.describe()}) failed: {message}")
        try:
            window.collector.discard()
        except Exception:  # noqa: BLE001 -- already failing; the warning above says why
            pass
        _core.span_at(window.span, window.start_ticks, _core.now())
        _core.args({"window": window.index, "error": message})

    def _close(self, window, complete, reason=None):
        """Stops the window's collector here, on the training thread, and hands the conversion
        and writing to the writer thread (_window_writer). An explicit window is written before
        this returns (its caller may read the file next); returns (path, bytes) for it, else None.
        `reason` says why a window closed early (in its span's args and its document)."""
        del self._open[window.spec.kind]
        began_ticks = _core.now()
        began = time.perf_counter_ns()
        try:
            payload = window.collector.stop()
        except Exception as error:  # noqa: BLE001 -- never into the training loop
            self._open[window.spec.kind] = window
            self._fail(window, error)
            return None
        end_ns = time.time_ns()
        end_ticks = _core.now()
        stop_overhead_ns = time.perf_counter_ns() - began
        counted = window.counted
        _core.span_at(window.span, window.start_ticks, began_ticks)
        span_args = {"window": window.index, "first_step": counted[0] if counted else -1,
                     "last_step": counted[-1] if counted else -1, "steps": len(counted)}
        if reason is not None:
            span_args["reason"] = reason
        _core.args(span_args)
        # stepscope's own time on the training thread, between two steps: rules leave it out.
        _window_writer.span_on_this_thread(STOP_SPAN, began_ticks, {"window": window.index})
        document = {
            "kind": window.spec.kind,
            "pid": os.getpid(),
            "window": dict(window.spec.to_json(), index=window.index),
            "steps": [counted[0], counted[-1]] if counted else None,
            "step_phase": PHASES[window.spec.phase],
            "steps_counted": len(counted),
            "other_steps": window.other_steps,
            "complete": complete,
            "start_ns": window.start_ns,
            "end_ns": end_ns,
            "start_ticks": window.start_ticks,
            "end_ticks": end_ticks,
            "stop_overhead_ns": stop_overhead_ns,
        }
        if reason is not None:
            document["reason"] = reason
        outcome = []

        def finish_and_write():
            write_began = _core.now()
            converted = time.perf_counter_ns()
            try:
                result = payload() if callable(payload) else payload
                if isinstance(result, _detail_store.SelfWrittenWindow):
                    written = result.write(document)  # it measures finish_ns itself
                else:
                    document.update(result)
                    document["finish_ns"] = time.perf_counter_ns() - converted
                    written = _detail_store.write_window(document)
            except (OSError, ValueError) as error:
                _warn(f"cannot write detail window {window.index} ({window.spec.describe()}): {error}")
                return
            except Exception as error:  # noqa: BLE001 -- a converter bug must not kill the writer
                _warn(f"detail window {window.index} ({window.spec.describe()}) not written: "
                      f"{type(error).__name__}: {error}")
                return
            finally:
                _window_writer.span_on_this_thread(WRITE_SPAN, write_began, {"window": window.index})
            if written[0] is not None:
                self.written.append(written)
                outcome.append(written)

        writer = _window_writer.InlineWriter() if window.explicit else self._writer
        writer.submit(finish_and_write)
        window.written = outcome[0] if outcome else None
        return window.written

    def drain(self):
        """Waits for the writer thread to write every closed window (at exit)."""
        if not self._writer.drain():
            _warn("detail windows still converting after "
                  f"{_window_writer.DRAIN_TIMEOUT_S:.0f} s at exit were not written")

    # Explicit windows (stepscope.torch.profile) --------------------------------------------

    def open_explicit(self, spec):
        """The open window, or None when the collector skipped it (WindowSkipped: said on stderr)."""
        if spec.kind in self._open:
            other = self._open[spec.kind]
            raise RuntimeError(f"stepscope.torch.profile: another {spec.kind} window is open (window "
                               f"{other.index}: {other.spec.describe()}); profile one thing at a time")
        index = self._next_index
        self._next_index += 1
        skipped = []
        window = self._open_window(index, spec, explicit=True, skipped_out=skipped)
        if window is None and not skipped:
            raise RuntimeError(f"stepscope.torch.profile: the {spec.kind} window could not start (see above)")
        self._refresh()
        return window

    def close_explicit(self, window):
        if window is None:
            return None
        if self._open.get(window.spec.kind) is not window:
            return window.written  # closed early (preempted) or at exit
        written = self._close(window, complete=True)
        self._refresh()
        return written

    # Exit and fork -------------------------------------------------------------------------

    def close_all(self):
        """Closes every open window (at exit); step windows that did not see all their steps
        are written with complete = false."""
        if self._poller is not None:
            self._poller.stop()
        for window in list(self._open.values()):
            spec = window.spec
            self._close(window, complete=not spec.is_step_window or window.explicit
                        or len(window.counted) >= spec.num_steps)
        self.drain()

    def _forget_after_fork(self):
        for window in self._open.values():
            try:
                window.collector.abandon_in_child()
            except Exception:  # noqa: BLE001 -- a worker must start whatever the profiler's state
                pass
        self._open = {}
        self._pending = []
        self._controls = []
        self._controls_lock = threading.Lock()
        self._poller = None  # threads do not survive fork()
        self._writer.forget_after_fork()
        self._refresh()


_SCHEDULER = None


def scheduler():
    """The process's WindowScheduler; one created here (before ``install``) has no scheduled
    windows and no step listener: explicit windows only."""
    global _SCHEDULER
    if _SCHEDULER is None:
        _SCHEDULER = WindowScheduler()
    return _SCHEDULER


def install(step_tracker, detail=None):
    """Makes the process's scheduler a listener of ``step_tracker`` with the windows of
    ``resolve_windows(detail)``; a later call with ``detail`` replaces the pending windows.
    Raises ValueError for an invalid window, before changing anything."""
    if detail is not None or _SCHEDULER is None or not _SCHEDULER.configured:
        specs = resolve_windows(detail)
        scheduler().replace_windows(specs)
    if _SCHEDULER not in step_tracker.listeners:
        step_tracker.listeners.append(_SCHEDULER)
        _register_exit(step_tracker)
        node = _detail_store.node_dir()
        # The job's main process watches for control files; DataLoader workers never have steps.
        if node is not None and multiprocessing.parent_process() is None:
            _SCHEDULER.watch_controls(_config.ControlWatcher(node))
    from stepscope.torch import _dataloader_detail
    _dataloader_detail.install()
    return _SCHEDULER


_exit_registered = False


def _register_exit(step_tracker):
    global _exit_registered
    if _exit_registered:
        return
    _exit_registered = True
    import atexit

    pid = os.getpid()

    def close_at_exit():
        if _SCHEDULER is None or not _core.is_enabled() or os.getpid() != pid:
            return
        # atexit runs this before the tracker's handler (registered earlier): ending the open
        # step here lets a window count it. The tracker's end_step does nothing a second time.
        step_tracker.end_step(_core.now())
        _SCHEDULER.close_all()

    atexit.register(close_at_exit)


class profile:  # noqa: N801 -- a context manager, lower case like stepscope.step
    """An explicit detail window around a block of code::

        with stepscope.torch.profile("operators"):
            model(batch)

    Args:
        kind: "operators", "python", "dataloader" or "gpu" (every kind of GPU activity the
            injected CUPTI tracer can record, for the block; skipped when it does not run).
        profiler: python only: "cprofile" (default) or "sampling".
        timer: python cprofile only: "total_time" (default), "cpu_time", "off_cpu_time", or
            "cycle" (the timers in turn, one per step that ends inside the block).

    When the block ends the window is written to ``<node>/detail/<kind>-<pid>-<index>.json.zst``
    (``path`` holds it afterwards); it records a ``DetailWindow:<kind>`` span. Starts recording
    (``stepscope.start()``) if the process does not record yet. An operators block while the
    script runs torch's own profiler profiles nothing (``path`` stays None; stderr says so), and
    one the script starts torch's profiler inside ends there (written with ``complete: false``).

    Raises:
        ValueError: a bad argument, on creation.
        RuntimeError: on entry, when a window of the same kind is open already.
    """

    def __init__(self, kind="operators", profiler=None, timer=None):
        where = "stepscope.torch.profile"
        if kind not in KINDS:
            raise ValueError(f"{where}: unknown detail kind {kind!r}; use operators, python, dataloader or gpu")
        if kind != "python" and (profiler is not None or timer is not None):
            raise ValueError(f"{where}: profiler and timer apply to python windows only, not to {kind} windows")
        if profiler is not None and profiler not in PROFILERS:
            raise ValueError(f"{where}: unknown Python profiler {profiler!r}; use cprofile or sampling")
        if timer is not None and timer not in TIMERS:
            raise ValueError(f"{where}: unknown timer {timer!r}; use total_time, cpu_time, off_cpu_time or cycle")
        if timer is not None and profiler == "sampling":
            raise ValueError(f"{where}: timer applies to the cprofile profiler only; drop it for sampling")
        if kind == "python":
            profiler = profiler or "cprofile"
            if profiler == "cprofile":
                timer = timer or "total_time"
        self._spec = WindowSpec(kind, profiler=profiler, timer=timer, source="explicit")
        self._window = None
        self._entered = False
        self.path = None

    def __enter__(self):
        if self._entered:
            raise RuntimeError("stepscope.torch.profile: this window is open already; use a new profile()")
        if not _core.is_enabled():
            import stepscope
            stepscope.start()
        self._window = scheduler().open_explicit(self._spec)
        self._entered = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        written = scheduler().close_explicit(self._window)
        if written is not None:
            self.path = written[0]
        return False
