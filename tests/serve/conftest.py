"""Fixtures of the `stepscope serve` end-to-end tests (docs/dashboard.md): the real binary
(STEPSCOPE_CLI, set by ctest) serving runs that real `stepscope run` jobs wrote, on a free port
(--port 0: the server prints the one it got), spoken to over 127.0.0.1 only.

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/serve
"""
import os
import re
import shutil
import signal
import subprocess

import pytest

from cli_fixtures import PYTHON, cli, start_job, stepscope  # noqa: F401 (pytest fixtures)
from serve_helpers import TIMEOUT_S
HOSTILE_JOB = "<img src=x onerror=alert(1)>"

# A short finished job: steps with the phases the dashboard splits steps by. It ends once the run
# holds a CPU utilization sample (a rate: the sampler's second poll), however long a loaded
# machine takes.
FINISHED_JOB = """
import os, time
import stepscope
from stepscope import _core
for i in range(12):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("Forward"):
            time.sleep(0.004)
        with stepscope.annotate("Backward"):
            time.sleep(0.006)
deadline = time.monotonic() + 60  # only so a broken sampler fails instead of hanging
while time.monotonic() < deadline and not any(
        e["kind"] == "sample" and e["name"] == "cpu/total/util_pct"
        for e in _core.read_run(os.environ["STEPSCOPE_NODE_DIR"])["events"]):
    time.sleep(0.05)
"""


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory, stepscope):
    """A root with two finished runs (one named like an HTML injection), a corrupt run and a
    foreign directory."""
    root = tmp_path_factory.mktemp("runs")
    for job in ("finished", HOSTILE_JOB):
        result = stepscope("run", "--out", root, "--job", job, "--node", "algo-1", "--", PYTHON, "-c", FINISHED_JOB)
        assert result.returncode == 0, result.stderr
    (root / "corrupt" / "algo-1").mkdir(parents=True)
    (root / "corrupt" / "algo-1" / "manifest.json").write_text('{"schema_version": 1, "node": ')
    (root / "holiday-photos").mkdir()
    (root / "holiday-photos" / "beach.jpg").write_bytes(b"\xff\xd8\xff")
    return root


class Server:
    def __init__(self, proc, url, token):
        self.proc = proc
        self.url = url
        self.token = token
        self.port = int(re.match(r"http://[^/]*:(\d+)/", url).group(1))
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}


@pytest.fixture
def serve(cli):
    """Starts `stepscope serve ARGS... --port 0`; returns a Server once it printed its URL. At
    teardown it is stopped with SIGTERM and must exit 0."""
    started = []

    def start(*args):
        proc = subprocess.Popen([cli, "serve", *map(str, args), "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        started.append(proc)
        url = token = None
        for line in proc.stdout:  # the server prints its lines at once, then serves
            if line.startswith("open "):
                url = line.split()[1]
            if line.startswith("token: "):
                token = line.split()[1]
            if line.startswith("press Ctrl-C"):
                break
        assert url, f"stepscope serve printed no URL: {proc.stderr.read() if proc.poll() is not None else ''}"
        return Server(proc, url, token)

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                assert proc.wait(timeout=TIMEOUT_S) == 0, proc.stderr.read()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def copy_run(runs_root, tmp_path):
    """A private copy of one of runs_root's runs under a fresh root (tests that damage it)."""

    def copy(job):
        root = tmp_path / "root"
        shutil.copytree(runs_root / job, root / job, symlinks=True)
        return root

    return copy
