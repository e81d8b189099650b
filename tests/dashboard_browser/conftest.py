"""The live dashboard in headless Chromium against a real `stepscope serve` (drive_dashboard.mjs)
over real runs: a CPU run recorded by `stepscope run` of a small Python script using
stepscope.step, a GPU run imported from a Kineto trace (tests/fixtures/kineto), a run whose job
name and annotation are hostile HTML, and a `stepscope run` job still running while the tests
watch it.

Run by hand (from the repository root, after `ninja -C build stepscope`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python STEPSCOPE_WEB_DIR=web \\
    STEPSCOPE_DASHBOARD_BROWSER_OUT=build/tests/dashboard_browser \\
        python3 -m pytest -q tests/dashboard_browser

Screenshots land in $STEPSCOPE_DASHBOARD_BROWSER_OUT. Skips (exit 77) when /usr/bin/chromium is
missing: scripts/setup.sh installs it.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KINETO_TRACE = os.path.join(REPO, "tests", "fixtures", "kineto", "critical_path_alexnet_trace.json.gz")
CHROMIUM = os.environ.get("STEPSCOPE_CHROMIUM", "/usr/bin/chromium")
SKIP_RETURN_CODE = 77
PYTHON = sys.executable

# Names a page must show as text; an executed handler sets window.__stepscope_xss.
HOSTILE = "<img src=x onerror=window.__stepscope_xss=1>"

# A short training loop: TRAIN steps with annotations (one of them hostile), then EVAL steps.
FINISHED_SCRIPT = f"""
import time, stepscope
for i in range(40):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("forward"):
            time.sleep(0.01)
        with stepscope.annotate({HOSTILE!r}):
            time.sleep(0.005)
for i in range(5):
    with stepscope.step(phase="EVAL"):
        time.sleep(0.01)
"""

# A job that runs until its stop file appears (or 120 s pass): the live tests watch it grow.
RUNNING_SCRIPT = """
import os, sys, time, stepscope
stop = sys.argv[1]
deadline = time.time() + 120
while not os.path.exists(stop) and time.time() < deadline:
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("forward"):
            time.sleep(0.05)
"""


def pytest_sessionstart(session):
    if not os.path.exists(CHROMIUM):
        pytest.exit(f"skipped: {CHROMIUM} is not installed (scripts/setup.sh installs chromium)",
                    returncode=SKIP_RETURN_CODE)


def _from_ctest(name, what):
    """The path ctest passes in environment variable `name` (see this file's docstring)."""
    path = os.environ.get(name)
    if not path:
        pytest.fail(f"{name} must name {what} (ctest sets it; see conftest.py for running by hand)")
    return path


@pytest.fixture(scope="session")
def cli():
    path = _from_ctest("STEPSCOPE_CLI", "the built stepscope binary")
    assert os.path.exists(path), f"STEPSCOPE_CLI={path} does not exist: build it (ninja -C build stepscope)"
    return path


@pytest.fixture(scope="session")
def out_dir():
    path = _from_ctest("STEPSCOPE_DASHBOARD_BROWSER_OUT", "the folder for screenshots")
    os.makedirs(path, exist_ok=True)
    return path


def _stepscope(cli, *args, timeout=300):
    finished = subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert finished.returncode == 0, f"stepscope {' '.join(args)} failed:\n{finished.stderr}"
    return finished


@pytest.fixture(scope="session")
def runs_root(cli, tmp_path_factory):
    """The root the server lists: the finished CPU run "cpu-steps", the imported GPU run
    "alexnet-gpu" and the hostile-named run."""
    root = tmp_path_factory.mktemp("runs")
    _stepscope(cli, "run", "--out", str(root), "--job", "cpu-steps", "--node", "n1", "--interval", "100ms",
               "--no-detail", "--", PYTHON, "-c", FINISHED_SCRIPT)
    _stepscope(cli, "import", "kineto", KINETO_TRACE, "--out", str(root), "--job", "alexnet-gpu")
    _stepscope(cli, "run", "--out", str(root), "--job", HOSTILE, "--node", "n1", "--no-detail", "--",
               PYTHON, "-c", FINISHED_SCRIPT)
    return root


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, path, method="GET"):
    request = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait_until(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture(scope="session")
def server(cli, runs_root, out_dir):
    """`stepscope serve ROOT` on a free loopback port; yields its base URL."""
    port = _free_port()
    log = open(os.path.join(out_dir, "serve.log"), "w")
    process = subprocess.Popen([cli, "serve", str(runs_root), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"

    def listening():
        assert process.poll() is None, f"stepscope serve exited ({process.returncode}); see {log.name}"
        try:
            return api(base, "/api/runs")
        except OSError:
            return None

    wait_until(listening, f"stepscope serve to answer on {base}")
    yield base
    process.terminate()
    process.wait(timeout=30)
    log.close()


@pytest.fixture(scope="session")
def run_ids(server):
    """Job name -> the server's run id, from its own listing (ids are its handles, never paths)."""
    return {run["job"]: run["id"] for run in api(server, "/api/runs")["runs"]}


@pytest.fixture(scope="session")
def drive(server, out_dir):
    """Runs a drive_dashboard.mjs scenario against the server; returns what it saw."""
    web_dir = _from_ctest("STEPSCOPE_WEB_DIR", "the repository's web/ folder (with node_modules)")
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH (scripts/setup.sh installs nodejs)")

    def run(scenario, *args, refused_status=None):
        """`refused_status`: an HTTP status the scenario expects the server to answer, whose
        "Failed to load resource" console line is then no error."""
        finished = subprocess.run(
            [node, os.path.join(HERE, "drive_dashboard.mjs"), "--web-dir", web_dir, "--base", server, "--out", out_dir,
             scenario, *args], capture_output=True, text=True, timeout=600)
        assert finished.returncode == 0, f"drive_dashboard.mjs {scenario} failed ({finished.returncode}):\n{finished.stderr}"
        seen = json.loads(finished.stdout)
        assert seen["page_errors"] == [], seen["page_errors"]
        expected = f"the server responded with a status of {refused_status}" if refused_status else None
        errors = [e for e in seen["console_errors"] if not (expected and expected in e)]
        assert errors == [], errors
        assert seen["blocked_requests"] == [], seen["blocked_requests"]
        return seen

    return run


@pytest.fixture
def running_job(cli, runs_root, server, tmp_path, request):
    """A `stepscope run` job (one per test, named after it) still running under the served root;
    yields (run id, node directory) once the server lists it as running, stops it afterwards."""
    job = "live-" + request.node.name.removeprefix("test_")[:40]
    stop = tmp_path / "stop"
    process = subprocess.Popen([cli, "run", "--out", str(runs_root), "--job", job, "--node", "n1", "--interval", "100ms",
                                "--no-detail", "--", PYTHON, "-c", RUNNING_SCRIPT, str(stop)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    def listed_running():
        assert process.poll() is None, f"the job ended before it was seen running: {process.stderr.read()}"
        for run in api(server, "/api/runs")["runs"]:
            if run["job"] == job and run["status"] == "running":
                return run["id"]
        return None

    run_id = wait_until(listed_running, f"{job} to be listed as running", timeout=120)
    yield run_id, runs_root / job / "n1"
    stop.write_text("")
    process.wait(timeout=120)
