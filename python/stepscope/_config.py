"""The run configuration as the job's Python processes see it, and live changes (`stepscope ctl`).

One configuration model (SPEC §2.3): defaults < config file < environment < flags, resolved by
the launcher (src/launcher/run_config.h) into ``<node>/config.json`` whose path it passes in
``STEPSCOPE_CONFIG``; keyword arguments given in Python come last and win.

Contract with the consumers (the detail-window engine, ``stepscope.torch``) — two functions and
these JSON shapes, nothing else:

``load_run_config(**overrides) -> dict``::

    {"schema_version": 1, "out": str, "job": str, "node": str,
     "interval": "500ms", "interval_ns": int,            # the launcher's; informational here
     "torch": bool,                                      # automatic PyTorch instrumentation
     "python_profiler": "cprofile" | "sampling" | None,  # already applied to the python windows
     "detail": [window, ...],
     "sources": {key: "default" | "config file" | "environment" | "flag" | "keyword argument"}}

    window = {"kind": "operators" | "python" | "dataloader",
              "start_step": int | None, "num_steps": int | None,          # a step window, or
              "start_unix_time": float | None, "duration_s": float | None, # a time window
              "phase": "TRAIN" | "EVAL" | "PREDICT" | "GLOBAL" | None,    # TRAIN for step windows
              "profiler": "cprofile" | "sampling" | None,                 # python windows only
              "timer": "total_time" | "cpu_time" | "off_cpu_time" | "cycle" | None}  # cprofile only

  Keyword overrides: ``torch`` (bool), ``detail`` (list of window dicts; ``[]`` for none),
  ``detailed_steps`` / ``python_steps`` / ``dataloader_steps`` (``"START:COUNT"``, a
  ``(start, count)`` pair, or ``"none"``: replaces the windows of that kind) and
  ``python_profiler``; ``None`` means "not given". Without ``STEPSCOPE_CONFIG`` (a script that
  calls ``stepscope.start()`` itself) the defaults and the ``STEPSCOPE_*`` variables of those keys
  are used. Invalid values raise ValueError with a one-line message.

``ControlWatcher(node_dir=None).poll() -> [control, ...]`` — new control files of
``<node>/control/`` in sequence order, each seen once per watcher::

    control = {"sequence": int, "time_ns": int,
               "interval_ns": int,        # optional; applied by the launcher, ignore it here
               "detail": [window, ...]}   # optional; each window replaces the windows of its
                                          # kind that have not started (running ones finish)

  ``poll()`` is one ``os.stat`` when nothing changed, so it can run at every step boundary.

``record_applied(control, changes=None)`` — call it when a control's changes take effect in
this process: it records a ``Control`` instant with args ``{"sequence", "changes"}`` (changes as
compact JSON; by default everything in the control but sequence and time_ns), so every applied
change is in the run.
"""

import json
import os
import stat
import sys
import time

from stepscope import _core

__all__ = ["ControlWatcher", "default_detail", "load_run_config", "normalize_window", "record_applied"]

SCHEMA_VERSION = 1
KINDS = ("operators", "python", "dataloader")
PHASES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")
PROFILERS = ("cprofile", "sampling")
TIMERS = ("total_time", "cpu_time", "off_cpu_time", "cycle")
WINDOW_KEYS = ("kind", "start_step", "num_steps", "start_unix_time", "duration_s", "phase", "profiler", "timer")
# Keys a Python process may override, in the order they apply (as in the launcher).
OVERRIDE_KEYS = ("torch", "detail", "detailed_steps", "python_steps", "dataloader_steps", "python_profiler")
_STEPS_KEYS = {"detailed_steps": "operators", "python_steps": "python", "dataloader_steps": "dataloader"}
_FORMS = "give start_step and num_steps, or start_unix_time and duration_s"
# Coarse file systems (NFS, some FUSE) keep whole-second mtimes, so a file created in the second
# of our last listing may leave the mtime unchanged; there (and only there: a fine-grained mtime
# is a whole second once in 10^9) a recent unchanged mtime is listed again. See control_watcher.h.
_MTIME_GRANULARITY_NS = 1_000_000_000


def _is_whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) != float("inf")


def normalize_window(window, origin="detail window"):
    """A validated copy of `window` with all eight keys and the defaults filled in."""
    if not isinstance(window, dict):
        raise ValueError(f"{origin}: a detail window must be a dict with kind and start_step+num_steps "
                         f"or start_unix_time+duration_s, not {window!r}")
    for key in window:
        if key not in WINDOW_KEYS:
            raise ValueError(f"{origin}: unknown key {key!r} in a detail window; known keys: {', '.join(WINDOW_KEYS)}")
    w = {key: window.get(key) for key in WINDOW_KEYS}
    if w["kind"] not in KINDS:
        raise ValueError(f"{origin}: unknown detail kind {w['kind']!r}; use operators, python or dataloader")
    for key in ("start_step", "num_steps"):
        if w[key] is not None and not _is_whole(w[key]):
            raise ValueError(f"{origin}: {key} must be a whole number, not {w[key]!r}")
    for key in ("start_unix_time", "duration_s"):
        if w[key] is not None and not _is_number(w[key]):
            raise ValueError(f"{origin}: {key} must be a number, not {w[key]!r}")
    any_step = w["start_step"] is not None or w["num_steps"] is not None
    any_time = w["start_unix_time"] is not None or w["duration_s"] is not None
    if any_step and any_time:
        raise ValueError(f"{origin}: a window is steps or time, not both; {_FORMS}")
    if not any_step and not any_time:
        raise ValueError(f"{origin}: the window has no start; {_FORMS}")
    if any_step and (w["start_step"] is None or w["num_steps"] is None):
        raise ValueError(f"{origin}: start_step and num_steps go together; {_FORMS}")
    if any_time and (w["start_unix_time"] is None or w["duration_s"] is None):
        raise ValueError(f"{origin}: start_unix_time and duration_s go together; {_FORMS}")
    if any_step and w["start_step"] < 0:
        raise ValueError(f"{origin}: start_step {w['start_step']} is negative; steps count from 0")
    if any_step and w["num_steps"] < 1:
        raise ValueError(f"{origin}: num_steps must be at least 1, not {w['num_steps']}")
    if any_time and w["start_unix_time"] <= 0:
        raise ValueError(f"{origin}: start_unix_time must be seconds since 1970 (e.g. time.time())")
    if any_time and w["duration_s"] <= 0:
        raise ValueError(f"{origin}: duration_s must be more than 0, not {w['duration_s']}")
    if any_time:
        w["start_unix_time"] = float(w["start_unix_time"])
        w["duration_s"] = float(w["duration_s"])
    if w["phase"] is not None:
        if not isinstance(w["phase"], str) or w["phase"].upper() not in PHASES:
            raise ValueError(f"{origin}: unknown phase {w['phase']!r}; use TRAIN, EVAL, PREDICT or GLOBAL")
        w["phase"] = w["phase"].upper()
    elif any_step:
        w["phase"] = "TRAIN"
    if w["kind"] != "python" and (w["profiler"] is not None or w["timer"] is not None):
        raise ValueError(f"{origin}: profiler and timer apply to python windows only, not to {w['kind']} windows")
    if w["profiler"] is not None and w["profiler"] not in PROFILERS:
        raise ValueError(f"{origin}: unknown Python profiler {w['profiler']!r}; use cprofile or sampling")
    if w["timer"] is not None and w["timer"] not in TIMERS:
        raise ValueError(f"{origin}: unknown timer {w['timer']!r}; use total_time, cpu_time, off_cpu_time or cycle")
    if w["timer"] is not None and w["profiler"] == "sampling":
        raise ValueError(f"{origin}: timer applies to the cprofile profiler only; drop it for sampling")
    if w["kind"] == "python":
        w["profiler"] = w["profiler"] or "cprofile"
        if w["profiler"] == "cprofile" and w["timer"] is None:
            w["timer"] = "cycle"
    return w


def default_detail():
    """SageMaker's defaults: operators step 5 x1, data loader step 7 x1, Python steps 9-11."""
    return [
        normalize_window({"kind": "operators", "start_step": 5, "num_steps": 1}),
        normalize_window({"kind": "dataloader", "start_step": 7, "num_steps": 1}),
        normalize_window({"kind": "python", "start_step": 9, "num_steps": 3, "profiler": "cprofile", "timer": "cycle"}),
    ]


def _step_window(kind, value, origin):
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_is_whole(v) for v in value):
        start, count = value
    else:
        text = str(value)
        start_text, colon, count_text = text.partition(":")
        if not (colon and start_text.isdigit() and count_text.isdigit()):
            raise ValueError(f"{origin}: {text!r} is not START:COUNT; use e.g. 9:3 for steps 9, 10 and 11")
        start, count = int(start_text), int(count_text)
    return normalize_window({"kind": kind, "start_step": start, "num_steps": count}, origin)


def _is_none(value):
    return isinstance(value, str) and value.lower() in ("none", "off")


def _parse_bool(value, origin):
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{origin}: torch must be true or false (1 or 0), not {value!r}")


def _apply(config, key, value, source, origin):
    """Sets one key (launcher semantics, run_config.h) and records its source."""
    if key == "torch":
        config["torch"] = _parse_bool(value, origin)
    elif key == "detail":
        if _is_none(value):
            windows = []
        else:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    raise ValueError(f"{origin}: detail must be a JSON list of windows or none") from None
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"{origin}: detail must be a list of windows, not {value!r}")
            windows = [normalize_window(w, f"{origin}: detail window {i + 1}") for i, w in enumerate(value)]
        config["detail"] = windows
        config["sources"]["detail"] = source
    elif key in _STEPS_KEYS:
        kind = _STEPS_KEYS[key]
        window = None if _is_none(value) else _step_window(kind, value, origin)
        kept, placed = [], False
        for w in config["detail"]:
            if w["kind"] != kind:
                kept.append(w)
            elif not placed and window is not None:
                kept.append(window)
                placed = True
        if not placed and window is not None:
            kept.append(window)
        config["detail"] = kept
        config["sources"]["detail"] = source
    elif key == "python_profiler":
        if value not in PROFILERS:
            raise ValueError(f"{origin}: unknown Python profiler {value!r}; use cprofile or sampling")
        config["python_profiler"] = value
    else:
        raise ValueError(f"{origin}: unknown setting {key!r}; settings a Python process may change: "
                         f"{', '.join(OVERRIDE_KEYS)}")
    config["sources"][key] = source


def _defaults():
    keys = ("out", "job", "node", "interval", "torch", "python_profiler", "detail")
    return {"schema_version": SCHEMA_VERSION, "out": "stepscope-runs", "job": "", "node": "", "interval": "500ms",
            "interval_ns": 500_000_000, "torch": True, "python_profiler": None, "detail": default_detail(),
            "sources": {key: "default" for key in keys}}


def _read_config_file(path):
    origin = f"STEPSCOPE_CONFIG {path}"
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as error:
        raise ValueError(f"{origin}: cannot be read ({error}); it is written by `stepscope run`") from None
    if not isinstance(config, dict) or not isinstance(config.get("detail"), list):
        raise ValueError(f"{origin}: not a stepscope run config; it is written by `stepscope run`")
    config["torch"] = _parse_bool(config.get("torch", True), origin)
    config["detail"] = [normalize_window(w, f"{origin}: detail window {i + 1}") for i, w in enumerate(config["detail"])]
    if config.setdefault("python_profiler", None) not in (None, *PROFILERS):
        raise ValueError(f"{origin}: unknown Python profiler {config['python_profiler']!r}; use cprofile or sampling")
    if not isinstance(config.get("sources"), dict):
        config["sources"] = {}
    return config


def load_run_config(**overrides):
    """The resolved run configuration (shape in the module docstring), keyword arguments last."""
    path = os.environ.get("STEPSCOPE_CONFIG")
    if path:
        config = _read_config_file(path)
    else:
        config = _defaults()
        for key in OVERRIDE_KEYS:
            name = "STEPSCOPE_" + key.upper()
            if name in os.environ:
                _apply(config, key, os.environ[name], "environment", name)
    for key in overrides:
        if key not in OVERRIDE_KEYS:
            raise ValueError(f"keyword argument {key!r}: unknown setting; settings a Python process may change: "
                             f"{', '.join(OVERRIDE_KEYS)}")
    for key in OVERRIDE_KEYS:
        if overrides.get(key) is not None:
            _apply(config, key, overrides[key], "keyword argument", f"keyword argument {key}")
    profiler = config.get("python_profiler")
    if profiler is not None:  # applies to every python window, whichever layer added it
        for w in config["detail"]:
            if w["kind"] == "python" and w["profiler"] != profiler:
                w["profiler"] = profiler
                w["timer"] = "cycle" if profiler == "cprofile" else None
    return config


def _sequence_of(name):
    stem, dot, ext = name.partition(".")
    return int(stem) if ext == "json" and stem.isdigit() and len(stem) <= 18 else None


class ControlWatcher:
    """New control files of ``<node_dir>/control/`` (``stepscope ctl``), in sequence order."""

    def __init__(self, node_dir=None, after_sequence=0):
        node_dir = node_dir or os.environ.get("STEPSCOPE_NODE_DIR", "")
        self.control_dir = os.path.join(node_dir, "control")
        self.last_sequence = after_sequence
        self._mtime_ns = -1
        self._listed_at_ns = 0
        self.listings = 0  # how often the directory was listed (the expensive part)

    def poll(self):
        """Controls written since the last poll ([] almost always, after one os.stat)."""
        try:
            mtime_ns = os.stat(self.control_dir).st_mtime_ns
        except OSError:
            return []
        if mtime_ns == self._mtime_ns and (mtime_ns % _MTIME_GRANULARITY_NS
                                           or mtime_ns < self._listed_at_ns - _MTIME_GRANULARITY_NS):
            return []
        self._mtime_ns = mtime_ns
        self._listed_at_ns = time.time_ns()
        self.listings += 1
        try:
            names = os.listdir(self.control_dir)
        except OSError:
            return []
        fresh = sorted(s for s in map(_sequence_of, names) if s is not None and s > self.last_sequence)
        controls = []
        for sequence in fresh:
            self.last_sequence = sequence
            path = os.path.join(self.control_dir, f"{sequence}.json")
            try:
                controls.append(_read_control(path, sequence))
            except ValueError as error:
                sys.stderr.write(f"stepscope: control file {path} not applied: {error}\n")
        return controls


# `stepscope ctl` writes control files of a few hundred bytes.
_MAX_CONTROL_BYTES = 1 << 20


def _read_regular_file(path, limit):
    """The text of a regular file of the run. The training job reads control files at its steps: a
    FIFO in their place would block it for good and a link to /dev/zero would fill its memory, so
    anything but a regular file of at most `limit` bytes is refused (OSError), without waiting."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, encoding="utf-8") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        text = f.read(limit + 1)
    if len(text) > limit:
        raise OSError(f"{path} is larger than {limit} bytes")
    return text


def _read_control(path, sequence):
    try:
        body = json.loads(_read_regular_file(path, _MAX_CONTROL_BYTES))
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot be read ({error}); write control files with `stepscope ctl`") from None
    if not isinstance(body, dict) or body.get("sequence") != sequence:
        raise ValueError("its sequence does not match its name; write control files with `stepscope ctl`")
    control = {"sequence": sequence, "time_ns": body.get("time_ns") if _is_whole(body.get("time_ns")) else None}
    if body.get("interval_ns") is not None:
        if not _is_whole(body["interval_ns"]):
            raise ValueError("interval_ns must be a whole number of ns")
        control["interval_ns"] = body["interval_ns"]
    if body.get("detail") is not None:
        if not isinstance(body["detail"], list):
            raise ValueError("detail must be a list of windows")
        control["detail"] = [normalize_window(w, f"detail window {i + 1}") for i, w in enumerate(body["detail"])]
    return control


def record_applied(control, changes=None):
    """Records that `control` took effect in this process: a Control instant with its changes."""
    if not _core.is_enabled():
        return
    if changes is None:
        changes = {k: v for k, v in control.items() if k not in ("sequence", "time_ns")}
    _core.mark("Control")
    _core.args({"sequence": int(control["sequence"]),
                "changes": json.dumps(changes, sort_keys=True, separators=(",", ":"))})
