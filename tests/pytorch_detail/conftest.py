"""Fixtures for the detail-window tests (docs/detail-windows.md): small PyTorch scripts from
scripts/ run under the real `stepscope run` (STEPSCOPE_CLI, set by ctest), read back through
stepscope._core.read_run, the detail files and the CLI.

Run by hand from the repository root after `ninja -C build stepscope _core`:

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/pytorch_detail
"""

import json
import os
import sys
import subprocess

import pytest

try:
    import torch  # noqa: F401 -- the scripts need it
except ImportError:  # pragma: no cover - a machine without python3-torch
    pytest.exit("python3-torch is not installed for /usr/bin/python3", returncode=77)

from stepscope import _core
from stepscope.torch import _detail_store
from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
NODE = "n"


def child_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPSCOPE_") or k == "STEPSCOPE_CLI"}
    env["OMP_NUM_THREADS"] = "1"  # steady on a shared two-core machine
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


class DetailRun:
    """A finished `stepscope run` of a script, read back."""

    def __init__(self, run_dir, completed):
        self.dir = run_dir
        self.node_dir = run_dir / NODE
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        assert self.returncode == 0, self.describe()
        self.main_pid = self.printed("main_pid")
        data = _core.read_run(str(run_dir))
        self.streams = data["streams"]
        self.events = sorted((e for e in data["events"] if e["kind"] != "sample"),
                             key=lambda e: (e["start_ns"], e["end_ns"]))
        self.docs = _detail_store.list_windows(self.node_dir)

    def describe(self):
        return f"exit {self.returncode}\nstdout:\n{self.stdout[-2000:]}\nstderr:\n{self.stderr[-4000:]}"

    def printed(self, key):
        values = [w.split("=", 1)[1] for line in self.stdout.splitlines() for w in line.split()
                  if w.startswith(key + "=")]
        assert values, f"the script printed no {key}=\n{self.describe()}"
        return int(values[-1])

    def doc(self, kind, window=None):
        found = [d for d in self.docs if d["kind"] == kind and (window is None or d["window"]["index"] == window)]
        assert len(found) == 1, f"{len(found)} {kind} documents: {[d['window'] for d in self.docs]}\n{self.describe()}"
        return found[0]

    def spans(self, name, pid=None):
        return [e for e in self.events if e["kind"] == "span" and e["name"] == name
                and (pid is None or e["pid"] == pid)]

    def steps(self, phase="TRAIN"):
        return {e["step"]: e for e in self.events if e["kind"] == "step" and e["phase"] == phase
                and not e["unfinished"] and e["pid"] == self.main_pid}

    def ppid_of(self, pid):
        return next(s["ppid"] for s in self.streams if s["pid"] == pid)


def run_script(cli, out, job, script_args, flags=(), env=None, timeout=180):
    """`stepscope run --out OUT --job JOB --node n FLAGS -- /usr/bin/python3 SCRIPT ARGS` to the end."""
    command = [cli, "run", "--out", str(out), "--job", job, "--node", NODE, *flags, "--", PYTHON,
               *map(str, script_args)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL, env=child_env(env))
    return DetailRun(out / job, completed)


def script(name):
    return os.path.join(SCRIPTS, name)


def write_config(path, detail):
    """A launcher config file (JSON) with only the `detail` key."""
    path.write_text(json.dumps({"detail": detail}))
    return path


@pytest.fixture(scope="session")
def default_run(cli, tmp_path_factory):
    """train_loop.py (2 workers, 14 TRAIN steps) with the default windows; shared by the tests."""
    return run_script(cli, tmp_path_factory.mktemp("default"), "default", [script("train_loop.py"), "--sleep", "0.05"])


@pytest.fixture
def stepscope(cli):
    """Runs `stepscope ARGS...` and returns the CompletedProcess (text mode)."""

    def run(*args, timeout=120):
        return subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=child_env())

    return run
