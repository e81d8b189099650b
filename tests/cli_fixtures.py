"""Fixtures for end-to-end suites that drive the built `stepscope` command (STEPSCOPE_CLI, set by
ctest; tests/ is on PYTHONPATH). A suite's conftest.py imports the ones it uses:

    from cli_fixtures import cli, stepscope, start_job  # noqa: F401 (pytest fixtures)
"""
import os
import subprocess
import sys

import pytest

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("STEPSCOPE_CLI")
    if not path or not os.path.exists(path):
        pytest.fail("STEPSCOPE_CLI must name the built stepscope binary (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def stepscope(cli):
    """Runs `stepscope ARGS...` to completion; returns the CompletedProcess (text mode)."""

    def run(*args, timeout=300):
        return subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    return run


@pytest.fixture
def start_job(cli):
    """Starts `stepscope run ARGS... -- python -c SCRIPT` in the background (stdout: the job's
    lines, text mode), with `env` added to the environment; whatever is left is killed at
    teardown."""
    started = []

    def start(args, script, env=None):
        proc = subprocess.Popen([cli, "run", *map(str, args), "--", PYTHON, "-c", script], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                env=None if env is None else {**os.environ, **env})
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
