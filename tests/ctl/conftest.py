"""Fixtures for end-to-end tests of the run configuration and `stepscope ctl`.

The tests run the real binary (STEPSCOPE_CLI, set by ctest to the built target) on real Python
jobs and read runs back from their manifests, config.json and stepscope._core.read_run().
"""
import subprocess

import pytest

from cli_fixtures import cli, start_job  # noqa: F401 (pytest fixtures, tests/cli_fixtures.py)


@pytest.fixture
def run_stepscope(cli):
    """Runs `stepscope ARGS...` to completion and returns the CompletedProcess (text mode)."""

    def run(*args, timeout=120, **kwargs):
        return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kwargs)

    return run


@pytest.fixture(scope="session")
def core():
    """stepscope._core of the build tree (PYTHONPATH, set by ctest)."""
    try:
        from stepscope import _core
    except ImportError as error:
        pytest.fail(f"the stepscope package must be importable (PYTHONPATH=<build>/python): {error}")
    return _core

