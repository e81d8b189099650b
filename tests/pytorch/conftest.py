"""Fixtures for the end-to-end tests of automatic PyTorch instrumentation (docs/pytorch.md).

Each test runs a plain PyTorch script from examples/pytorch/ (no stepscope calls in it) under
the real `stepscope run` (STEPSCOPE_CLI, set by ctest to the built binary) and reads the run
back with stepscope._core.read_run and `stepscope info --json`.

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/pytorch
"""

import json
import os
import subprocess

import pytest

try:
    from stepscope import _core  # noqa: F401 -- the reader the tests use
except ImportError as error:  # pragma: no cover - a set-up problem, not a test failure
    pytest.exit(f"cannot import stepscope ({error}); build the _core target and put "
                "<build>/python on PYTHONPATH", returncode=4)

from torch_runs import EXAMPLES, PYTHON, TorchRun, launch  # noqa: E402 -- needs stepscope
from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

# Exit status for "cannot run here": ctest reports it as skipped (SKIP_RETURN_CODE).
SKIP_RETURN_CODE = 77



def pytest_sessionstart(session):
    """Without torch the suite cannot run: say so and exit with SKIP_RETURN_CODE."""
    try:
        import torch  # noqa: F401 -- the examples need Debian's python3-torch
    except ImportError as error:  # pragma: no cover - depends on the machine
        pytest.exit(f"skipped: {PYTHON} cannot import torch ({error}); install python3-torch",
                    returncode=SKIP_RETURN_CODE)


@pytest.fixture(scope="session")
def run_example(cli, tmp_path_factory):
    """Runs `stepscope run [--no-detail] -- /usr/bin/python3 examples/pytorch/<script> ARGS...`
    to the end and returns the TorchRun (`detail=True`: with the default detail windows).
    Session-scoped so that several tests can share one run."""

    def run(script, *args, job=None, env=None, detail=False, timeout=180):
        job = job or os.path.splitext(os.path.basename(script))[0]
        out = tmp_path_factory.mktemp(job)
        path = script if os.path.isabs(script) else os.path.join(EXAMPLES, script)
        process = launch(cli, out, job, [path, *args], env=env, detail=detail)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            process.kill()
            process.wait()
            raise
        return TorchRun(out / job, process.returncode, stdout, stderr)

    return run


@pytest.fixture(scope="session")
def run_stepscope_info(cli):
    """`stepscope info RUN --json` as a dict."""

    def read(run_dir):
        result = subprocess.run([cli, "info", str(run_dir), "--json"], capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    return read
