"""End-to-end tests of the rules on real training under `stepscope run` (RULES.md, issue: a
data-loader-starved run, a run with injected periodic stalls, a healthy run). The training runs
for real; its steps are recorded on a paced clock (scripts/paced_training.py), so what the rules
must find does not depend on how loaded the machine is.

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/rules_e2e
"""

import json
import os
import re
import subprocess
import sys

import pytest

from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples", "pytorch")
PACED_TRAINING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "paced_training.py")
PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
SKIP_RETURN_CODE = 77


def pytest_sessionstart(session):
    try:
        import torch  # noqa: F401 -- the examples need Debian's python3-torch
    except ImportError as error:  # pragma: no cover - depends on the machine
        pytest.exit(f"skipped: {PYTHON} cannot import torch ({error}); install python3-torch",
                    returncode=SKIP_RETURN_CODE)


class RuledRun:
    """A finished run with the rules' outputs: online (written by `stepscope run`) and offline."""

    def __init__(self, cli, directory, stdout, online, offline):
        self.cli, self.directory, self.stdout = cli, directory, stdout
        self.online, self.offline = online, offline

    def in_one_window(self, out):
        """The rules evaluated offline in a single window (a scan interval of ten years).

        Sticky rules add their findings again in every window after the first trigger
        (RULES.md §0, §5): a job whose last seconds cross a minute of the UTC clock counts
        its outlier steps twice at the default 60 s. Which minute a test run crosses is
        chance, so exact counts are checked in one window."""
        ten_years_us = 10 * 365 * 24 * 3600 * 1_000_000
        evaluated = subprocess.run([self.cli, "rules", self.directory, "--json", "--out", str(out),
                                    "--rule", f"scan_interval_us={ten_years_us}"],
                                   capture_output=True, text=True, timeout=300)
        assert evaluated.returncode == 0, evaluated.stderr
        return json.loads(evaluated.stdout)

    def rule(self, name, document=None):
        document = document or self.offline
        for rule in document["rules"]:
            if rule["Rule"] == name:
                return rule
        raise AssertionError(f"no rule {name} in {[r['Rule'] for r in document['rules']]}")

    def printed(self, key):
        """A `key=[...]` value the training script printed."""
        match = re.search(rf"^{key}=(.*)$", self.stdout, re.M)
        assert match, f"{key} not printed:\n{self.stdout}"
        return json.loads(match.group(1))


@pytest.fixture(scope="session")
def run_with_rules(cli, tmp_path_factory):
    """`stepscope run` of scripts/paced_training.py ARGS (real training, its steps and spans
    recorded on a paced clock: their lengths are the arguments', however loaded the machine),
    with the rules' online and offline outputs. With `example`, examples/pytorch/<example> ARGS
    instead, instrumented automatically: its step lengths are whatever the machine made them."""

    def run(job, *args, example=None):
        out = tmp_path_factory.mktemp("runs")
        script = PACED_TRAINING if example is None else os.path.join(EXAMPLES, example)
        command = [cli, "run", "--out", str(out), "--job", job, "--node", "n1", "--no-detail", "--",
                   PYTHON, script, *map(str, args)]
        env = {**os.environ, "STEPSCOPE_TORCH": "0"} if example is None else None
        finished = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
        assert finished.returncode == 0, finished.stderr
        directory = os.path.join(out, job)
        with open(os.path.join(directory, "rules", "rules.json"), encoding="utf-8") as f:
            online = json.load(f)
        offline_dir = tmp_path_factory.mktemp("offline")
        offline = subprocess.run([cli, "rules", directory, "--json", "--out", str(offline_dir)],
                                 capture_output=True, text=True, timeout=300)
        assert offline.returncode == 0, offline.stderr
        return RuledRun(cli, directory, finished.stdout, online, json.loads(offline.stdout))

    return run
