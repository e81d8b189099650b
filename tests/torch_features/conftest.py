"""Fixtures for the end-to-end tests of what torch 2.x users do (issue 10 §2 and docs/pytorch.md):
torch.compile and torch.export, model wrappers, optimizer closures, GradScaler and LR
schedulers, the DataLoader's start methods, persistent workers and iterable datasets, and
operator windows with real Kineto data. Each test runs a plain PyTorch script of scripts/ (no
stepscope calls) under the real `stepscope run` and reads the run back.

Registered for both lanes (tests/lane.py); a test that needs what only torch 2.x has says so
with `requires_torch2`.

Run by hand from the repository root after scripts/setup.sh:

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python:tests \\
        .venv/bin/python -m pytest -q -p lane tests/torch_features
"""

import os
import subprocess
import sys

import pytest

import lane
from torch_runs import TorchRun, launch
from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")

requires_torch2 = pytest.mark.skipif(not lane.is_torch2(), reason="torch 1.13 has no torch.compile/export/Kineto")


@pytest.fixture(scope="session")
def run_script(cli, tmp_path_factory):
    """Runs `stepscope run [--no-detail] -- <lane python> scripts/<script> ARGS...` to the end."""

    def run(script, *args, job=None, env=None, detail=False, flags=(), timeout=300):
        job = job or os.path.splitext(script)[0] + "-" + "-".join(map(str, args))
        out = tmp_path_factory.mktemp(job.replace("/", "_"))
        process = launch(cli, out, job, [os.path.join(SCRIPTS, script), *args], env=env, detail=detail,
                         flags=flags)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            process.kill()
            process.wait()
            raise
        return TorchRun(out / job, process.returncode, stdout, stderr)

    return run


@pytest.fixture(scope="session")
def run_plain():
    """Runs `<lane python> scripts/<script> ARGS...` without stepscope; returns its stdout."""

    def run(script, *args, env=None, timeout=300):
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("STEPSCOPE_")}
        child_env.setdefault("OMP_NUM_THREADS", "1")
        child_env.update(env or {})
        result = subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *map(str, args)],
                                capture_output=True, text=True, env=child_env, timeout=timeout,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr[-4000:]
        return result.stdout

    return run
