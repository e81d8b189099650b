"""Fixtures for the end-to-end tests of training frameworks under `stepscope run`: the real
PyTorch Lightning Trainer, Hugging Face Trainer and Accelerate loops of examples/frameworks/
(docs/pytorch.md, "Training frameworks"). torch 2.x lane only (the frameworks' current
releases need torch 2).

Run by hand from the repository root after scripts/setup.sh:

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python:tests \\
        .venv/bin/python -m pytest -q -p lane tests/frameworks
"""

import os
import re

import pytest

from torch_runs import REPO, TorchRun, launch
from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

FRAMEWORKS = os.path.join(REPO, "examples", "frameworks")


class FrameworkRun(TorchRun):
    def processed(self):
        """What the framework said it processed: {"train_batches": n, ...} from its last line."""
        line = self.stdout.strip().splitlines()[-1]
        return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}


@pytest.fixture(scope="session")
def run_framework(cli, tmp_path_factory):
    def run(script, *args, timeout=600):
        job = os.path.splitext(script)[0] + "".join(str(a) for a in args).replace("-", "_")
        out = tmp_path_factory.mktemp(job)
        process = launch(cli, out, job, [os.path.join(FRAMEWORKS, script), *args])
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            process.kill()
            process.wait()
            raise
        run = FrameworkRun(out / job, process.returncode, stdout, stderr)
        assert run.returncode == 0, run.describe()
        return run

    return run
