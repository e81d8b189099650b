"""The dataloader detail window: per-sample and per-batch timings in every DataLoader worker.

While the window is open, each batch a worker produces records into that worker's own stream
- ``DataLoaderFetchSample`` spans, one per sample read from the dataset (``dataset[i]``, or one
  for a whole ``__getitems__`` call), args window, worker_id, batch_index, index;
- a ``DataLoaderCollate`` span around ``collate_fn``, args window, worker_id, batch_index,
  samples;
and appends one line with the batch's timings to ``<node>/detail/.dataloader-<main pid>-<window>-
<worker pid>.jsonl``. When the window closes, the main process folds those lines into its detail
file (``dataloader-<pid>-<window>.json.zst``) and removes them. A loader without workers
(num_workers=0) fetches in the main process, which records the same spans with worker_id -1.

How workers learn about the window: they are other processes, so the main process keeps a
signal file ``<node>/detail/dataloader-<main pid>.active`` while the window is open (contents:
``{"window", "pid", "start_ns"}``, replaced atomically). A worker looks at it once per batch with
one ``stat()`` (its multiprocessing parent's pid names the file, whatever the start method); it
reads the contents only when the file's inode or mtime changed. Outside windows a batch costs that stat and nothing else.

The batch index is the worker loop's own index of the batch within the epoch (``idx`` in
torch's ``_worker_loop``), or the iterator's count of yielded batches without workers: the order
in which the training loop receives batches.

Batches still being produced when the window closes are in the worker streams; their lines may
miss the summary (the summary says how many batches it holds).
"""

import glob
import json
import multiprocessing
import os
import sys
import time

import torch
from torch.utils.data._utils import fetch as _fetch

from stepscope import _core
from stepscope.torch import _detail_store

MAX_BATCHES = 100_000
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
SIGNAL_SUFFIX = ".active"

_installed = False
_main_collector = None  # the open window's collector, for fetches in the main process


def signal_path(directory, main_pid):
    return os.path.join(directory, f"dataloader-{main_pid}{SIGNAL_SUFFIX}")


def _batch_file_prefix(directory, main_pid, window):
    return os.path.join(directory, f".dataloader-{main_pid}-{window}-")


class _WorkerState:
    """A worker's view of the signal file (one per process; reset after fork)."""

    def __init__(self):
        self.path = None        # the signal file to stat, once known
        self.resolved = False
        self.key = None         # (inode, mtime) of the signal contents last read
        self.window = None      # the open window's index
        self.fd = -1            # the batch-lines file of that window
        self.prefix = None

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1
        self.window = None
        self.key = None

    def current_window(self):
        if not self.resolved:
            self.resolved = True
            directory = _detail_store.detail_dir(create=False)
            if directory is not None:
                self.path = signal_path(directory, _main_pid())
                self.prefix = directory
        if self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            if self.window is not None:
                self.close()
            return None
        key = (st.st_ino, st.st_mtime_ns)
        if key != self.key:
            self.close()
            self.key = key
            try:
                with open(self.path, encoding="utf-8") as f:
                    window = int(json.load(f)["window"])
                self.fd = os.open(_batch_file_prefix(self.prefix, _main_pid(), window) + f"{os.getpid()}.jsonl",
                                  os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
                self.window = window
            except (OSError, ValueError, KeyError, TypeError):
                self.window = None  # torn or foreign contents: try again when the file changes
        return self.window


_worker_state = _WorkerState()


def _main_pid():
    """The pid of the process whose DataLoader started this worker. Not getppid(): with the
    forkserver start method (Python 3.14's default) a worker is the fork server's child; every
    start method records the requesting process as the multiprocessing parent."""
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None else os.getppid()


def _reset_after_fork():
    global _worker_state, _main_collector
    _worker_state = _WorkerState()
    _main_collector = None


class _TimedDataset:
    """Stands in for the fetcher's dataset during one batch: times each sample read."""

    def __init__(self, dataset, batch):
        self._dataset = dataset
        self._batch = batch

    def __getitem__(self, index):
        batch = self._batch
        _core.begin("DataLoaderFetchSample")
        _core.args({"window": batch.window, "worker_id": batch.worker_id, "batch_index": batch.batch_index,
                    "index": index if isinstance(index, int) else -1})
        began = time.perf_counter_ns()
        try:
            return self._dataset[index]
        finally:
            batch.fetch_ns += time.perf_counter_ns() - began
            batch.samples += 1
            _core.end("DataLoaderFetchSample")

    def __getattr__(self, name):
        value = getattr(self._dataset, name)
        if name == "__getitems__" and value:
            batch = self._batch

            def getitems(indices):
                _core.begin("DataLoaderFetchSample")
                _core.args({"window": batch.window, "worker_id": batch.worker_id,
                            "batch_index": batch.batch_index, "index": -1, "samples": len(indices)})
                began = time.perf_counter_ns()
                try:
                    return value(indices)
                finally:
                    batch.fetch_ns += time.perf_counter_ns() - began
                    batch.samples += len(indices)
                    _core.end("DataLoaderFetchSample")

            return getitems
        return value

    def __len__(self):
        return len(self._dataset)


class _TimedIterator:
    """Stands in for an iterable dataset's iterator during one batch."""

    def __init__(self, iterator, batch):
        self._iterator = iterator
        self._batch = batch

    def __iter__(self):
        return self

    def __next__(self):
        batch = self._batch
        _core.begin("DataLoaderFetchSample")
        _core.args({"window": batch.window, "worker_id": batch.worker_id, "batch_index": batch.batch_index,
                    "index": -1})
        began = time.perf_counter_ns()
        try:
            item = next(self._iterator)
            batch.samples += 1
            return item
        finally:
            batch.fetch_ns += time.perf_counter_ns() - began
            _core.end("DataLoaderFetchSample")


class _Batch:
    __slots__ = ("window", "worker_id", "batch_index", "samples", "fetch_ns", "collate_ns")

    def __init__(self, window, worker_id, batch_index):
        self.window = window
        self.worker_id = worker_id
        self.batch_index = batch_index
        self.samples = 0
        self.fetch_ns = 0
        self.collate_ns = 0


def _batch_index(caller):
    """The batch's index from torch's frame that called fetch() (above any stepscope wrapper):
    torch's worker loop keeps it in ``idx``; the single-process iterator counts yielded batches."""
    try:
        frame = caller
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            frame = frame.f_back
        if frame is None:
            return -1
        local = frame.f_locals
        if "idx" in local and isinstance(local["idx"], int):
            return local["idx"]
        yielded = getattr(local.get("self"), "_num_yielded", None)
        return yielded if isinstance(yielded, int) else -1
    except Exception:  # noqa: BLE001 -- an unknown torch layout: no index rather than no batch
        return -1


def _timed_fetch(fetcher, original_fetch, index, window, worker_id, caller):
    batch = _Batch(window, worker_id, _batch_index(caller))
    start_ns = time.time_ns()
    saved_collate = fetcher.collate_fn
    iterable = hasattr(fetcher, "dataset_iter")
    saved = fetcher.dataset_iter if iterable else fetcher.dataset

    def collate(data):
        _core.begin("DataLoaderCollate")
        _core.args({"window": window, "worker_id": worker_id, "batch_index": batch.batch_index,
                    "samples": batch.samples})
        began = time.perf_counter_ns()
        try:
            return saved_collate(data)
        finally:
            batch.collate_ns += time.perf_counter_ns() - began
            _core.end("DataLoaderCollate")

    fetcher.collate_fn = collate
    if iterable:
        fetcher.dataset_iter = _TimedIterator(saved, batch)
    else:
        fetcher.dataset = _TimedDataset(saved, batch)
    try:
        return original_fetch(fetcher, index)
    finally:
        fetcher.collate_fn = saved_collate
        if iterable:
            fetcher.dataset_iter = saved
        else:
            fetcher.dataset = saved
        line = {"worker_id": worker_id, "pid": os.getpid(), "batch_index": batch.batch_index,
                "samples": batch.samples, "start_ns": start_ns, "end_ns": time.time_ns(),
                "fetch_ns": batch.fetch_ns, "collate_ns": batch.collate_ns}
        if worker_id < 0:
            collector = _main_collector
            if collector is not None:
                collector.main_batches.append(line)
        elif _worker_state.fd >= 0:
            try:
                os.write(_worker_state.fd, (json.dumps(line, separators=(",", ":")) + "\n").encode())
            except OSError:
                pass  # a full disk loses the summary line; the spans are in the stream


def _patch_fetcher(fetcher_class):
    original_fetch = fetcher_class.fetch
    get_worker_info = torch.utils.data.get_worker_info

    def fetch(self, possibly_batched_index):
        info = get_worker_info()
        if info is None:
            collector = _main_collector
            if collector is None:
                return original_fetch(self, possibly_batched_index)
            return _timed_fetch(self, original_fetch, possibly_batched_index, collector.window, -1,
                                sys._getframe(1))
        window = _worker_state.current_window()
        if window is None:
            return original_fetch(self, possibly_batched_index)
        return _timed_fetch(self, original_fetch, possibly_batched_index, window, int(info.id), sys._getframe(1))

    fetch._stepscope_detail = True
    fetcher_class.fetch = fetch


def install():
    """Wraps the dataset fetchers once per process. The sample and collate spans are recorded
    inside the original fetch, so they nest in stepscope.torch._data's DataLoaderWorker span
    whichever wrapper is outermost."""
    global _installed
    if _installed:
        return
    _installed = True
    for fetcher_class in (_fetch._MapDatasetFetcher, _fetch._IterableDatasetFetcher):
        if not getattr(fetcher_class.fetch, "_stepscope_detail", False):
            _patch_fetcher(fetcher_class)
    os.register_at_fork(after_in_child=_reset_after_fork)


def _read_batch_lines(path):
    batches = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a line the worker is still writing
            try:
                batches.append(json.loads(line))
            except ValueError:
                continue
    return batches


def _worker_summary(batches):
    workers = {}
    for batch in batches:
        key = (batch["worker_id"], batch["pid"])
        entry = workers.setdefault(key, {"worker_id": key[0], "pid": key[1], "batches": 0, "samples": 0,
                                         "batch_ns_total": 0, "batch_ns_max": 0, "fetch_ns": 0, "collate_ns": 0})
        duration = batch["end_ns"] - batch["start_ns"]
        entry["batches"] += 1
        entry["samples"] += batch["samples"]
        entry["batch_ns_total"] += duration
        entry["batch_ns_max"] = max(entry["batch_ns_max"], duration)
        entry["fetch_ns"] += batch["fetch_ns"]
        entry["collate_ns"] += batch["collate_ns"]
    return [workers[key] for key in sorted(workers)]


class DataLoaderCollector:
    """The main process's side of a dataloader window; see the module docstring."""

    def __init__(self, window):
        self.window = window
        self.main_batches = []
        self._directory = None
        self._signal = None

    def start(self):
        global _main_collector
        directory = _detail_store.detail_dir()
        if directory is None:
            raise RuntimeError("this process records nowhere (no node directory)")
        self._directory = directory
        self._signal = signal_path(directory, os.getpid())
        temporary = f"{self._signal}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"window": self.window, "pid": os.getpid(), "start_ns": time.time_ns()}, f)
        os.replace(temporary, self._signal)
        _main_collector = self

    def step_ended(self, phase, number, more):
        pass

    def _end_signal(self):
        global _main_collector
        if _main_collector is self:
            _main_collector = None
        if self._signal is not None:
            try:
                os.unlink(self._signal)
            except FileNotFoundError:
                pass
            self._signal = None

    def _take_worker_lines(self):
        """The batch lines workers wrote for this window; removes them and any stale ones of
        earlier windows of this process (lines written after their window was collected). Files
        of later windows are left alone: this runs on the writer thread, possibly after the
        next data-loader window opened."""
        batches = []
        own = _batch_file_prefix(self._directory, os.getpid(), self.window)
        for path in glob.glob(os.path.join(self._directory, f".dataloader-{os.getpid()}-*.jsonl")):
            try:
                window = int(os.path.basename(path).split("-")[2])
            except (IndexError, ValueError):
                continue  # not a name this module writes
            if window > self.window:
                continue
            try:
                if path.startswith(own):
                    batches.extend(_read_batch_lines(path))
                os.unlink(path)
            except OSError:
                continue
        return batches

    def stop(self):
        self._end_signal()  # workers stop timing batches from their next one
        main_batches, self.main_batches = self.main_batches, []
        directory = self._directory

        def payload():
            # Off the training thread: reading the workers' batch files is file I/O.
            batches = self._take_worker_lines() + main_batches
            batches.sort(key=lambda b: (b["start_ns"], b["worker_id"]))
            return {
                "signal_file": os.path.basename(signal_path(directory, os.getpid())),
                "batches": batches[:MAX_BATCHES],
                "batches_total": len(batches),
                "batches_capped": len(batches) > MAX_BATCHES,
                "workers": _worker_summary(batches),
            }

        return payload

    def discard(self):
        self._end_signal()
        self._take_worker_lines()

    def abandon_in_child(self):
        global _main_collector
        _main_collector = None
        self._signal = None  # the parent's file: only the parent removes it
