"""`stepscope run` with its defaults, detail windows included (docs/detail-windows.md: operators
at TRAIN step 5, data loader at step 7, Python at steps 9-11): the always-on recording of a plain
loop is exactly what it is without windows, and each window covers the steps it names."""

import collections
import os

import pytest

Counter = collections.Counter

EPOCHS, SAMPLES, BATCH = 2, 200, 16  # 13 batches per epoch


@pytest.fixture(scope="module")
def defaults(run_example):
    run = run_example("plain_loop.py", "--epochs", EPOCHS, "--samples", SAMPLES,
                      "--batch-size", BATCH, job="plain-defaults", detail=True)
    assert run.returncode == 0, run.describe()
    return run


def test_steps_and_always_on_spans_are_unchanged_by_windows(defaults):
    assert defaults.step_counts() == {"TRAIN": 26, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert defaults.phase_sequence() == [("TRAIN", n) for n in range(26)]
    inside, outside = defaults.spans_by_step(always_on_only=True)
    for step, names in inside:
        assert names == Counter(DataLoaderIter=1, Forward=2, Backward=1, OptimizerStep=1), step
    assert outside == Counter(DataLoaderIter=EPOCHS)
    assert defaults.problems == []


def test_closing_a_window_costs_no_step_time(defaults):
    # Stopping a window's collector happens between two steps; converting and writing its data
    # happens on the writer thread. No step holds stepscope's own work.
    inside, outside = defaults.spans_by_step()
    for step, names in inside:
        assert names["DetailWindowStop"] == 0 and names["DetailWindowWrite"] == 0, step
    assert outside["DetailWindowStop"] == 3
    stops = [s for s in defaults.spans(pid=defaults.main_pid) if s["name"] == "DetailWindowStop"]
    writes = [s for s in defaults.spans(pid=defaults.main_pid) if s["name"] == "DetailWindowWrite"]
    assert len(writes) == 3
    assert {s["tid"] for s in writes}.isdisjoint({s["tid"] for s in stops})


def test_each_default_window_covers_its_steps(defaults):
    windows = {s["name"]: s for s in defaults.spans() if s["name"].startswith("DetailWindow:")}
    assert sorted(windows) == ["DetailWindow:dataloader", "DetailWindow:operators",
                               "DetailWindow:python"]
    expected = {"operators": (0, 5, 5, 1), "dataloader": (1, 7, 7, 1), "python": (2, 9, 11, 3)}
    steps = {s["step"]: s for s in defaults.steps("TRAIN")}
    for kind, (index, first, last, count) in expected.items():
        span = windows[f"DetailWindow:{kind}"]
        assert span["pid"] == defaults.main_pid
        assert span["args"] == {"window": index, "first_step": first, "last_step": last,
                                "steps": count}, kind
        # The window is open during its steps (from the batch's delivery in the first one).
        assert steps[first]["start_ns"] <= span["start_ns"] <= steps[first]["end_ns"], kind
        assert span["end_ns"] >= steps[last]["end_ns"], kind
        assert os.path.exists(defaults.dir / "n" / "detail"
                              / f"{kind}-{defaults.main_pid}-{index}.json.zst"), kind


def test_dataloader_window_times_each_sample_of_its_batch(defaults):
    samples = defaults.spans("DataLoaderFetchSample")
    assert len(samples) == BATCH  # step 7's batch, fetched in the main process (no workers)
    assert {(s["args"]["batch_index"], s["args"]["worker_id"]) for s in samples} == {(7, -1)}
    assert len({s["args"]["index"] for s in samples}) == BATCH
    [collate] = defaults.spans("DataLoaderCollate")
    assert collate["args"]["samples"] == BATCH
