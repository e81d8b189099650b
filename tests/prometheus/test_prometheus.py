"""A real Prometheus scrapes two running `stepscope run --metrics-port` nodes and evaluates the
rules `stepscope alerts` writes (issue 16 §2):

- both targets are up and the queries return each job's series under its stepscope_job/node;
- the CPUBottleneck alert fires during a job that keeps a core busy while its (fake) GPU idles,
  and not during a healthy job whose GPU is busy;
- a scrape answers the Prometheus text format.

The GPU comes from the fake NVML (tests/fakes/fake_nvml.cc) found under the soname the sampler
loads, scripted per launcher. Readiness is polled, never slept for; every wait is bounded.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

CLI = os.environ.get("STEPSCOPE_CLI", "stepscope")
FAKE_NVML = os.environ.get("STEPSCOPE_FAKE_NVML", "")
PROMETHEUS = shutil.which("prometheus")

# The alert rules for these jobs: 200 ms sampling, 1 s scrapes, and a patience of 20 samples
# (4 s), so a bottleneck shows within seconds instead of the default 500 s.
INTERVAL = "200ms"
SCRAPE = "1s"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout_s):
    """Polls check() until it returns something truthy; fails naming `what` after timeout_s."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (OSError, ValueError, KeyError) as error:  # not up yet
            last = error
        time.sleep(0.25)
    pytest.fail(f"{what} within {timeout_s} s (last: {last!r})")


def get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def query(prometheus_port, expr):
    url = f"http://127.0.0.1:{prometheus_port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    return json.loads(get(url))["data"]["result"]


@pytest.fixture
def fake_gpu_dir(tmp_path):
    assert FAKE_NVML and os.path.exists(FAKE_NVML), "STEPSCOPE_FAKE_NVML must name the fake NVML library"
    lib = tmp_path / "nvml"
    lib.mkdir()
    os.symlink(FAKE_NVML, lib / "libnvidia-ml.so.1")
    return lib


def start_node(tmp_path, fake_gpu_dir, job, gpu_util_pct, busy):
    script = tmp_path / f"{job}-nvml.json"
    script.write_text(json.dumps({"gpus": [{"name": "NVIDIA A10G", "utilization_gpu_pct": gpu_util_pct,
                                            "memory_total_bytes": 24 << 30, "memory_used_bytes": 2 << 30}]}))
    work = ("import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end:\n    pass\n" if busy
            else "import time\ntime.sleep(300)\n")
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_gpu_dir), STEPSCOPE_FAKE_NVML_SCRIPT=str(script))
    log = open(tmp_path / f"{job}.log", "w+")
    process = subprocess.Popen(
        [CLI, "run", "--out", str(tmp_path / "runs"), "--job", job, "--node", f"{job}-node", "--interval", INTERVAL,
         "--metrics-port", "0", "--no-torch", "--", sys.executable, "-c", work],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def port():
        log.seek(0)
        found = re.search(r"Prometheus metrics on http://127\.0\.0\.1:(\d+)/metrics", log.read())
        return int(found.group(1)) if found else None

    return process, wait_for(f"`stepscope run` of {job} to print its metrics port", port, 60), log


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_prometheus_scrapes_two_nodes_and_the_generated_alert_fires_only_on_the_bottleneck(tmp_path, fake_gpu_dir):
    assert PROMETHEUS, "prometheus is missing: install Debian's prometheus package (scripts/setup.sh does)"
    rules = tmp_path / "stepscope-alerts.yml"
    subprocess.run([CLI, "alerts", "--interval", INTERVAL, "--scrape-interval", SCRAPE,
                    "--rule", "CPUBottleneck.patience=20", "-o", str(rules)], check=True)

    busy, busy_port, busy_log = start_node(tmp_path, fake_gpu_dir, "bottleneck", 2, busy=True)
    healthy, healthy_port, healthy_log = start_node(tmp_path, fake_gpu_dir, "healthy", 95, busy=False)
    prometheus = None
    try:
        # The endpoint answers the text format before Prometheus is even there.
        text = wait_for("a scrape with GPU utilization",
                        lambda: (t := get(f"http://127.0.0.1:{busy_port}/metrics")) and
                        "stepscope_gpu_util_percent{" in t and t, 30)
        assert '# TYPE stepscope_cpu_util_percent gauge' in text
        assert 'stepscope_job="bottleneck",node="bottleneck-node"' in text

        prometheus_port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            f"global:\n  scrape_interval: {SCRAPE}\n  evaluation_interval: {SCRAPE}\n"
            f"rule_files:\n  - {rules}\n"
            "scrape_configs:\n  - job_name: stepscope\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{busy_port}', '127.0.0.1:{healthy_port}']\n")
        prometheus_log = open(tmp_path / "prometheus.log", "w")
        prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=prometheus_log, stderr=subprocess.STDOUT, start_new_session=True)

        def both_up():
            targets = json.loads(get(f"http://127.0.0.1:{prometheus_port}/api/v1/targets"))["data"]["activeTargets"]
            return len(targets) == 2 and all(t["health"] == "up" for t in targets)
        wait_for("Prometheus to scrape both nodes", both_up, 60)

        def series_of_both_jobs():
            result = query(prometheus_port, "stepscope_cpu_util_percent{cpu=\"total\"}")
            return {r["metric"]["stepscope_job"] for r in result} == {"bottleneck", "healthy"}
        wait_for("both jobs' CPU series in Prometheus", series_of_both_jobs, 30)
        gpu = query(prometheus_port, "stepscope_gpu_util_percent")
        assert {(r["metric"]["node"], r["metric"]["gpu"]) for r in gpu} == {("bottleneck-node", "0"), ("healthy-node", "0")}

        def firing():
            alerts = json.loads(get(f"http://127.0.0.1:{prometheus_port}/api/v1/alerts"))["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "StepscopeCPUBottleneck" and a["state"] == "firing"]
        fired = wait_for("the CPUBottleneck alert to fire on the busy job", firing, 90)
        assert {a["labels"]["stepscope_job"] for a in fired} == {"bottleneck"}
        assert fired[0]["labels"]["stepscope_rule"] == "CPUBottleneck"
        # A few more evaluations: the healthy job (busy GPU) never joins.
        time.sleep(3)
        assert {a["labels"]["stepscope_job"] for a in firing()} == {"bottleneck"}
    finally:
        if prometheus is not None:
            prometheus.terminate()
            prometheus.wait(timeout=30)
        stop(busy)
        stop(healthy)
        busy_log.close()
        healthy_log.close()
