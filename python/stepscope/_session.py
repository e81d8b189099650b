"""Starting and stopping the recorder from a script, and its statistics."""

import os
import sys
import time

from stepscope import _core

# Set by `stepscope run` for its child; the recorder has already started from it at import.
_node_dir = os.environ.get("STEPSCOPE_NODE_DIR") or None


def _default_job_name():
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    if script.endswith(".py"):
        script = script[:-3]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{script or 'python'}-{stamp}"


def _check_name(what, name):
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name or len(name) > 200:
        raise ValueError(f"{what} {name!r} cannot be a directory name; use letters, digits, '-', '_' or '.'")
    return name


def start(out=None, job=None, node=None):
    """Starts recording this process into ``<out>/<job>/<node>`` and returns that directory.

    For scripts not launched by ``stepscope run`` (which starts the recorder itself). Each
    argument falls back to the environment (STEPSCOPE_OUT, STEPSCOPE_JOB, STEPSCOPE_NODE), then
    to ``./stepscope-runs``, ``<script>-<UTC timestamp>`` and the host name. When the process
    already records, nothing changes and the directory in use is returned. A process records
    one session: after :func:`stop`, start raises.

    Raises:
        ValueError: a job or node name that cannot be a directory name.
        RuntimeError: the recorder cannot start (e.g. the directory is not writable).
    """
    global _node_dir
    if _core.is_enabled():
        return _node_dir
    out = out or os.environ.get("STEPSCOPE_OUT") or "stepscope-runs"
    job = _check_name("job name", job or os.environ.get("STEPSCOPE_JOB") or _default_job_name())
    node = _check_name("node id", node or os.environ.get("STEPSCOPE_NODE") or os.uname().nodename)
    node_dir = os.path.join(os.path.abspath(os.fspath(out)), job, node)
    _core.start(node_dir)
    if not _core.is_enabled():  # the recorder accepts a start after stop but stays off
        raise RuntimeError("stepscope was stopped in this process; it records one session per process")
    _node_dir = node_dir
    return node_dir


def stop():
    """Flushes everything recorded and stops recording in this process for good."""
    _core.stop()


def flush():
    """Compacts what was recorded so far into the run (recorded events are on disk already)."""
    _core.flush()


def is_enabled():
    """True while this process records."""
    return _core.is_enabled()


def stats():
    """This process's recorder statistics.

    Returns:
        dict with ``events_recorded``, ``events_dropped`` (lost because the bounded buffers were
        full), ``bytes_written`` (compressed, to the run's log) and ``blocks_flushed``.
    """
    return _core.stats()
