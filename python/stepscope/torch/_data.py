"""DataLoader instrumentation: loader facts, the loop's wait for each batch (which also marks
step boundaries), and per-batch spans inside worker processes.

Recorded events (names as the rules expect, shared/RULES.md §0):
- ``DataLoaderIterInitialize`` (instant) when an iteration over a loader starts (every epoch,
  also when persistent workers keep the iterator), with args num_workers,
  pin_memory, prefetch_factor, batch_size, persistent_workers, drop_last, cores (CPUs this
  process may run on), dataset and sampler class names;
- ``DataLoaderIter`` (span) around each ``next()`` of the training loop: the data wait;
- ``DataLoaderWorker`` (span) around each batch a worker process produces, with args
  worker_id and pid (and ``error`` when the dataset raised); a fetch that finds an iterable
  dataset exhausted produces no batch and no span.
"""

import os
import weakref

import torch
from torch.utils.data import dataloader as _dataloader
from torch.utils.data._utils import fetch as _fetch

from stepscope import _core

_installed = False


def install(step_tracker):
    global _installed
    if _installed:
        return
    _installed = True
    _patch_iterator(step_tracker)
    for fetcher in (_fetch._MapDatasetFetcher, _fetch._IterableDatasetFetcher):
        _patch_fetcher(fetcher)


def _cores_available():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 0


def _loader_facts(loader):
    prefetch = getattr(loader, "prefetch_factor", None)
    return {
        "num_workers": int(loader.num_workers),
        "pin_memory": bool(loader.pin_memory),
        # torch 2.x reports None without workers; 1.13 keeps its default of 2 even then.
        "prefetch_factor": int(prefetch) if prefetch is not None and loader.num_workers > 0 else 0,
        "batch_size": int(loader.batch_size) if loader.batch_size is not None else -1,
        "persistent_workers": bool(getattr(loader, "persistent_workers", False)),
        "drop_last": bool(loader.drop_last),
        "cores": _cores_available(),
        "dataset": type(loader.dataset).__name__,
        "sampler": type(loader.sampler).__name__,
    }


def _patch_iterator(step_tracker):
    base = _dataloader._BaseDataLoaderIter
    original_init = base.__init__
    original_next = base.__next__

    def __init__(self, loader, *args, **kwargs):
        original_init(self, loader, *args, **kwargs)
        # Dropping the iterator (leaving the loop early) ends its open step.
        weakref.finalize(self, step_tracker.loader_finished, id(self))

    def __next__(self):
        iterator_id = id(self)
        asked = step_tracker.loader_asks(iterator_id)
        _core.begin("DataLoaderIter")
        try:
            batch = original_next(self)
        except StopIteration:
            _core.end("DataLoaderIter")
            step_tracker.loader_finished(iterator_id)
            raise
        except BaseException:
            _core.end("DataLoaderIter")
            raise
        _core.end("DataLoaderIter")
        step_tracker.loader_delivered(iterator_id, asked, torch.is_grad_enabled())
        return batch

    base.__init__ = __init__
    base.__next__ = __next__

    # The facts at every iteration start: a loader with persistent workers hands out the same
    # iterator every epoch (reset, not created), and its facts belong to each epoch.
    original_iter = _dataloader.DataLoader.__iter__

    def __iter__(self):
        iterator = original_iter(self)
        if _core.is_enabled():
            _core.mark("DataLoaderIterInitialize")
            _core.args(_loader_facts(self))
        return iterator

    _dataloader.DataLoader.__iter__ = __iter__


def _patch_fetcher(fetcher_class):
    original_fetch = fetcher_class.fetch

    def fetch(self, possibly_batched_index):
        info = torch.utils.data.get_worker_info()
        if info is None:  # the main process: its fetch is inside DataLoaderIter already
            return original_fetch(self, possibly_batched_index)
        # Recorded once the fetch is over: an iterable dataset's worker ends each epoch with a
        # fetch that finds its stream exhausted (StopIteration), which produced no batch.
        began = _core.now()
        try:
            batch = original_fetch(self, possibly_batched_index)
        except StopIteration:
            raise
        except BaseException as error:
            _core.span_at("DataLoaderWorker", began, _core.now())
            _core.args({"worker_id": int(info.id), "pid": os.getpid(), "error": type(error).__name__})
            raise
        _core.span_at("DataLoaderWorker", began, _core.now())
        _core.args({"worker_id": int(info.id), "pid": os.getpid()})
        return batch

    fetcher_class.fetch = fetch
