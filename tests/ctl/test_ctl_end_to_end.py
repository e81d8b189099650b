"""`stepscope ctl` under the real CLI: live interval changes, control files seen by the job's
Python processes, ended runs, bad values, several nodes."""
import json
import os
import sys
import time

from ctl_helpers import read_json, wait_for_line, wait_for_manifest_controls, wait_until, wait_until_running

# A job that watches for control files at every "step" as the detail-window engine does, records
# what it applied, and prints its progress. It makes at least `min_steps` steps and then runs
# until the test creates `stop`: the test, not the machine's speed, decides what it has seen.
JOB = """
import os, sys, time
from stepscope import _config
watcher = _config.ControlWatcher()
step = 0
while step < {min_steps} or not os.path.exists({stop!r}):
    for control in watcher.poll():
        if "detail" in control:
            _config.record_applied(control, {{"detail": control["detail"]}})
        print("control", control["sequence"], sorted(control), flush=True)
    print("step", step, flush=True)
    step += 1
    time.sleep(0.05)
print("listings", watcher.listings, "steps", step, flush=True)
"""


def samples_of(core, run_dir, metric="memory/used_pct"):
    events = core.read_run(str(run_dir))["events"]
    return sorted(e["start_ns"] for e in events if e["kind"] == "sample" and e["name"] == metric)


def at_most_on_grid(timestamps, interval_ns):
    """The most samples a sampler on a grid of `interval_ns` can take in [first, last]: it polls
    at or after each deadline and skips passed ones, so all but the first poll of a span have
    their own deadline inside it. Late polls only make fewer; no scheduler makes more."""
    return (timestamps[-1] - timestamps[0]) // interval_ns + 2


def test_ctl_interval_changes_the_sampling_interval_mid_run(cli, run_stepscope, start_job, core, tmp_path):
    stop = tmp_path / "stop"
    job = start_job(["--out", str(tmp_path), "--job", "live", "--node", "n", "--interval", "1s"],
                    JOB.format(min_steps=100, stop=str(stop)))
    node_dir = tmp_path / "live" / "n"
    wait_until_running(node_dir)
    wait_for_line(job, "step 1")
    wait_until(lambda: len(samples_of(core, tmp_path / "live")) >= 2, "two samples at the old interval")
    requested_ns = time.time_ns()
    result = run_stepscope("ctl", str(tmp_path / "live"), "--interval", "100ms", "--python-steps", "300:2")
    assert result.returncode == 0, result.stderr
    assert "node n: scheduled control 1" in result.stdout
    assert "system sampling interval 100ms" in result.stdout
    assert "python steps 300-301 (TRAIN, cprofile, timer cycle)" in result.stdout
    control_line = wait_for_line(job, "control ")
    assert control_line == "control 1 ['detail', 'interval_ns', 'sequence', 'time_ns']"
    # The launcher applied it (it looks about once a second), and sampled after it.
    (entry,) = wait_for_manifest_controls(node_dir, 1)
    wait_until(lambda: len([t for t in samples_of(core, tmp_path / "live") if t > entry["applied_at_ns"]]) >= 3,
               "three samples after the change")
    stop.touch()
    stdout, stderr = job.communicate(timeout=60)
    assert job.returncode == 0, stderr

    manifest = read_json(node_dir / "manifest.json")
    (entry,) = manifest["control"]
    assert entry["sequence"] == 1
    assert requested_ns <= entry["time_ns"] <= entry["applied_at_ns"]
    assert entry["changes"]["interval_ns"] == 100_000_000
    assert entry["changes"]["previous_interval_ns"] == 1_000_000_000
    assert entry["changes"]["detail"][0]["start_step"] == 300
    assert "error" not in entry
    assert manifest["sampler"]["final_interval_ns"] == 100_000_000

    # No more samples than each interval's grid allows, before and after the change. (That the
    # sampler polls on the new grid from the next deadline is system_sampler_unittest.cc's, with a
    # manual clock: here how many polls a loaded machine fits in a span is not checked.)
    timestamps = samples_of(core, tmp_path / "live")
    applied = entry["applied_at_ns"]
    before = [t for t in timestamps if t < applied]
    after = [t for t in timestamps if t > applied]
    assert len(before) >= 2 and len(before) <= at_most_on_grid(before, 1_000_000_000), before
    assert len(after) >= 3 and len(after) <= at_most_on_grid(after, 100_000_000), after

    # The job's process recorded what it applied.
    events = core.read_run(str(tmp_path / "live"))["events"]
    (control,) = [e for e in events if e["kind"] == "instant" and e["name"] == "Control"]
    assert control["args"]["sequence"] == 1
    assert json.loads(control["args"]["changes"])["detail"][0]["start_step"] == 300
    # Polling is cheap: 100 polls or more listed the control directory only when it changed.
    listings, steps = [int(word) for word in stdout.split("listings")[1].split() if word.isdigit()]
    assert listings <= 6 and steps >= 100, (listings, steps)


def test_ctl_on_an_ended_run_says_so(run_stepscope, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "done", "--node", "n", "--",
                           sys.executable, "-c", "pass")
    assert result.returncode == 0, result.stderr
    for run in (tmp_path / "done", tmp_path / "done" / "n"):
        ended = run_stepscope("ctl", str(run), "--interval", "100ms")
        assert ended.returncode == 1
        assert "already ended (exited with code 0)" in ended.stderr
        assert ended.stderr.count("\n") == 1
    assert not os.listdir(tmp_path / "done" / "n" / "control")

    missing = run_stepscope("ctl", str(tmp_path / "nope"), "--interval", "100ms")
    assert missing.returncode == 1
    assert "does not exist" in missing.stderr
    wrong_node = run_stepscope("ctl", str(tmp_path / "done"), "--node", "m", "--interval", "100ms")
    assert wrong_node.returncode == 1
    assert "has no node 'm'; its nodes: n" in wrong_node.stderr


def test_ctl_rejects_bad_values_with_exit_2(run_stepscope, tmp_path):
    cases = [
        (["--interval", "5ms"], "--interval: interval 5ms is out of range"),
        (["--interval", "soon"], "not a duration"),
        (["--python-steps", "9-11"], "--python-steps: '9-11' is not START:COUNT"),
        (["--detailed-steps", "5:0"], "--detailed-steps: num_steps must be at least 1"),
        (["--dataloader-steps", "-1:2"], "--dataloader-steps: "),
        ([], "nothing to change"),
        (["--colour", "red"], "colour"),
    ]
    for args, expected in cases:
        result = run_stepscope("ctl", str(tmp_path), *args)
        assert result.returncode == 2, (args, result.stderr)
        assert expected in result.stderr, (args, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr


def test_ctl_without_node_applies_to_every_running_node(cli, run_stepscope, start_job, tmp_path):
    stop = tmp_path / "stop"
    jobs = [start_job(["--out", str(tmp_path), "--job", "multi", "--node", node],
                      JOB.format(min_steps=0, stop=str(stop)))
            for node in ("algo-1", "algo-2")]
    for node in ("algo-1", "algo-2"):
        wait_until_running(tmp_path / "multi" / node)
    for job in jobs:
        wait_for_line(job, "step 5")
    result = run_stepscope("ctl", str(tmp_path / "multi"), "--detailed-steps", "200:3")
    assert result.returncode == 0, result.stderr
    assert "node algo-1: scheduled control 1" in result.stdout
    assert "node algo-2: scheduled control 1" in result.stdout
    assert "operators steps 200-202 (TRAIN)" in result.stdout
    one = run_stepscope("ctl", str(tmp_path / "multi"), "--node", "algo-2", "--interval", "200ms")
    assert one.returncode == 0, one.stderr
    assert "node algo-2: scheduled control 2" in one.stdout and "algo-1" not in one.stdout
    for job in jobs:
        assert wait_for_line(job, "control 1").startswith("control 1 ['detail'")
    # Each launcher applied its controls (it looks about once a second) before its job ends.
    wait_for_manifest_controls(tmp_path / "multi" / "algo-1", 1)
    wait_for_manifest_controls(tmp_path / "multi" / "algo-2", 2)
    stop.touch()
    for job in jobs:
        job.communicate(timeout=60)
        assert job.returncode == 0
    first = read_json(tmp_path / "multi" / "algo-1" / "manifest.json")["control"]
    second = read_json(tmp_path / "multi" / "algo-2" / "manifest.json")["control"]
    assert [e["sequence"] for e in first] == [1]
    assert [e["sequence"] for e in second] == [1, 2]
    assert first[0]["changes"] == {"detail": [{
        "kind": "operators", "start_step": 200, "num_steps": 3, "start_unix_time": None, "duration_s": None,
        "phase": "TRAIN", "profiler": None, "timer": None}]}
    assert second[1]["changes"]["interval_ns"] == 200_000_000
    body = read_json(tmp_path / "multi" / "algo-2" / "control" / "2.json")
    assert set(body) == {"sequence", "time_ns", "interval_ns"} and body["sequence"] == 2
