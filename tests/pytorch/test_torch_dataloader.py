"""DataLoader instrumentation under `stepscope run` (docs/pytorch.md): loader facts, the loop's
data wait inside steps, and per-batch spans recorded by the worker processes themselves."""

import collections
import math
import os

import pytest

from torch_runs import LIFECYCLE, contains

Counter = collections.Counter

EPOCHS, SAMPLES, BATCH, WORKERS = 2, 96, 8, 2  # 12 batches per epoch, 6 per worker
BATCHES = EPOCHS * math.ceil(SAMPLES / BATCH)
CORES = len(os.sched_getaffinity(0))  # the job inherits this process's CPU affinity


def augment_run(run_example, *extra, job):
    run = run_example("augment_workers.py", "--epochs", EPOCHS, "--samples", SAMPLES,
                      "--batch-size", BATCH, "--num-workers", WORKERS, "--blur-passes", 4,
                      *extra, job=job)
    assert run.returncode == 0, run.describe()
    return run


@pytest.fixture(scope="module")
def workers(run_example):
    return augment_run(run_example, job="augment")


@pytest.fixture(scope="module")
def persistent(run_example):
    return augment_run(run_example, "--persistent-workers", job="augment-persistent")


def test_worker_loop_has_exact_steps(workers):
    assert workers.printed("train_iterations") == BATCHES == 24
    assert workers.step_counts() == {"TRAIN": BATCHES, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert {s["pid"] for s in workers.of_kind("step")} == {workers.main_pid}
    assert workers.problems == []


def test_data_waits_lie_inside_steps(workers):
    inside, outside = workers.spans_by_step()
    for step, names in inside:
        assert names == Counter(DataLoaderIter=1, Forward=1, Backward=1, OptimizerStep=1), step
    assert outside == Counter(DataLoaderIter=EPOCHS)  # the wait that finds the epoch's end


def test_worker_batches_come_from_the_worker_processes(workers):
    batches = workers.spans("DataLoaderWorker")
    assert len(batches) == BATCHES
    assert workers.main_pid not in {s["pid"] for s in batches}
    streams = {s["pid"]: s for s in workers.streams}
    for span in batches:
        assert span["args"]["pid"] == span["pid"], span  # the pid arg is the recording process
        assert streams[span["pid"]]["ppid"] == workers.main_pid, "a worker is the loop's child"
    # Workers start afresh each epoch: EPOCHS x WORKERS processes, each with one worker_id, and
    # the sampler's batches go round-robin, so each produced exactly its share.
    per_pid = Counter(s["pid"] for s in batches)
    assert sorted(per_pid.values()) == [BATCHES // (EPOCHS * WORKERS)] * (EPOCHS * WORKERS)
    ids = {pid: {s["args"]["worker_id"] for s in batches if s["pid"] == pid} for pid in per_pid}
    assert all(len(v) == 1 for v in ids.values()), ids
    assert Counter(next(iter(v)) for v in ids.values()) == Counter({0: EPOCHS, 1: EPOCHS})


def test_worker_processes_record_only_their_batches(workers):
    """Forked workers do not continue the loop: no steps, no lifecycle, no forward spans."""
    for stream in workers.streams:
        if stream["pid"] == workers.main_pid:
            continue
        events = [e for e in workers.events if e["pid"] == stream["pid"]]
        assert Counter(e["name"] for e in events) == Counter(DataLoaderWorker=6), stream
    lifecycle = [e for e in workers.instants() if e["name"].startswith("Lifecycle:")]
    assert Counter(e["name"] for e in lifecycle) == Counter(LIFECYCLE)
    assert {e["pid"] for e in lifecycle} == {workers.main_pid}


def test_loader_facts_with_workers(workers):
    facts = workers.instants("DataLoaderIterInitialize")
    assert len(facts) == EPOCHS  # one iterator per epoch
    assert {e["pid"] for e in facts} == {workers.main_pid}
    for event in facts:
        assert event["args"] == {
            "num_workers": WORKERS, "pin_memory": False, "prefetch_factor": 2,
            "batch_size": BATCH, "persistent_workers": False, "drop_last": False,
            "cores": CORES, "dataset": "AugmentedImages", "sampler": "RandomSampler",
        }


def test_persistent_workers_serve_every_epoch(persistent):
    assert persistent.step_counts() == {"TRAIN": BATCHES, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    batches = persistent.spans("DataLoaderWorker")
    per_pid = Counter(s["pid"] for s in batches)
    assert sorted(per_pid.values()) == [BATCHES // WORKERS] * WORKERS  # two workers, both epochs
    facts = persistent.instants("DataLoaderIterInitialize")
    # torch resets a persistent iterator for the next epoch instead of creating one; its facts
    # are recorded every epoch all the same.
    assert [e["args"]["persistent_workers"] for e in facts] == [True] * EPOCHS
    inside, outside = persistent.spans_by_step()
    for step, names in inside:
        assert names == Counter(DataLoaderIter=1, Forward=1, Backward=1, OptimizerStep=1), step
    assert outside == Counter(DataLoaderIter=EPOCHS)


def test_loader_facts_without_workers(run_example):
    run = run_example("plain_loop.py", "--epochs", 1, "--samples", 100, "--batch-size", 32,
                      "--pin-memory", "--drop-last", job="facts")
    assert run.returncode == 0, run.describe()
    assert run.step_counts()["TRAIN"] == 3  # drop_last: floor(100 / 32)
    [facts] = run.instants("DataLoaderIterInitialize")
    assert facts["args"] == {
        # pin_memory is what the script asked for, even where torch cannot pin (no CUDA).
        "num_workers": 0, "pin_memory": True, "prefetch_factor": 0, "batch_size": 32,
        "persistent_workers": False, "drop_last": True, "cores": CORES,
        "dataset": "TensorDataset", "sampler": "RandomSampler",
    }
    first_step = run.steps()[0]
    assert facts["start_ns"] <= first_step["start_ns"]
    assert not contains(first_step, facts)
