"""`stepscope run` on a (fake) GPU whose clocks a power cap holds down and that reports an Xid
error (issue 15 §3): the launcher loads NVML by its soname, the sampler records the deeper
readings, the manifest names what the driver left out, and `stepscope rules` turns the run into
GPUThrottling and GPUErrors findings.

The GPU is the fake NVML (tests/fakes/fake_nvml.cc) found under libnvidia-ml.so.1 through
LD_LIBRARY_PATH, as tests/prometheus does. The job ends once the run holds the samples it needs,
never after a fixed time.
"""
import json
import os
import sys

import pytest

PYTHON = sys.executable
FAKE_NVML = os.environ.get("STEPSCOPE_FAKE_NVML", "")

SCRIPT = {
    "driver_version": "550.54.15",
    "gpus": [{"name": "NVIDIA A10G", "utilization_gpu_pct": 90, "memory_total_bytes": 24 << 30,
              "memory_used_bytes": 2 << 30, "power_mw": 150000, "temperature_c": 80, "sm_clock_mhz": 1200,
              "pcie_tx_kb_per_s": 1000, "pcie_rx_kb_per_s": 2000,
              "clock_event_reasons": 4,  # power cap, every poll
              "ecc_corrected": 0, "ecc_uncorrected": 0,
              "xid_events": [{"at": 2, "xid": 79}]}],
}

WAIT_FOR_SAMPLES = """
import collections, os, time
from stepscope import _core
deadline = time.monotonic() + 60  # only so a broken sampler fails instead of hanging
while time.monotonic() < deadline:
    counts = collections.Counter(e["name"] for e in _core.read_run(os.environ["STEPSCOPE_NODE_DIR"])["events"]
                                 if e["kind"] == "sample")
    if counts["gpu/gpu0/throttle_power_cap"] >= 15 and counts["gpu/gpu0/xid"] >= 1:
        break
    time.sleep(0.05)
"""


@pytest.fixture
def fake_gpu_env(tmp_path):
    if not FAKE_NVML or not os.path.exists(FAKE_NVML):
        pytest.fail("STEPSCOPE_FAKE_NVML must name the fake NVML library (tests/CMakeLists.txt sets it)")
    lib = tmp_path / "nvml"
    lib.mkdir()
    os.symlink(FAKE_NVML, lib / "libnvidia-ml.so.1")
    script = tmp_path / "nvml.json"
    script.write_text(json.dumps(SCRIPT))
    return dict(os.environ, LD_LIBRARY_PATH=str(lib), STEPSCOPE_FAKE_NVML_SCRIPT=str(script))


def test_a_power_capped_gpu_with_an_xid_is_recorded_and_found(run_stepscope, info, tmp_path, fake_gpu_env):
    result = run_stepscope("run", "--out", str(tmp_path), "--job", "gpu", "--node", "n", "--interval", "50ms",
                           "--no-torch", "--", PYTHON, "-c", WAIT_FOR_SAMPLES, env=fake_gpu_env)
    assert result.returncode == 0, result.stderr
    by_metric = info(tmp_path / "gpu")["counts"]["system_samples_by_metric"]
    for metric in ("gpu/gpu0/util_pct", "gpu/gpu0/pcie_tx_bytes_per_s", "gpu/gpu0/throttle_power_cap",
                   "gpu/gpu0/throttle_idle", "gpu/gpu0/ecc_uncorrected_errors"):
        assert by_metric.get(metric, 0) >= 15, metric
    assert by_metric.get("gpu/gpu0/xid") == 1

    with open(tmp_path / "gpu" / "n" / "manifest.json") as f:
        gpu = json.load(f)["capabilities"]["gpu"]
    assert gpu["available"] and gpu["gpus"] == ["NVIDIA A10G"]
    absent = gpu["metrics_absent"]
    assert "gpu0 (NVIDIA A10G): GPM SM and tensor activity absent: GPM needs a Hopper or newer GPU" in absent
    # The fake lists no process: NVML's NOT_SUPPORTED, asked for the job's processes.
    assert any(line.startswith("gpu0 (NVIDIA A10G): per-process GPU memory absent: ") for line in absent), absent

    rules = run_stepscope("rules", str(tmp_path / "gpu"), "--json")
    assert rules.returncode == 0, rules.stderr
    findings = {finding["id"]: finding for rule in json.loads(rules.stdout)["rules"]
                for finding in rule.get("findings", [])}
    throttling = findings["GPUThrottling/n/gpu0"]
    assert throttling["title"].startswith("gpu0 on n was throttled 100.0 % of training time (power cap 100.0 %)")
    assert throttling["severity"] == "warning"
    xid = findings["GPUErrors/n/gpu0/xid"]
    assert xid["severity"] == "critical"
    assert xid["title"] == "gpu0 on n reported 1 Xid error (Xid 79)"
