"""`stepscope ctl --detailed-steps` while the job runs: the job's main process picks the control
file up (a thread looks once a second), adds the window at its next step boundary and records a
Control instant. The loop waits at step 5 until its control thread has the file (train_loop.py's
--wait-for-control-at), so that boundary is step 5's end however slowly the thread runs."""

import json
import subprocess

from conftest import PYTHON, NODE, DetailRun, child_env, script


def test_ctl_adds_an_operators_window_to_a_running_job(cli, tmp_path):
    command = [cli, "run", "--out", str(tmp_path), "--job", "ctl", "--node", NODE, "--no-detail", "--", PYTHON,
               script("train_loop.py"), "--steps", "30", "--workers", "0", "--sleep", "0.01",
               "--wait-for-control-at", "5"]
    job = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=child_env())
    try:
        lines = []
        for line in job.stdout:
            lines.append(line)
            if line.startswith("waiting_at=5"):
                break
        ctl = subprocess.run([cli, "ctl", str(tmp_path / "ctl"), "--detailed-steps", "20:2"], capture_output=True,
                             text=True, timeout=60, env=child_env())
        assert ctl.returncode == 0, ctl.stderr
        stdout, stderr = job.communicate(timeout=180)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    run = DetailRun(tmp_path / "ctl", subprocess.CompletedProcess(command, job.returncode, "".join(lines) + stdout,
                                                                  stderr))
    doc = run.doc("operators")
    assert doc["window"] == {"kind": "operators", "start_step": 20, "num_steps": 2, "start_unix_time": None,
                             "duration_s": None, "phase": "TRAIN", "profiler": None, "timer": None,
                             "source": "control", "index": 0}
    assert (doc["steps"], doc["complete"]) == ([20, 21], True)
    assert {row["name"]: row["calls"] for row in doc["operators"]}["Optimizer.step#SGD.step"] == 2
    (control,) = [e for e in run.events if e["kind"] == "instant" and e["name"] == "Control"]
    assert control["pid"] == run.main_pid and control["args"]["sequence"] == 1
    window = {"duration_s": None, "kind": "operators", "num_steps": 2, "phase": "TRAIN", "profiler": None,
              "start_step": 20, "start_unix_time": None, "timer": None}
    assert json.loads(control["args"]["changes"]) == {"detail": [window], "windows": [0]}
    steps = run.steps()
    assert steps[5]["end_ns"] <= control["start_ns"] <= steps[6]["end_ns"]  # applied at step 5's end
