"""A Python child of `stepscope run` records with no configuration, across fork, and loses
nothing when it is killed."""
import os
import sys
import signal
import subprocess
import time

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it

ANNOTATED = """
import stepscope
for i in range(5):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("forward"):
            pass
        stepscope.counter("loss", 1.0 / (i + 1))
with stepscope.step(phase="EVAL"):
    stepscope.mark("eval-done")
"""


def test_import_stepscope_calls_land_in_the_run(run_stepscope, info, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "py", "--node", "n", "--",
                           PYTHON, "-c", ANNOTATED)
    assert result.returncode == 0, result.stderr
    data = info(tmp_path / "py")
    assert data["counts"]["steps"]["TRAIN"] == 5
    assert data["counts"]["steps"]["EVAL"] == 1
    assert data["counts"]["spans"] == 5
    assert data["counts"]["counters"] == 5
    assert data["counts"]["instants"] == 2  # eval-done and Lifecycle:ProcessStart
    assert data["dropped_events"] == 0
    processes = [p for p in data["processes"] if p["kind"] == "process"]
    assert len(processes) == 1 and processes[0]["command"].startswith(PYTHON)


def test_forked_workers_record_into_their_own_streams(run_stepscope, info, tmp_path):
    script = """
import multiprocessing as mp, stepscope
ctx = mp.get_context("fork")
both_workers = ctx.Barrier(2)  # inherited by the forked workers
def work(n):
    # Each task waits for a task in the other worker: without it one worker can take all four
    # before the other starts, and a worker that records nothing has no stream (CI saw 1 of 2).
    both_workers.wait(timeout=60)
    for _ in range(n):
        with stepscope.annotate("work"):
            pass
    return n
if __name__ == "__main__":
    with ctx.Pool(2) as pool:
        assert sum(pool.map(work, [50, 50, 50, 50], chunksize=1)) == 200
"""
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "fork", "--node", "n", "--",
                           PYTHON, "-c", script)
    assert result.returncode == 0, result.stderr
    data = info(tmp_path / "fork")
    assert data["counts"]["spans"] == 200
    job_pid = data["nodes"][0]["pids"]["job"]
    workers = [p for p in data["processes"] if p["kind"] == "process" and p["pid"] != job_pid]
    assert len(workers) == 2  # the pool's two workers
    assert sum(p["events"] for p in workers) == 200
    (parent,) = [p for p in data["processes"] if p["pid"] == job_pid]
    assert parent["events"] == 1  # only Lifecycle:ProcessStart: the work ran in the workers
    assert data["bytes_on_disk"]["uncompacted_rings"] == 0


def test_a_job_killed_mid_stream_keeps_every_reported_event(cli, info, tmp_path):
    script = """
import stepscope, sys
i = 0
while True:
    stepscope.mark("tick")
    i += 1
    if i % 1000 == 0:
        print(i, flush=True)
"""
    proc = subprocess.Popen([cli, "run", "--out", str(tmp_path), "--job", "kill", "--node", "n", "--",
                             PYTHON, "-c", script], stdout=subprocess.PIPE, text=True)
    reported = 0
    for line in proc.stdout:
        reported = int(line)
        if reported >= 200000:
            break
    job_pid = None
    import json
    with open(tmp_path / "kill" / "n" / "manifest.json") as f:
        job_pid = json.load(f)["pids"]["job"]
    os.kill(job_pid, signal.SIGKILL)
    for line in proc.stdout:  # lines printed before the kill landed
        reported = int(line)
    assert proc.wait(timeout=60) == 128 + signal.SIGKILL
    data = info(tmp_path / "kill")
    recorded = data["counts"]["instants"]
    assert recorded >= reported, (recorded, reported)
    assert data["status"] == "killed"


def test_a_c_program_records_through_the_c_api(run_stepscope, info, tmp_path):
    program = os.environ["STEPSCOPE_C_EXAMPLE"]
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "c", "--node", "n", "--", program, "7")
    assert result.returncode == 0, result.stderr
    assert "recorded 43 events, dropped 0" in result.stdout  # 7 x (2 step + 2 span + arg + counter) + 1
    data = info(tmp_path / "c")
    assert data["counts"]["steps"]["TRAIN"] == 7
    assert data["counts"]["spans"] == 7
    assert data["counts"]["counters"] == 7
    assert data["counts"]["instants"] == 1
