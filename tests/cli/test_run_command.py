"""`stepscope run`: exit codes, signals, the manifest, option errors, and recording in the child."""
import json
import os
import sys
import signal
import subprocess
import time

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it


def manifest(run_dir, node):
    with open(os.path.join(run_dir, node, "manifest.json")) as f:
        return json.load(f)


# Every metric family the launcher samples on Linux without a GPU, the job's process tree included.
METRICS = ("cpu/cpu0/util_pct", "cpu/total/iowait_pct", "memory/used_pct", "network/rx_bytes_per_s",
           "disk/read_bytes_per_s", "process/rss_bytes")

# A job that ends once its run holds three samples of every family (rates need two polls): how
# many polls fit in a given time is the machine's business, not this test's.
WAIT_FOR_SAMPLES = f"""
import collections, os, time
from stepscope import _core
deadline = time.monotonic() + 60  # only so a broken sampler fails instead of hanging
while time.monotonic() < deadline:
    counts = collections.Counter(e["name"] for e in _core.read_run(os.environ["STEPSCOPE_NODE_DIR"])["events"]
                                 if e["kind"] == "sample")
    if all(counts[metric] >= 3 for metric in {METRICS!r}):
        break
    time.sleep(0.05)
"""


def test_exit_code_and_manifest_of_a_normal_run(run_stepscope, info, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "ok", "--node", "algo-1",
                           "--interval", "50ms", "--", PYTHON, "-c", WAIT_FOR_SAMPLES)
    assert result.returncode == 0, result.stderr
    assert f"run directory {tmp_path}/ok" in result.stderr
    m = manifest(tmp_path / "ok", "algo-1")
    assert m["status"] == "exited" and m["exit"]["code"] == 0
    assert m["job"] == "ok" and m["node"] == "algo-1"
    assert m["command"] == [PYTHON, "-c", WAIT_FOR_SAMPLES]
    assert m["config"]["interval"]["value"] == "50ms" and m["config"]["interval"]["from"] == "flag"
    assert m["pids"]["job"] > 0
    for capability in ("gpu", "nvml", "cupti", "perf_counters"):
        assert capability in m["capabilities"]
    assert m["end_time_ns"] > m["start_time_ns"]
    data = info(tmp_path / "ok")
    assert data["status"] == "exited"
    by_metric = data["counts"]["system_samples_by_metric"]
    for metric in METRICS:
        assert by_metric.get(metric, 0) >= 3, metric
    assert data["bytes_on_disk"]["uncompacted_rings"] == 0


PERF_EVENTS = ["cycles", "instructions", "cache-misses", "branch-misses", "task-clock", "context-switches",
               "page-faults", "cpu-migrations"]


def test_perf_counters_are_counted_or_say_why_not_and_counted_ones_are_sampled(run_stepscope, info, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "perf", "--node", "n", "--interval", "50ms",
                           "--", PYTHON, "-c", WAIT_FOR_SAMPLES)
    assert result.returncode == 0, result.stderr
    perf = manifest(tmp_path / "perf", "n")["capabilities"]["perf_counters"]
    assert perf["scope"] in ("per_cpu", "job", "none")
    assert [e["name"] for e in perf["events"]] == PERF_EVENTS
    for event in perf["events"]:
        # Never silently nothing: counted, or absent with the kernel's reason.
        assert event["counted"] or event["reason"], event
    assert perf["available"] == any(e["counted"] for e in perf["events"])
    assert perf["reason"]  # what is counted where, and why not the rest
    by_metric = info(tmp_path / "perf")["counts"]["system_samples_by_metric"]
    perf_metrics = [name for name in by_metric if name.startswith("perf/")]
    if perf["scope"] == "none":
        assert perf_metrics == []
    else:
        scope = "total" if perf["scope"] == "per_cpu" else "job"
        counted = {e["name"] for e in perf["events"] if e["counted"]}
        if "page-faults" in counted:
            assert by_metric.get(f"perf/{scope}/page_faults_per_s", 0) >= 1, perf_metrics
        if {"cycles", "instructions"} <= counted:
            assert by_metric.get(f"perf/{scope}/ipc", 0) >= 1, perf_metrics
    text = run_stepscope("info", str(tmp_path / "perf"))
    assert "perf: " + perf["reason"] in text.stdout


def test_the_jobs_exit_code_is_passed_through(run_stepscope, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "three", "--",
                           PYTHON, "-c", "raise SystemExit(3)")
    assert result.returncode == 3
    assert manifest(tmp_path / "three", os.uname().nodename)["exit"]["code"] == 3


def test_a_killed_job_gives_128_plus_signal_and_the_manifest_says_so(run_stepscope, info, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "killed", "--node", "n", "--",
                           PYTHON, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert result.returncode == 128 + signal.SIGKILL
    m = manifest(tmp_path / "killed", "n")
    assert m["status"] == "killed"
    assert m["exit"]["signal_name"] == "SIGKILL"
    assert info(tmp_path / "killed")["ended"]["description"] == "killed by SIGKILL"


def test_sigterm_to_the_launcher_reaches_the_job(cli, tmp_path):
    marker = tmp_path / "got-sigterm"
    # The job takes SIGTERM with sigwait(), which cannot miss it. A Python handler and
    # time.sleep() can: CPython runs handlers between bytecodes, so a SIGTERM arriving after the
    # last check before time.sleep() enters the kernel waits out the whole sleep (this test
    # failed that way, the signal sent on 'ready' landing in that window). Blocking SIGTERM in
    # the job's main thread also leaves stepscope's own threads as the only ones that could take
    # it: they must not (src/recorder/recorder.cc), or the job dies of it before sigwait returns.
    script = (
        "import signal, sys\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
        "print('ready', flush=True)\n"
        "signal.sigwait({signal.SIGTERM})\n"
        f"open({str(marker)!r}, 'w').write('yes')\n"
        "sys.exit(7)\n")
    proc = subprocess.Popen([cli, "run", "--out", str(tmp_path), "--job", "term", "--node", "n", "--",
                             PYTHON, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 7, stderr
    assert marker.read_text() == "yes"
    assert manifest(tmp_path / "term", "n")["exit"]["code"] == 7


def test_default_job_name_is_script_and_utc_time(run_stepscope, tmp_path):
    script = tmp_path / "train_model.py"
    script.write_text("pass\n")
    result = run_stepscope("run", "--out", str(tmp_path / "runs"), PYTHON, str(script))
    assert result.returncode == 0, result.stderr
    (job,) = os.listdir(tmp_path / "runs")
    assert job.startswith("train_model-20") and job.endswith("Z")


def test_config_file_environment_and_flags_in_that_precedence(run_stepscope, tmp_path):
    config = tmp_path / "stepscope.toml"
    config.write_text('interval = "1s"\nnode = "from-file"\njob = "from-file"\n')
    env = dict(os.environ, STEPSCOPE_JOB="from-env", STEPSCOPE_INTERVAL="200ms")
    result = run_stepscope("run", "--config", str(config), "--out", str(tmp_path), "--interval", "100ms",
                           "--", "true", env=env)
    assert result.returncode == 0, result.stderr
    m = manifest(tmp_path / "from-env", "from-file")
    assert m["config"]["interval"] == {"value": "100ms", "ns": 100000000, "from": "flag"}
    assert m["config"]["job"]["from"] == "environment"
    assert m["config"]["node"]["from"] == "config file"


def test_bad_options_are_one_line_errors_with_exit_2(run_stepscope, tmp_path):
    cases = [
        (["run", "--bogus", "--", "true"], "--bogus"),
        (["run", "--interval", "5ms", "--", "true"], "10ms to 60s"),
        (["run", "--interval", "soon", "--", "true"], "not a duration"),
        (["run", "--job", "a/b", "--", "true"], "cannot be a directory name"),
        (["run", "--config", str(tmp_path / "missing.toml"), "--", "true"], "missing.toml"),
        (["run", "--out", str(tmp_path)], "no command given"),
        (["frobnicate"], "frobnicate"),
        ([], "subcommand"),
    ]
    for args, expected in cases:
        result = run_stepscope(*args)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (args, result.stderr)
        assert expected in lines[0], (args, lines[0])
        assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_a_command_that_cannot_run_is_named(run_stepscope, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "nope", "--", "no-such-program-xyz")
    assert result.returncode == 127
    assert "cannot run 'no-such-program-xyz'" in result.stderr
    assert manifest(tmp_path / "nope", os.uname().nodename)["status"] == "failed-to-start"


def test_an_unwritable_output_directory_is_a_one_line_error(run_stepscope, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_stepscope("run", "--out", str(blocker / "runs"), "--", "true")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--out" in result.stderr


def test_help_lists_the_options(run_stepscope):
    result = run_stepscope("run", "--help")
    assert result.returncode == 0
    for option in ("--out", "--job", "--node", "--interval", "--config"):
        assert option in result.stdout


def test_info_on_a_missing_run_says_what_to_pass(run_stepscope, tmp_path):
    result = run_stepscope("info", str(tmp_path / "nothing-here"))
    assert result.returncode == 1
    assert "stepscope run" in result.stderr


def test_info_on_a_file_says_it_is_a_file_and_which_directory_to_pass(run_stepscope, tmp_path):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "j", "--node", "n", "--no-detail", "--",
                           sys.executable, "-c", "pass")
    assert result.returncode == 0, result.stderr
    manifest = tmp_path / "j" / "n" / "manifest.json"
    result = run_stepscope("info", str(manifest))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"stepscope info: '{manifest}' is a file, not a run directory; pass the directory that "
                             f"holds the run ('{tmp_path / 'j' / 'n'}' if the file is in one), as `stepscope run` "
                             "printed it\n")
    assert run_stepscope("info", str(manifest.parent)).returncode == 0


def test_nodes_of_one_job_write_their_own_directories(run_stepscope, info, tmp_path):
    for node in ("algo-1", "algo-2"):
        result = run_stepscope("run", "--out", str(tmp_path), "--job", "multi", "--node", node,
                               "--interval", "50ms", "--", PYTHON, "-c", "import time; time.sleep(0.2)")
        assert result.returncode == 0, result.stderr
    data = info(tmp_path / "multi")
    assert sorted(n["name"] for n in data["nodes"]) == ["algo-1", "algo-2"]
    systems = [p for p in data["processes"] if p["kind"] == "system"]
    assert sorted(p["node"] for p in systems) == ["algo-1", "algo-2"]
    # One node directory on its own is a run too.
    assert [n["name"] for n in info(tmp_path / "multi" / "algo-2")["nodes"]] == ["algo-2"]


def test_a_command_line_that_is_not_utf8_neither_aborts_the_launcher_nor_the_job(cli, info, tmp_path):
    # The manifest (launcher) and the stream description (the job's recorder) both hold the command
    # line; encoding it as JSON threw on the byte 0xff, and each process died of SIGABRT.
    result = subprocess.run([cli, "run", "--out", str(tmp_path), "--job", "bytes", "--node", "n", "--no-detail",
                             "--", PYTHON, "-c", "import stepscope; stepscope.mark('ran')", b"caf\xff"],
                            capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    m = manifest(tmp_path / "bytes", "n")
    assert m["status"] == "exited" and m["command"][-1] == "caf\ufffd"
    assert info(tmp_path / "bytes")["counts"]["instants"] >= 1
