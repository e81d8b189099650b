"""Where detail windows put their data: ``<node>/detail/``, one zstd-compressed JSON document per
window and process, ``<kind>-<pid>-<window index>.json.zst`` (docs/detail-windows.md has the
format), and for operator windows recorded with Kineto the trace torch wrote,
``operators-<pid>-<window index>.pt.trace.json.gz``. Written by the window scheduler
(``_windows``) when a window closes; read by ``stepscope info`` / ``stepscope pyprof``, the
analysis loader and ``read_window`` / ``list_windows``, all through the one reader of detail
files, src/analysis/detail_window_files.h. The document's name and ``format_version`` are that
reader's (``_core.detail_window_file_name``, ``_core.DETAIL_FORMAT_VERSION``), so the writer and
the readers cannot drift apart; the Kineto trace's name below is the writer's alone.

Files appear atomically (written to a temporary name, then renamed), so a reader of a live run
sees whole files only.
"""

import json
import os

from stepscope import _core, _session

FORMAT_VERSION = _core.DETAIL_FORMAT_VERSION
DETAIL_DIRECTORY = "detail"  # the C++ reader's kDetailDirectoryName (detail_window_files.h)


def node_dir():
    """The node directory this process records into, or None when it does not record."""
    return _session._node_dir or os.environ.get("STEPSCOPE_NODE_DIR") or None


def detail_dir(create=True):
    """``<node>/detail``, created on demand; None when the process records nowhere."""
    node = node_dir()
    if node is None:
        return None
    path = os.path.join(node, DETAIL_DIRECTORY)
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def window_file_name(kind, pid, index):
    """``<kind>-<pid>-<index>.json.zst``, the name the C++ reader lists (detail_window_files.h)."""
    return _core.detail_window_file_name(kind, pid, index)


def trace_file_name(kind, pid, index):
    """The PyTorch profiler trace beside a window's document (Perfetto, HTA, TensorBoard)."""
    return f"{kind}-{pid}-{index}.pt.trace.json.gz"


class SelfWrittenWindow:
    """What a collector's payload function returns when it writes the window's files itself
    (instead of a dict of payload members for ``write_window``): the scheduler calls
    ``write(document)`` on the writer thread with the document's other members; it returns
    (path, compressed bytes) as ``write_window`` does."""

    def write(self, document):
        raise NotImplementedError


def write_window(document):
    """Writes one window's document; returns (path, compressed bytes), or (None, 0) when the
    process records nowhere. ``document`` must hold kind, pid and window.index."""
    directory = detail_dir()
    if directory is None:
        return None, 0
    document.setdefault("format_version", FORMAT_VERSION)
    path = os.path.join(directory, window_file_name(document["kind"], document["pid"],
                                                    document["window"]["index"]))
    # Compact separators: the documents are for programs; zstd removes the rest of the repetition.
    data = json.dumps(document, separators=(",", ":"), allow_nan=False).encode()
    return path, _core.write_zstd_file(path, data)


def read_window(path):
    """One window's document as a dict (for tests and notebooks)."""
    return json.loads(_core.read_zstd_file(os.fspath(path)))


def list_windows(node):
    """The detail documents of a node directory, sorted by (kind, pid, window index): the files
    ``stepscope info`` lists (``_core.detail_window_files``; temporary files left out). ValueError
    for a ``<node>/detail`` that is a symbolic link or a file that cannot be read."""
    return [read_window(entry["path"]) for entry in _core.detail_window_files(os.fspath(node))]
