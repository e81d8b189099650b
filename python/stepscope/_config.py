"""The run configuration as the job's Python processes see it, and live changes (`stepscope ctl`).

One configuration model (SPEC §2.3), the launcher's (src/launcher/run_config.h), read and resolved
by the launcher's own code through ``stepscope._core`` (src/launcher/job_run_config.h): this
module holds no default and no validation of its own, so a setting means here exactly what it
means to ``stepscope run``.

- ``STEPSCOPE_CONFIG`` names the ``<node>/config.json`` that ``stepscope run`` wrote: its values as
  the launcher resolved them (defaults < config file < environment < flags).
- ``STEPSCOPE_CONFIG`` names a config file (``stepscope.toml`` or ``.json``, as ``stepscope run
  --config`` takes it), or is not set (a script that calls ``stepscope.start()`` itself): the
  defaults < that file < the ``STEPSCOPE_*`` variables, resolved as the launcher resolves them.
- Keyword arguments given in Python come last and win.

Contract with the consumers (the detail-window engine, ``stepscope.torch``) — these functions and
these JSON shapes, nothing else:

``load_run_config(**overrides) -> dict``::

    {"schema_version": 1, "out": str, "job": str, "node": str,
     "interval": "500ms", "interval_ns": int,            # the launcher's; informational here
     "torch": bool,                                      # automatic PyTorch instrumentation
     "python_profiler": "cprofile" | "sampling" | None,  # already applied to the python windows
     "detail": [window, ...],
     "sources": {key: "default" | "config file" | "environment" | "flag" | "keyword argument"}}

    window = {"kind": "operators" | "python" | "dataloader" | "gpu",
              "start_step": int | None, "num_steps": int | None,          # a step window, or
              "start_unix_time": float | None, "duration_s": float | None, # a time window
              "phase": "TRAIN" | "EVAL" | "PREDICT" | "GLOBAL" | None,    # TRAIN for step windows
              "profiler": "cprofile" | "sampling" | None,                 # python windows only
              "timer": "total_time" | "cpu_time" | "off_cpu_time" | "cycle" | None}  # cprofile only

  Keyword overrides: ``torch`` (bool), ``detail`` (list of window dicts; ``[]`` for none),
  ``detailed_steps`` / ``python_steps`` / ``dataloader_steps`` / ``gpu_steps`` (``"START:COUNT"``, a
  ``(start, count)`` pair, or ``"none"``: replaces the windows of that kind) and
  ``python_profiler``; ``None`` means "not given". Invalid values raise ValueError with the
  launcher's one-line message, which names the setting and what to use.

``normalize_window(window, origin) -> window`` and ``default_detail() -> [window, ...]`` — one
window validated and normalised, and the default windows, by the launcher's rules.

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

# The vocabulary of windows, in the recorder's phase order (the detail-window engine indexes it).
KINDS = ("operators", "python", "dataloader", "gpu")
PHASES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")
PROFILERS = ("cprofile", "sampling")
TIMERS = ("total_time", "cpu_time", "off_cpu_time", "cycle")
# Coarse file systems (NFS, some FUSE) keep whole-second mtimes, so a file created in the second
# of our last listing may leave the mtime unchanged; there (and only there: a fine-grained mtime
# is a whole second once in 10^9) a recent unchanged mtime is listed again. See control_watcher.h.
_MTIME_GRANULARITY_NS = 1_000_000_000


def _is_whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _as_json(value, origin):
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{origin}: {error}; use numbers, strings, lists and dicts only") from None


def normalize_window(window, origin="detail window"):
    """A validated copy of `window` with all eight keys and the defaults filled in."""
    return json.loads(_core.normalize_detail_window(_as_json(window, origin), origin))


def default_detail():
    """SageMaker's defaults: operators step 5 x1, data loader step 7 x1, Python steps 9-11."""
    return json.loads(_core.default_detail_windows())


def _override_text(key, value, origin):
    """A keyword argument in the text form the launcher's flags and variables take."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if key == "detail" and not isinstance(value, str):
        return _as_json(list(value) if isinstance(value, tuple) else value, origin)
    if key.endswith("_steps") and isinstance(value, (tuple, list)) and len(value) == 2 and all(map(_is_whole, value)):
        return f"{value[0]}:{value[1]}"
    return str(value)


def load_run_config(**overrides):
    """The resolved run configuration (shape in the module docstring), keyword arguments last."""
    known = _core.job_override_keys()
    pairs = []
    for key, value in overrides.items():
        if value is None and key in known:
            continue  # not given
        pairs.append((key, _override_text(key, value, f"keyword argument {key}")))
    return json.loads(_core.resolve_run_config(os.environ.get("STEPSCOPE_CONFIG", ""), pairs))


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
