"""Operator detail windows on torch 2.x (docs/detail-windows.md): real training scripts under the
built `stepscope run` (STEPSCOPE_CLI, set by ctest) with Kineto, read back through the detail
documents, the trace files they write, the run's events and `stepscope info`.

Run by hand from the build directory:

    STEPSCOPE_TEST_LANE=torch2 STEPSCOPE_CLI=$PWD/src/cli/stepscope \\
        PYTHONPATH=$PWD/python:<repo>/tests ../.venv/bin/python -m pytest -q -p lane ../tests/operators_torch2
"""

import os
import subprocess

import lane
import pytest

if not lane.is_torch2():  # pragma: no cover - registered for the torch2 lane only
    pytest.exit("the operators_torch2 suite needs torch 2.x with Kineto (the torch2 lane)", returncode=77)

from stepscope.torch import _detail_store  # noqa: E402
from torch_runs import TorchRun, launch  # noqa: E402
from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
TINY_TRAIN = os.path.join(SCRIPTS, "tiny_train.py")


class OperatorsRun(TorchRun):
    """A finished run of tiny_train.py with its detail files."""

    def __init__(self, run_dir, returncode, stdout, stderr):
        super().__init__(run_dir, returncode, stdout, stderr)
        self.detail_dir = os.path.join(run_dir, "n", "detail")
        self.docs = _detail_store.list_windows(os.path.join(run_dir, "n"))

    def detail_files(self):
        return sorted(os.listdir(self.detail_dir)) if os.path.isdir(self.detail_dir) else []

    def doc(self):
        assert len(self.docs) == 1, f"{len(self.docs)} documents\n{self.describe()}"
        return self.docs[0]

    def train_steps(self):
        return {s["step"]: s for s in self.steps("TRAIN") if s["pid"] == self.main_pid}


def run_tiny_train(cli, out, job, script_args=(), flags=("--detailed-steps", "5:2")):
    """`stepscope run --no-detail FLAGS -- python tiny_train.py ARGS` to the end."""
    process = launch(cli, out, job, [TINY_TRAIN, *script_args], flags=flags)
    stdout, stderr = process.communicate(timeout=300)
    run = OperatorsRun(os.path.join(str(out), job), process.returncode, stdout, stderr)
    assert run.returncode == 0, run.describe()
    return run


@pytest.fixture
def stepscope(cli):
    """Runs `stepscope ARGS...` and returns the CompletedProcess (text mode)."""

    def run(*args):
        return subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    return run
