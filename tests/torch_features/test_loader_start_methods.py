"""DataLoader workers started by fork, spawn and forkserver (Python 3.14's default), with
persistent workers and iterable datasets (docs/pytorch.md, "DataLoader"): each batch is a step,
every worker records its batches, the loader's facts come every epoch, and the data-loader
detail window collects per-sample timings from the workers whatever the start method."""

import json

import pytest

from stepscope.torch import _detail_store

START_METHODS = ["fork", "spawn", "forkserver"]
EPOCHS, BATCHES = 2, 6


def run_loader(run_script, start_method, kind, persistence):
    # The data-loader window covers TRAIN step 6, the second epoch's first batch: it opens at the
    # end of step 5, before the epoch's workers start producing (they prefetch all 6 batches).
    run = run_script("loader_start_methods.py", start_method, kind, persistence,
                     flags=["--dataloader-steps", "6:1"])
    assert run.returncode == 0, run.describe()
    assert "Traceback" not in run.stderr, run.stderr
    return run


@pytest.mark.parametrize("start_method", START_METHODS)
@pytest.mark.parametrize("kind,persistence", [("map", "fresh"), ("map", "persistent"), ("iterable", "persistent")])
def test_workers_record_their_batches_whatever_the_start_method(run_script, start_method, kind, persistence):
    run = run_loader(run_script, start_method, kind, persistence)
    assert run.printed("batches") == EPOCHS * BATCHES
    assert run.step_counts()["TRAIN"] == EPOCHS * BATCHES
    worker_pids = set(json.loads(run.stdout.split("workers=")[1].splitlines()[0]))
    expected_workers = 2 if persistence == "persistent" else 2 * EPOCHS
    assert len(worker_pids) == expected_workers
    produced = run.spans("DataLoaderWorker")
    assert {s["pid"] for s in produced} == worker_pids
    assert len(produced) == EPOCHS * BATCHES
    facts = run.instants("DataLoaderIterInitialize")
    assert len(facts) == EPOCHS
    assert {f["args"]["persistent_workers"] for f in facts} == {persistence == "persistent"}
    assert {f["args"]["num_workers"] for f in facts} == {2}

    [document] = [d for d in _detail_store.list_windows(run.dir / "n") if d["kind"] == "dataloader"]
    assert document["steps"] == [6, 6]
    worker_batches = [b for b in document["batches"] if b["worker_id"] >= 0]
    assert worker_batches, document
    assert {b["pid"] for b in worker_batches} <= worker_pids
    assert run.spans("DataLoaderFetchSample"), "no per-sample spans from the workers"
