"""The python detail window: which Python functions the training loop's thread spent its time in.

Two profilers:
- ``cprofile`` (deterministic): one ``cProfile.Profile`` per step of the window, each with one
  timer (SageMaker's choice, docs/detail-windows.md):
    total_time    ``time.perf_counter``: wall-clock time;
    cpu_time      ``time.process_time``: CPU time of the whole process, so intra-op threads that
                  an operator keeps busy count towards the Python function that called it;
    off_cpu_time  ``perf_counter() - thread_time()``: wall-clock time during which the training
                  thread was not on a CPU (blocked on I/O, a lock, the GIL, a sleep, a queue). A
                  custom timer rather than the difference of two profiles: both would have to run
                  on the same step, and per-function differences of two runs are noise. The
                  thread's own CPU clock keeps it from going negative when other threads burn CPU.
  With timer "cycle" the timers take turns, one per step: total_time, cpu_time, off_cpu_time.
  A step's profile runs from the end of the previous step of the window (or the window's
  opening) to its end, so it includes the step's wait for its batch.
- ``sampling`` (low overhead): a thread wakes every SAMPLE_INTERVAL_S, reads the training
  thread's stack with ``sys._current_frames()`` and adds it to a call tree with counts.

Threading: start/step_ended/stop run on the training thread; the sampler thread owns its tree
until stop() joins it. stop() returns a function that builds the window's document; the window
scheduler calls it on its writer thread, so conversion never lengthens a step.
"""

import cProfile
import pstats
import sys
import threading
import time

_PHASES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")  # the recorder's phase codes 0..3
CYCLE = ("total_time", "cpu_time", "off_cpu_time")
MAX_FUNCTIONS = 20_000     # per profile; the costliest by self time are kept
MAX_TREE_NODES = 100_000   # sampling call-tree nodes; stacks that would add more are counted
SAMPLE_INTERVAL_S = 0.010


def _off_cpu_clock():
    return time.perf_counter() - time.thread_time()


TIMER_FUNCTIONS = {
    "total_time": time.perf_counter,
    "cpu_time": time.process_time,
    "off_cpu_time": _off_cpu_clock,
}


def function_stats(stats, max_functions=MAX_FUNCTIONS):
    """pstats ``stats`` ({(file, line, name): (primitive calls, calls, self s, cumulative s,
    callers)}) as rows by self time, largest first, with callers as indices into the rows."""
    ordered = sorted(stats.items(), key=lambda item: (-item[1][2], item[0]))[:max_functions]
    position = {key: i for i, (key, _) in enumerate(ordered)}
    rows = []
    for (file, line, name), (primitive, calls, self_s, cumulative_s, callers) in ordered:
        edges = []
        for caller, caller_stats in callers.items():
            if caller in position:
                # pstats keeps (primitive calls, calls, self, cumulative) per caller edge.
                edges.append([position[caller], caller_stats[1], caller_stats[2], caller_stats[3]])
        edges.sort()
        rows.append({"file": file, "line": line, "name": name, "calls": calls, "primitive_calls": primitive,
                     "self_s": self_s, "cumulative_s": cumulative_s, "callers": edges})
    return rows, len(stats), len(stats) > max_functions


class CProfileCollector:
    """One cProfile per step of the window; see the module docstring."""

    def __init__(self, timer):
        self._timers = CYCLE if timer == "cycle" else (timer,)
        self._next_timer = 0
        self._profile = None
        self._timer = None
        self._start_ns = 0
        self._finished = []  # (profile, step, phase, timer, start_ns, end_ns), converted in stop()

    def _begin(self):
        timer = self._timers[self._next_timer % len(self._timers)]
        self._next_timer += 1
        self._timer = timer
        self._profile = cProfile.Profile(TIMER_FUNCTIONS[timer])
        self._start_ns = time.time_ns()
        self._profile.enable()

    def _finish(self, phase, number):
        # Only stop the profile here (the training thread); pstats conversion runs in stop()'s
        # returned function, off that thread.
        profile, self._profile = self._profile, None
        profile.disable()
        self._finished.append((profile, number, phase, self._timer, self._start_ns, time.time_ns()))

    def start(self):
        if sys.getprofile() is not None:
            raise RuntimeError("another profiler (sys.setprofile) runs on the training thread")
        self._begin()

    def step_ended(self, phase, number, more):
        if self._profile is None:
            return
        self._finish(_PHASES[phase], number)
        if more:
            self._begin()

    def stop(self):
        if self._profile is not None:  # an explicit window's last stretch, after its last step
            self._finish(None, None)
        finished, self._finished = self._finished, []
        timers = list(self._timers)

        def payload():
            profiles = []
            for profile, number, phase, timer, start_ns, end_ns in finished:
                rows, total, capped = function_stats(pstats.Stats(profile).stats)
                profiles.append({"step": number, "phase": phase, "timer": timer, "start_ns": start_ns,
                                 "end_ns": end_ns, "functions": rows, "functions_total": total,
                                 "functions_capped": capped})
            return {"profiler": "cprofile", "timers": timers, "profiles": profiles}

        return payload

    def discard(self):
        if self._profile is not None:
            self._profile.disable()
            self._profile = None

    def abandon_in_child(self):
        # fork() copied the training thread's profile hook into the child's only thread.
        self.discard()
        sys.setprofile(None)


class SamplingCollector:
    """Samples the training thread's stack from a helper thread into a call tree."""

    def __init__(self, interval_s=SAMPLE_INTERVAL_S):
        self._interval_s = interval_s
        self._target = None
        self._thread = None
        self._stop = threading.Event()
        # Tree nodes: (parent id, code object) -> id; parallel lists of counts. Code objects
        # as keys keep a sample to one dict lookup per frame.
        self._ids = {}
        self._codes = []
        self._parents = []
        self._samples = []
        self._self_samples = []
        self._ticks = 0
        self._dropped = 0
        self._start = 0.0
        self._elapsed = 0.0

    def _node(self, parent, code):
        key = (parent, code)
        node = self._ids.get(key)
        if node is None:
            if len(self._codes) >= MAX_TREE_NODES:
                return None
            node = len(self._codes)
            self._ids[key] = node
            self._codes.append(code)
            self._parents.append(parent)
            self._samples.append(0)
            self._self_samples.append(0)
        return node

    def _sample(self):
        frame = sys._current_frames().get(self._target)
        if frame is None:
            return
        self._ticks += 1
        stack = []
        while frame is not None:
            stack.append(frame.f_code)
            frame = frame.f_back
        parent = -1
        path = []
        for code in reversed(stack):
            node = self._node(parent, code)
            if node is None:
                self._dropped += 1
                return
            path.append(node)
            parent = node
        for node in path:
            self._samples[node] += 1
        self._self_samples[path[-1]] += 1

    def _run(self):
        while not self._stop.wait(self._interval_s):
            self._sample()

    def start(self):
        self._target = threading.get_ident()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="stepscope-python-sampler", daemon=True)
        self._thread.start()

    def step_ended(self, phase, number, more):
        pass

    def _join(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._elapsed = time.perf_counter() - self._start

    def stop(self):
        self._join()  # the sampler thread owns the tree until here
        return self._payload

    def _payload(self):
        """The call tree and per-function table (runs on the writer thread, after stop())."""
        seconds_per_sample = self._elapsed / self._ticks if self._ticks else self._interval_s
        tree = [{"id": i, "parent": self._parents[i], "file": code.co_filename, "line": code.co_firstlineno,
                 "name": code.co_name, "samples": self._samples[i], "self_samples": self._self_samples[i]}
                for i, code in enumerate(self._codes)]
        # Per function: self samples, and samples with the function anywhere on the stack
        # (once per sample, so recursion does not count twice).
        by_code = {}
        for i, code in enumerate(self._codes):
            entry = by_code.setdefault(code, [0, 0])
            entry[0] += self._self_samples[i]
        for i, code in enumerate(self._codes):
            ancestor, seen_above = self._parents[i], False
            while ancestor != -1:
                if self._codes[ancestor] is code:
                    seen_above = True
                    break
                ancestor = self._parents[ancestor]
            if not seen_above:
                by_code[code][1] += self._samples[i]
        functions = [{"file": code.co_filename, "line": code.co_firstlineno, "name": code.co_name,
                      "self_samples": self_samples, "cumulative_samples": cumulative,
                      "self_s": self_samples * seconds_per_sample, "cumulative_s": cumulative * seconds_per_sample}
                     for code, (self_samples, cumulative) in by_code.items()]
        functions.sort(key=lambda f: (-f["self_samples"], -f["cumulative_samples"], f["file"], f["line"]))
        return {"profiler": "sampling", "interval_s": self._interval_s, "samples": self._ticks,
                "seconds_per_sample": seconds_per_sample, "samples_dropped": self._dropped,
                "call_tree": tree, "functions": functions}

    def discard(self):
        self._join()

    def abandon_in_child(self):
        self._thread = None  # threads do not survive fork()
