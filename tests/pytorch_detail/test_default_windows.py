"""The default windows (SageMaker's): operators at TRAIN step 5, data loader at step 7, Python
steps 9-11 with the cProfile timers in turn, each in its own file and DetailWindow span."""

import lane
import torch

from conftest import run_script, script

BATCH = 4


def table(doc):
    return {row["name"]: row for row in doc["operators"]}


def test_three_files_and_three_spans_one_per_window(default_run):
    run = default_run
    assert sorted((d["kind"], d["pid"], d["window"]["index"]) for d in run.docs) == [
        ("dataloader", run.main_pid, 1), ("operators", run.main_pid, 0), ("python", run.main_pid, 2)]
    # With Kineto the operators window's PyTorch trace lies beside its document.
    assert sorted(p.name for p in (run.node_dir / "detail").iterdir()) == [
        f"dataloader-{run.main_pid}-1.json.zst", f"operators-{run.main_pid}-0.json.zst",
        *([f"operators-{run.main_pid}-0.pt.trace.json.gz"] if lane.KINETO else []),
        f"python-{run.main_pid}-2.json.zst"]
    spans = [(e["name"], e["args"]) for e in run.events if e["name"].startswith("DetailWindow:")]
    assert spans == [
        ("DetailWindow:operators", {"window": 0, "first_step": 5, "last_step": 5, "steps": 1}),
        ("DetailWindow:dataloader", {"window": 1, "first_step": 7, "last_step": 7, "steps": 1}),
        ("DetailWindow:python", {"window": 2, "first_step": 9, "last_step": 11, "steps": 3}),
    ]
    assert all(e["pid"] == run.main_pid for e in run.events if e["name"].startswith("DetailWindow:"))


def test_operators_window_is_train_step_5_exactly(default_run):
    doc = default_run.doc("operators")
    assert doc["window"] == {"kind": "operators", "start_step": 5, "num_steps": 1, "start_unix_time": None,
                             "duration_s": None, "phase": "TRAIN", "profiler": None, "timer": None,
                             "source": "default", "index": 0}
    assert (doc["steps"], doc["step_phase"], doc["steps_counted"], doc["other_steps"], doc["complete"]) == (
        [5, 5], "TRAIN", 1, 0, True)
    assert doc["profiler"] == ("kineto" if torch.autograd.kineto_available() else "legacy")
    assert doc["cuda"] is False and doc["device_events"] == [] and doc["events_capped"] is False
    # One training step of a two-layer MLP: two addmm forward, one optimizer step, one item().
    ops = table(doc)
    assert ops["aten::addmm"]["calls"] == 2
    assert ops["aten::linear"]["calls"] == 2
    assert ops["Optimizer.step#SGD.step"]["calls"] == 1
    assert ops["aten::item"]["calls"] == 1
    linears = [e["shapes"] for e in doc["events"] if e["name"] == "aten::linear"]
    assert linears == [[[BATCH, 8], [16, 8], [16]], [[BATCH, 16], [2, 16], [2]]]
    assert doc["events_total"] == len(doc["events"]) == sum(row["calls"] for row in doc["operators"])
    for event in doc["events"]:
        assert doc["start_ns"] <= event["start_ns"] <= event["end_ns"] <= doc["end_ns"]
        assert 0 <= event["self_cpu_ns"] <= event["cpu_ns"]


def test_operators_window_lies_in_step_5(default_run):
    run = default_run
    doc = run.doc("operators")
    steps = run.steps()
    (span,) = run.spans("DetailWindow:operators")
    # The window opens at step 5's begin as the tracker reports it (after the batch arrived) and
    # closes at its end (when the loop asks for batch 6); the profiler's events lie inside both.
    assert steps[5]["start_ns"] <= span["start_ns"] < steps[5]["end_ns"] <= span["end_ns"] < steps[6]["end_ns"]
    first = min(e["start_ns"] for e in doc["events"])
    last = max(e["end_ns"] for e in doc["events"])
    # Profiler (Unix clock) against recorder (tick clock converted to Unix): the alignment error
    # is recorded in the file; allow it plus 1 ms of clock conversion.
    slack = doc["clock_error_ns"] + 1_000_000
    assert steps[5]["start_ns"] - slack <= first and last <= steps[5]["end_ns"] + slack


def test_python_window_profiles_steps_9_to_11_with_the_three_timers(default_run):
    doc = default_run.doc("python")
    assert (doc["steps"], doc["steps_counted"], doc["complete"]) == ([9, 11], 3, True)
    assert (doc["profiler"], doc["timers"]) == ("cprofile", ["total_time", "cpu_time", "off_cpu_time"])
    assert [(p["step"], p["phase"], p["timer"]) for p in doc["profiles"]] == [
        (9, "TRAIN", "total_time"), (10, "TRAIN", "cpu_time"), (11, "TRAIN", "off_cpu_time")]
    for profile in doc["profiles"]:
        (train_step,) = [f for f in profile["functions"] if f["name"] == "train_step"]
        assert train_step["file"] == script("train_loop.py") and train_step["calls"] == 1
        assert profile["functions_total"] == len(profile["functions"])
    sleeps = {p["timer"]: next(f for f in p["functions"] if f["name"] == "<built-in method time.sleep>")
              for p in doc["profiles"]}
    # time.sleep(0.05) lasts at least 50 ms of wall time, all but microseconds of it off the
    # training thread's CPU. (The cpu_time timer is the whole process's CPU time: how much of it
    # other threads, say the writer converting the earlier windows, spend during the sleep depends
    # on the machine's load. test_python_profile.py checks each timer with fake clocks.)
    assert sleeps["total_time"]["cumulative_s"] >= 0.05
    assert sleeps["off_cpu_time"]["cumulative_s"] >= 0.049
    assert sleeps["cpu_time"]["calls"] == 1


def test_dataloader_window_records_the_worker_batches_of_step_7(default_run):
    run = default_run
    doc = run.doc("dataloader")
    assert (doc["steps"], doc["complete"]) == ([7, 7], True)
    # Batches go to workers in turn (batch i to worker i % 2) and the loader keeps 2 x 2 in flight,
    # so while step 7 runs the loop has handed batch 7 + 4 = 11 to worker 1, and nothing else.
    assert [(b["worker_id"], b["batch_index"], b["samples"]) for b in doc["batches"]] == [(1, 11, BATCH)]
    worker_pid = doc["batches"][0]["pid"]
    assert worker_pid != run.main_pid and run.ppid_of(worker_pid) == run.main_pid
    assert doc["workers"][0]["worker_id"] == 1 and doc["workers"][0]["batches"] == 1
    samples = run.spans("DataLoaderFetchSample")
    collates = run.spans("DataLoaderCollate")
    assert [(e["pid"], e["args"]) for e in samples] == [
        (worker_pid, {"window": 1, "worker_id": 1, "batch_index": 11, "index": i}) for i in range(44, 48)]
    assert [(e["pid"], e["args"]) for e in collates] == [
        (worker_pid, {"window": 1, "worker_id": 1, "batch_index": 11, "samples": BATCH})]
    (outer,) = [w for w in run.spans("DataLoaderWorker", worker_pid)
                if w["start_ns"] <= collates[0]["start_ns"] <= w["end_ns"]]
    for inner in samples + collates:
        assert outer["tid"] == inner["tid"]
        assert outer["start_ns"] <= inner["start_ns"] <= inner["end_ns"] <= outer["end_ns"]
    assert not (run.node_dir / "detail" / f"dataloader-{run.main_pid}.active").exists()
    assert not [p for p in (run.node_dir / "detail").iterdir() if p.name.startswith(".")]


def test_dataloader_window_without_workers_times_the_main_process_fetch(cli, tmp_path):
    run = run_script(cli, tmp_path, "noworkers", [script("train_loop.py"), "--workers", "0", "--steps", "9",
                                                   "--sleep", "0"])
    doc = run.doc("dataloader")
    assert doc["steps"] == [7, 7]
    # The window opens when step 6 ends, i.e. before batch 7 is fetched in the main process.
    assert [(b["worker_id"], b["pid"], b["batch_index"], b["samples"]) for b in doc["batches"]] == [
        (-1, run.main_pid, 7, BATCH)]
    assert [e["args"]["index"] for e in run.spans("DataLoaderFetchSample", run.main_pid)] == [28, 29, 30, 31]
    (step7,) = [s for n, s in run.steps().items() if n == 7]
    (collate,) = run.spans("DataLoaderCollate", run.main_pid)
    assert step7["start_ns"] <= collate["start_ns"] <= step7["end_ns"]
    # 9 steps: the python window (9-11) never opened, and wrote nothing.
    assert sorted(d["kind"] for d in run.docs) == ["dataloader", "operators"]
