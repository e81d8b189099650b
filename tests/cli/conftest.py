"""Fixtures for end-to-end tests of the `stepscope` command.

The tests run the real binary (STEPSCOPE_CLI, set by ctest to the built target) on real child
processes and read runs back through `stepscope info --json`.
"""
import json
import subprocess
import sys

import pytest

from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it


def record_job(cli, out, script, timeout=300):
    """Runs `stepscope run --job j --node n --no-detail -- PYTHON -c script` under `out` and returns
    the job directory (out/j); fails the test if the run fails."""
    result = subprocess.run([cli, "run", "--out", str(out), "--job", "j", "--node", "n", "--no-detail", "--",
                             PYTHON, "-c", script], capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return out / "j"


@pytest.fixture
def run_stepscope(cli, tmp_path):
    """Runs `stepscope ARGS...` and returns the CompletedProcess (text mode)."""

    def run(*args, timeout=120, **kwargs):
        return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kwargs)

    return run


@pytest.fixture
def info(run_stepscope):
    """`stepscope info RUN --json` as a dict."""

    def read(run_dir):
        result = run_stepscope("info", str(run_dir), "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    return read
