"""Fixtures for the end-to-end tests of `stepscope export` (docs/exports.md).

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/export
"""
import json
import os
import sys
import shutil

import pytest

from cli_fixtures import cli, stepscope  # noqa: F401 (pytest fixtures, tests/cli_fixtures.py)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
SKIP_RETURN_CODE = 77

# Steps with nested spans, framework counters and a second thread whose spans overlap the main
# thread's in time (separate thread: no overflow needed); it ends once the run holds a CPU
# utilization sample (a rate: the sampler's second poll), however long a loaded machine takes.
TRAINING = """
import os, threading, time
import stepscope
from stepscope import _core

def worker():
    for _ in range(4):
        with stepscope.annotate("prefetch"):
            time.sleep(0.02)

thread = threading.Thread(target=worker)
thread.start()
for i in range(6):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("forward"):
            with stepscope.annotate("matmul"):
                time.sleep(0.01)
        with stepscope.annotate("backward"):
            time.sleep(0.01)
        stepscope.counter("loss", 1.0 / (i + 1))
thread.join()
with stepscope.step(phase="EVAL"):
    stepscope.mark("eval-done")
deadline = time.monotonic() + 60  # only so a broken sampler fails instead of hanging
while time.monotonic() < deadline and not any(
        e["kind"] == "sample" and e["name"].startswith("cpu/") and e["name"].endswith("/util_pct")
        for e in _core.read_run(os.environ["STEPSCOPE_NODE_DIR"])["events"]):
    time.sleep(0.05)
"""


def pytest_sessionstart(session):
    if shutil.which("sqlite3") is None:  # pragma: no cover - depends on the machine
        pytest.exit("skipped: the sqlite3 command is missing; apt-get install sqlite3",
                    returncode=SKIP_RETURN_CODE)


@pytest.fixture(scope="session")
def recorded_run(stepscope, tmp_path_factory):
    """A finished `stepscope run` of TRAINING (rules evaluated online) and its `info --json`."""
    out = tmp_path_factory.mktemp("runs")
    result = stepscope("run", "--out", out, "--job", "tiny", "--node", "n1", "--no-detail",
                       "--interval", "50ms", "--", PYTHON, "-c", TRAINING)
    assert result.returncode == 0, result.stderr
    run_dir = out / "tiny"
    info = stepscope("info", run_dir, "--json")
    assert info.returncode == 0, info.stderr
    return run_dir, json.loads(info.stdout)


@pytest.fixture(scope="session")
def kineto_run(stepscope, tmp_path_factory):
    """An imported PyTorch profiler trace with GPU kernels and launch -> kernel flows."""
    trace = os.path.join(FIXTURES, "kineto", "critical_path_alexnet_trace.json.gz")
    out = tmp_path_factory.mktemp("imported")
    result = stepscope("import", "kineto", trace, "--out", out, "--job", "alexnet")
    assert result.returncode == 0, result.stderr
    return out / "alexnet"

