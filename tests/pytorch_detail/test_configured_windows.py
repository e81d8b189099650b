"""Windows from the run config (the launcher's --config, or STEPSCOPE_CONFIG directly), EVAL
windows, the sampling profiler, time windows and invalid windows."""

import json
import subprocess
import time

import lane
from conftest import PYTHON, child_env, run_script, script, write_config

TRAIN_LOOP = script("train_loop.py")


def ops(doc):
    return {row["name"]: row["calls"] for row in doc["operators"]}


def test_configured_step_windows_replace_the_defaults(cli, tmp_path):
    config = write_config(tmp_path / "config.json", [
        {"kind": "operators", "start_step": 2, "num_steps": 2},
        {"kind": "python", "start_step": 3, "num_steps": 2, "profiler": "sampling"},
        {"kind": "operators", "start_step": 1, "num_steps": 1, "phase": "EVAL"},
        {"kind": "python", "start_step": 6, "num_steps": 2, "timer": "off_cpu_time"},
    ])
    run = run_script(cli, tmp_path, "custom", [TRAIN_LOOP, "--steps", "8", "--eval-steps", "3", "--workers", "0",
                                               "--sleep", "0.05", "--sample-steps", "3", "4"],
                     flags=["--config", config])
    assert sorted((d["kind"], d["window"]["index"], tuple(d["steps"]), d["step_phase"]) for d in run.docs) == [
        ("operators", 0, (2, 3), "TRAIN"), ("operators", 2, (1, 1), "EVAL"),
        ("python", 1, (3, 4), "TRAIN"), ("python", 3, (6, 7), "TRAIN")]
    assert {d["window"]["source"] for d in run.docs} == {"config file"}

    train_ops = ops(run.doc("operators", 0))
    assert (train_ops["aten::addmm"], train_ops["Optimizer.step#SGD.step"]) == (4, 2)  # two steps
    eval_ops = ops(run.doc("operators", 2))
    assert eval_ops["aten::addmm"] == 2  # one forward, and nothing of a backward or optimizer
    assert "aten::mm" not in eval_ops and "Optimizer.step#SGD.step" not in eval_ops

    sampled = run.doc("python", 1)
    assert sampled["profiler"] == "sampling" and sampled["samples"] >= 4
    assert sampled["samples"] == sum(node["self_samples"] for node in sampled["call_tree"])
    # Steps 3 and 4 each wait inside train_step, asleep in a builtin, until the profiler has read
    # the loop's stack twice (--sample-steps): a builtin is no Python frame, so at least one read
    # a step ends in train_step. How the other samples fall depends on the machine's load.
    (train_step,) = [f for f in sampled["functions"] if f["name"] == "train_step"]
    assert train_step["file"] == TRAIN_LOOP and train_step["self_samples"] >= 2
    self_samples = [f["self_samples"] for f in sampled["functions"]]
    assert self_samples == sorted(self_samples, reverse=True)
    tree = {node["id"]: node for node in sampled["call_tree"]}
    chain, node = [], next(n for n in sampled["call_tree"] if n["name"] == "train_step")
    while node is not None:
        chain.append(node["name"])
        node = tree.get(node["parent"])
    assert chain[:2] == ["train_step", "main"] and chain[-1] == "<module>"

    off_cpu = run.doc("python", 3)
    assert [(p["step"], p["timer"]) for p in off_cpu["profiles"]] == [(6, "off_cpu_time"), (7, "off_cpu_time")]

    spans = [(e["name"], e["args"]["window"]) for e in run.events if e["name"].startswith("DetailWindow:")]
    assert spans == [("DetailWindow:operators", 0), ("DetailWindow:python", 1), ("DetailWindow:python", 3),
                     ("DetailWindow:operators", 2)]


def test_stepscope_config_read_without_the_launcher(tmp_path):
    """A script that starts recording itself still reads STEPSCOPE_CONFIG (stepscope._config)."""
    (tmp_path / "config.json").write_text(json.dumps({"detail": [
        {"kind": "operators", "start_step": 1, "num_steps": 1, "start_unix_time": None, "duration_s": None,
         "phase": "TRAIN", "profiler": None, "timer": None}]}))
    code = ("import sys, runpy, stepscope.torch; stepscope.torch.instrument(); "
            f"sys.argv = ['{TRAIN_LOOP}', '--steps', '3', '--workers', '0', '--sleep', '0']; "
            f"runpy.run_path('{TRAIN_LOOP}', run_name='__main__')")
    node = tmp_path / "job" / "n"
    result = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120,
                            env=child_env({"STEPSCOPE_NODE_DIR": str(node),
                                           "STEPSCOPE_CONFIG": str(tmp_path / "config.json")}))
    assert result.returncode == 0, result.stderr
    pid = result.stdout.split('main_pid=')[1].split()[0]
    # With Kineto the window's PyTorch trace lies beside its document (docs/detail-windows.md).
    assert sorted(p.name for p in (node / "detail").iterdir()) == [
        f"operators-{pid}-0.json.zst", *([f"operators-{pid}-0.pt.trace.json.gz"] if lane.KINETO else [])]


def test_time_windows_from_the_config_are_held_against_the_wall_clock(cli, tmp_path):
    # Neither outcome depends on how long the job takes to start (tens of seconds on a loaded
    # machine): a window that began before the launch and lasts an hour is open at the job's
    # first step boundary and still open at its last; one that ended before the launch never
    # opens. Where inside [start, start + duration) a window opens and closes is the scheduler's
    # rule, checked step by step with a fake clock in test_scheduler.py.
    now = time.time()
    config = write_config(tmp_path / "config.json", [
        {"kind": "operators", "start_unix_time": now - 1, "duration_s": 3600},
        {"kind": "python", "start_unix_time": now - 120, "duration_s": 60}])
    run = run_script(cli, tmp_path, "timed", [TRAIN_LOOP, "--steps", "10", "--workers", "0", "--sleep", "0.01"],
                     flags=["--config", config])
    doc = run.doc("operators")
    assert doc["window"]["start_unix_time"] == now - 1 and doc["window"]["duration_s"] == 3600
    assert doc["start_ns"] >= (now - 1) * 1e9
    # Open from step 0's begin to the exit: every TRAIN step ended inside it.
    assert (doc["steps"], doc["steps_counted"], doc["complete"]) == ([0, 9], 10, True)
    assert ops(doc)["Optimizer.step#SGD.step"] == 10
    (span,) = run.spans("DetailWindow:operators")
    assert span["args"] == {"window": 0, "first_step": 0, "last_step": 9, "steps": 10}
    assert [d["kind"] for d in run.docs] == ["operators"]
    assert (f"stepscope: detail window 1 (python from {now - 120:.3f} for 60 s) passed with no step boundary "
            "inside it; skipped") in run.stderr.splitlines()


def test_steps_and_time_together_is_a_one_line_error(tmp_path):
    both = {"kind": "operators", "start_step": 5, "num_steps": 1, "start_unix_time": 1.8e9, "duration_s": 10}
    code = f"import stepscope.torch; stepscope.torch.instrument(detail=[{both!r}])"
    result = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120,
                            env=child_env({"STEPSCOPE_NODE_DIR": str(tmp_path / "job" / "n")}))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "ValueError: keyword argument detail: detail window 1: a window is steps or time, not both; "
        "give start_step and num_steps, or start_unix_time and duration_s")


def test_invalid_config_turns_instrumentation_off_with_the_reason(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"detail": [{"kind": "python", "start_step": 9, "num_steps": 0}]}))
    code = "import stepscope._autostart as a; a.main(); import torch; print('trained')"
    result = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120,
                            env=child_env({"STEPSCOPE_NODE_DIR": str(tmp_path / "job" / "n"),
                                           "STEPSCOPE_CONFIG": str(config)}))
    assert result.returncode == 0 and result.stdout == "trained\n"
    assert result.stderr.endswith(
        f"ValueError: config file '{config}': detail window 1: num_steps must be at least 1, not 0\n")


def test_launcher_refuses_a_window_with_both_forms(cli, tmp_path):
    config = write_config(tmp_path / "config.json", [
        {"kind": "dataloader", "start_step": 7, "num_steps": 1, "start_unix_time": 1.8e9, "duration_s": 10}])
    result = subprocess.run([cli, "run", "--out", str(tmp_path), "--config", str(config), "--", PYTHON, "-c", "pass"],
                            capture_output=True, text=True, timeout=60, env=child_env())
    assert result.returncode == 2
    assert "a window is steps or time, not both" in result.stderr and len(result.stderr.splitlines()) == 1
