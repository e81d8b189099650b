"""Shared helpers for the stepscope Python tests.

A process records one session, so every scenario that records runs in a child interpreter
started with STEPSCOPE_NODE_DIR=<tmp>/job/node in its environment, exactly as `stepscope run`
starts its child. The test then compacts the run and reads it back with _core.read_run.

Run with the built package on the path: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest
tests/python (ctest's python_tests does this).
"""

import collections
import os
import subprocess
import sys
import textwrap

import pytest

try:
    import stepscope
    from stepscope import _core
except ImportError as error:  # pragma: no cover - a set-up problem, not a test failure
    pytest.exit(f"cannot import stepscope ({error}); build the _core target and put <build>/python on PYTHONPATH",
                returncode=4)

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(stepscope.__file__)))


def child_env(node_dir=None, extra=None):
    """The environment of a child interpreter: this stepscope build, recording into node_dir."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("STEPSCOPE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, os.environ.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    if node_dir is not None:
        env["STEPSCOPE_NODE_DIR"] = str(node_dir)
    if extra:
        env.update(extra)
    return env


def write_script(directory, code, name="script.py"):
    path = directory / name
    path.write_text(textwrap.dedent(code))
    return path


class Run:
    """A run read back with _core.read_run, with counting helpers."""

    def __init__(self, path):
        _core.compact(str(path))
        self.data = _core.read_run(str(path))
        self.events = self.data["events"]
        self.streams = self.data["streams"]
        self.problems = self.data["problems"]

    def of_kind(self, kind, name=None):
        return [e for e in self.events if e["kind"] == kind and (name is None or e["name"] == name)]

    def spans(self, name=None):
        return self.of_kind("span", name)

    def counts(self, kind):
        """{name: count} of the events of one kind."""
        return dict(collections.Counter(e["name"] for e in self.of_kind(kind)))

    def counts_by_pid(self, kind):
        """{pid: {name: count}} of the events of one kind."""
        result = collections.defaultdict(collections.Counter)
        for event in self.of_kind(kind):
            result[event["pid"]][event["name"]] += 1
        return {pid: dict(counter) for pid, counter in result.items()}


class Recorded:
    """What a recorded child left: its exit, its output and its run."""

    def __init__(self, completed, job_dir):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.job_dir = job_dir
        self._run = None

    @property
    def run(self):
        if self._run is None:
            self._run = Run(self.job_dir)
        return self._run


@pytest.fixture
def run_python(tmp_path):
    """run_python(code, node_dir=None) runs `code` as <tmp>/script.py in a child interpreter.

    The child records into node_dir when one is given and is otherwise not recording. Fails the
    test when the child exits non-zero (unless check=False).
    """

    def run_script(code, node_dir=None, timeout=120, check=True):
        script = write_script(tmp_path, code)
        completed = subprocess.run([sys.executable, str(script)], env=child_env(node_dir), cwd=tmp_path,
                                   capture_output=True, text=True, timeout=timeout)
        if check:
            assert completed.returncode == 0, f"child failed:\n{completed.stdout}\n{completed.stderr}"
        return completed

    return run_script


@pytest.fixture
def spawn_python(tmp_path):
    """spawn_python(code, node_dir) starts `code` in a recording child, stdout piped; a Popen."""

    def spawn(code, node_dir):
        script = write_script(tmp_path, code)
        return subprocess.Popen([sys.executable, str(script)], env=child_env(node_dir), cwd=tmp_path,
                                stdout=subprocess.PIPE, text=True)

    return spawn


@pytest.fixture
def record(tmp_path, run_python):
    """record(code) runs `code` in a child recording into <tmp>/job/node (as `stepscope run` does)."""

    def run_recorded(code, timeout=120, check=True):
        job_dir = tmp_path / "job"
        return Recorded(run_python(code, node_dir=job_dir / "node", timeout=timeout, check=check), job_dir)

    return run_recorded


@pytest.fixture
def read_run():
    """read_run(path) compacts and reads back a run: a Run."""
    return Run
