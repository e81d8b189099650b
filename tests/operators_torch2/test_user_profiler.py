"""The script's own torch profiler and stepscope's operator windows never run together
(docs/detail-windows.md, "The script's own profiler"): a window due while the script profiles
is skipped with a recorded reason; a script that starts its profiler while a window is open
closes the window first. Either way the script's profiler works as without stepscope."""

import gzip
import json
import os

import pytest

from conftest import run_tiny_train

PROFILERS = ("torch.profiler", "autograd")


def user_trace_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path) as f:
        return json.load(f)["traceEvents"]


@pytest.mark.parametrize("profiler", PROFILERS)
def test_a_window_due_while_the_script_profiles_is_skipped(cli, tmp_path, profiler):
    user_trace = str(tmp_path / "user.json")
    # The script profiles steps 3-7 itself; stepscope's window is due at step 5.
    run = run_tiny_train(cli, tmp_path, "skipped", ["--user-profiler", profiler, "--user-from", 3,
                                                    "--user-steps", 5, "--user-trace", user_trace])
    assert run.docs == [] and run.detail_files() == []
    (span,) = run.spans("DetailWindow:operators")
    assert span["args"] == {"window": 0, "skipped": 1,
                            "reason": "torch's profiler is already running in this process (the script's own)"}
    assert span["pid"] == run.main_pid
    steps = run.train_steps()
    assert steps[5]["start_ns"] <= span["start_ns"] <= steps[5]["end_ns"]
    assert run.stderr.count("detail window 0 (operators TRAIN steps 5-6) skipped") == 1, run.describe()
    # The script's profiler saw its five steps, and exported its trace.
    assert run.printed("user_addmm") == 10
    assert sum(e.get("name") == "aten::addmm" for e in user_trace_events(user_trace)) == 10


@pytest.mark.parametrize("profiler", PROFILERS)
def test_a_script_starting_its_profiler_closes_the_open_window_first(cli, tmp_path, profiler):
    user_trace = str(tmp_path / "user.json")
    # stepscope's window covers steps 2-7; the script profiles steps 4-5 itself.
    run = run_tiny_train(cli, tmp_path, "yield", ["--user-profiler", profiler, "--user-from", 4, "--user-steps", 2,
                                                  "--user-trace", user_trace], flags=["--detailed-steps", "2:6"])
    doc = run.doc()
    reason = "the script started torch's profiler"
    assert (doc["complete"], doc["reason"], doc["steps"], doc["steps_counted"]) == (False, reason, [2, 3], 2)
    assert doc["profiler"] == "kineto" and {e["name"] for e in doc["events"]} >= {"aten::addmm"}
    assert os.path.exists(os.path.join(run.detail_dir, doc["trace_file"]))
    (span,) = run.spans("DetailWindow:operators")
    assert span["args"] == {"window": 0, "first_step": 2, "last_step": 3, "steps": 2, "reason": reason}
    # It closed inside step 4, where the script started its profiler; none of its events are later.
    steps = run.train_steps()
    assert steps[4]["start_ns"] <= span["end_ns"] <= steps[4]["end_ns"]
    assert max(e["end_ns"] for e in doc["events"]) <= span["end_ns"] + doc["clock_error_ns"] + 1_000_000
    assert "Profiler is already enabled" not in run.stderr, run.describe()
    # The script's profiler saw its two steps and only those.
    assert run.printed("user_addmm") == 4
    assert sum(e.get("name") == "aten::addmm" for e in user_trace_events(user_trace)) == 4
