"""Jobs that end badly keep what they recorded: a script that raises mid-epoch and one that is
SIGKILLed mid-epoch (spec §3: crash-safe; docs/pytorch.md: a step ends at exit)."""

import collections
import json
import os
import signal

from torch_runs import EXAMPLES, LIFECYCLE, TorchRun, launch

Counter = collections.Counter


def test_a_script_that_raises_keeps_every_step(run_example):
    samples, batch, raise_at = 80, 16, 3  # 5 batches per epoch; batch 3 of epoch 2 raises
    run = run_example("raises_mid_epoch.py", "--samples", samples, "--batch-size", batch,
                      "--raise-at", raise_at)
    assert run.returncode == 1, run.describe()  # Python's exit code, passed through
    assert "BadBatchError: bad batch 3 in epoch 2" in run.stderr
    completed = run.printed("completed_steps")
    assert completed == 5 + raise_at == 8
    # The completed steps, then the one that raised: it ends when the exception leaves the loop
    # (the iterator is dropped) or at exit at the latest, so nothing is left unfinished.
    assert run.phase_sequence() == [("TRAIN", n) for n in range(completed + 1)]
    assert run.of_kind("step") == run.steps()
    inside, outside = run.spans_by_step()
    for step, names in inside[:completed]:
        assert names == Counter(DataLoaderIter=1, Forward=1, Backward=1, OptimizerStep=1), step
    failed_step, names = inside[completed]
    assert names == Counter(DataLoaderIter=1, Forward=1)  # raised after the forward
    assert outside == Counter(DataLoaderIter=1)  # epoch 1's end
    [exit_mark] = run.instants("Lifecycle:Exit")
    assert failed_step["end_ns"] <= exit_mark["start_ns"]
    assert Counter(e["name"] for e in run.instants() if e["name"].startswith("Lifecycle:")) \
        == Counter(LIFECYCLE)
    assert all(not s["unfinished"] for s in run.spans())


def test_a_job_killed_mid_epoch_keeps_every_reported_step(cli, run_stepscope_info, tmp_path):
    script = os.path.join(EXAMPLES, "killed_mid_epoch.py")
    process = launch(cli, tmp_path, "killed", [script, "--samples", 320, "--batch-size", 16])
    reported = []
    try:
        for line in process.stdout:
            if line.startswith("step "):
                reported.append(int(line.split()[1]))
                if len(reported) == 150:  # epoch 7, batch 10 of 20: mid-epoch
                    break
        with open(tmp_path / "killed" / "n" / "manifest.json") as f:
            job_pid = json.load(f)["pids"]["job"]
        os.kill(job_pid, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=60)
    except BaseException:
        process.kill()
        process.wait()
        raise
    reported += [int(line.split()[1]) for line in stdout.splitlines() if line.startswith("step ")]
    assert process.returncode == 128 + signal.SIGKILL, stderr
    assert reported == list(range(len(reported))) and len(reported) >= 150

    run = TorchRun(tmp_path / "killed", process.returncode, stdout, stderr)
    assert run.manifest["status"] == "killed"
    finished = run.steps()
    assert [s["phase"] for s in finished] == ["TRAIN"] * len(finished)
    assert [s["step"] for s in finished] == list(range(len(finished)))
    open_steps = [s for s in run.of_kind("step") if s["unfinished"]]
    # A step is reported after its optimizer step; it ends when the loop asks for the next
    # batch. So the last reported step is finished, or it is the one step left open.
    assert len(finished) >= len(reported) - 1
    assert len(finished) + len(open_steps) >= len(reported)
    assert len(open_steps) <= 1
    for step in open_steps:
        assert step["start_ns"] >= finished[-1]["end_ns"]
    # The step cut short keeps the phase predicted when it began (TRAIN) and counts as one.
    assert [s["phase"] for s in open_steps] == ["TRAIN"] * len(open_steps)
    assert run_stepscope_info(run.dir)["counts"]["steps"]["TRAIN"] == len(finished) + len(open_steps)
    # Killed: no exit or last-step marks, and nothing was dropped.
    names = Counter(e["name"] for e in run.instants() if e["name"].startswith("Lifecycle:"))
    assert names == Counter(["Lifecycle:ProcessStart", "Lifecycle:FirstStep"])
    assert all(s["dropped_events"] == 0 for s in run.streams)
