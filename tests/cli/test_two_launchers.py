"""Two `stepscope run` launchers aimed at one run directory (issue 12): the same script started twice
in one second got the same default job name, the second launcher emptied the first's mapped ring,
and the first died of SIGBUS with its job orphaned and its samples lost. Now the second gets a
directory of its own (default job name) or a one-line error (a job name the user chose), and the
first finishes normally with all its data."""
import json
import os
import subprocess
import sys
import time

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it

# Records three TRAIN steps, says "ready", waits for the stop file named by argv[1], then records
# three more: the second launcher starts while this job is alive and writing.
WAIT_FOR_STOP = """
import os, sys, time, stepscope
for _ in range(3):
    with stepscope.step(phase="TRAIN"):
        pass
print("ready", flush=True)
deadline = time.monotonic() + 120  # only so a broken test fails instead of hanging
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.02)
for _ in range(3):
    with stepscope.step(phase="TRAIN"):
        pass
"""

TWO_STEPS = """
import stepscope
for _ in range(2):
    with stepscope.step(phase="TRAIN"):
        pass
"""


def manifest(node_dir):
    with open(os.path.join(node_dir, "manifest.json")) as f:
        return json.load(f)


def test_a_second_launcher_on_the_same_job_is_refused_and_the_first_finishes_whole(cli, run_stepscope, info,
                                                                                      tmp_path):
    stop = tmp_path / "stop"
    first = subprocess.Popen([cli, "run", "--out", str(tmp_path), "--job", "same", "--node", "n", "--no-detail",
                              "--interval", "50ms", "--", PYTHON, "-c", WAIT_FOR_STOP, str(stop)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "ready"
        second = run_stepscope("run", "--out", str(tmp_path), "--job", "same", "--node", "n", "--no-detail", "--",
                               PYTHON, "-c", "print('second job ran')", timeout=60)
    finally:
        stop.write_text("")
    _, first_stderr = first.communicate(timeout=120)

    assert second.returncode == 1, second.stderr
    assert "second job ran" not in second.stdout
    assert second.stderr == (f"stepscope run: '{tmp_path}/same/n' already holds a run (it has a manifest.json), and "
                             "two runs never share a directory; pass another --job NAME or --out DIR\n")
    assert first.returncode == 0, first_stderr
    m = manifest(tmp_path / "same" / "n")
    assert m["status"] == "exited" and m["exit"]["code"] == 0
    assert m["command"][-1] == str(stop)  # the first launcher's manifest, not overwritten
    data = info(tmp_path / "same")
    assert data["counts"]["steps"]["TRAIN"] == 6
    assert data["counts"]["system_samples"] > 0
    assert data["bytes_on_disk"]["uncompacted_rings"] == 0


def start_together(cli, out, script):
    """Two launchers of `script` with the default job name, started together early in a second so
    that both name their job after the same second."""
    time.sleep(1.05 - time.time() % 1.0)
    return [subprocess.Popen([cli, "run", "--out", str(out), "--node", "n", "--no-detail", "--", PYTHON, str(script)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]


def test_the_same_script_started_twice_in_one_second_gets_two_run_directories(cli, info, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TWO_STEPS)
    # Started together early in a second, the two launchers name their jobs after that second; on
    # a machine so loaded that one starts a second later, the pair is tried again.
    for attempt in range(5):
        out = tmp_path / f"runs{attempt}"
        launchers = start_together(cli, out, script)
        results = [(launcher.wait(timeout=120), launcher.communicate()[1]) for launcher in launchers]
        for code, stderr in results:
            assert code == 0, stderr
        jobs = sorted(os.listdir(out))
        if len(jobs) == 2 and jobs[1] == jobs[0] + "-2":
            break
    else:
        raise AssertionError(f"the launchers never started in the same second: {jobs}")

    assert jobs[0].startswith("train-20") and jobs[0].endswith("Z")
    printed = sorted(stderr.split("stepscope: run directory ")[1].split("\n")[0] for _, stderr in results)
    assert printed == [str(out / job) for job in jobs]
    for job in jobs:
        m = manifest(out / job / "n")
        assert m["job"] == job and m["config"]["job"]["value"] == job
        assert m["status"] == "exited" and m["exit"]["code"] == 0
        data = info(out / job)
        assert data["counts"]["steps"]["TRAIN"] == 2
        assert data["counts"]["system_samples"] > 0
