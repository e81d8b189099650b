"""A user's Python rule runs in the driver and lands in every output like a built-in one
(docs/custom-rules.md; examples/rules/slow_steps.py)."""

import json
import os
import subprocess
import types

import pytest

from conftest import REPO

SLOW_STEPS = os.path.join(REPO, "examples", "rules", "slow_steps.py")


@pytest.fixture(scope="module")
def stalled(run_with_rules):
    return run_with_rules("custom", "--steps", 60, "--stall-every", 20)


def rules(cli, run, tmp_path, *args):
    finished = subprocess.run([cli, "rules", run.directory, "--json", "--out", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=300)
    return finished


def test_a_custom_rule_finds_the_slow_steps_beside_the_built_in_rules(cli, stalled, tmp_path):
    finished = rules(cli, stalled, tmp_path, "--custom", SLOW_STEPS, "--rule", "SlowSteps.threshold_ms=80")
    assert finished.returncode == 0, finished.stderr
    document = json.loads(finished.stdout)
    names = [rule["Rule"] for rule in document["rules"]]
    assert names[-1] == "SlowSteps" and "StepOutlier" in names
    (slow,) = [rule for rule in document["rules"] if rule["Rule"] == "SlowSteps"]
    assert slow["RuleParameters"] == "threshold_ms:80\nphase:TRAIN"
    assert slow["Details"]["slow_steps"] == stalled.printed("stalled_steps") == [19, 39, 59]
    assert [e["steps"] for e in slow["findings"][0]["evidence"]] == [[19], [39], [59]]
    assert document["status"] == "IssuesFound"
    with open(tmp_path / "SlowSteps.json", encoding="utf-8") as f:
        reference = json.load(f)
    assert set(reference) == {"RuleTriggered", "Violations", "Details", "Datapoints", "RuleParameters"}
    assert reference["Violations"] == 3 and reference["Datapoints"] == 60


def test_a_failing_custom_rule_is_reported_and_the_others_still_run(cli, stalled, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from stepscope.analysis import Rule\n\n"
                      "class Broken(Rule):\n    name = 'Broken'\n\n"
                      "    def evaluate(self, window):\n        raise KeyError('oops')\n")
    finished = rules(cli, stalled, tmp_path / "out", "--custom", str(broken))
    assert finished.returncode == 0, finished.stderr
    assert "custom rule Broken: evaluate() raised KeyError" in finished.stderr
    document = json.loads(finished.stdout)
    (rule,) = [r for r in document["rules"] if r["Rule"] == "Broken"]
    assert "KeyError" in rule["Details"]["error"]
    assert any(r["Rule"] == "StepOutlier" for r in document["rules"])


def test_a_bad_custom_rules_file_is_one_line(cli, stalled, tmp_path):
    finished = rules(cli, stalled, tmp_path, "--custom", str(tmp_path / "missing.py"))
    assert finished.returncode == 1
    assert finished.stderr.strip().splitlines() == [
        f"stepscope rules: custom rules file {tmp_path / 'missing.py'} does not exist"]


def test_a_custom_rule_reads_sagemaker_args_with_their_json_types(cli, tmp_path):
    # SageMaker writes pin_memory as a JSON bool; a custom rule sees a Python bool, not a string.
    loader = tmp_path / "loader.py"
    loader.write_text("from stepscope.analysis import Rule\n\n"
                      "class LoaderArgs(Rule):\n    name = 'LoaderArgs'\n\n"
                      "    def __init__(self):\n        self.seen = []\n\n"
                      "    def evaluate(self, window):\n"
                      "        for event in window.events():\n"
                      "            if event['name'] == 'DataLoaderIterInitialize':\n"
                      "                self.seen.append([type(event['args']['pin_memory']).__name__,\n"
                      "                                  type(event['args']['num_workers']).__name__])\n"
                      "        return False\n\n"
                      "    def report(self):\n        return {'details': {'seen': self.seen}}\n")
    trial = os.path.join(REPO, "tests", "golden", "rules", "sm_value_types", "input")
    imported = subprocess.run([cli, "import", "sagemaker", trial, "--out", str(tmp_path), "--job", "trial"],
                              capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    run = types.SimpleNamespace(directory=str(tmp_path / "trial"))
    finished = rules(cli, run, tmp_path / "out", "--custom", str(loader))
    assert finished.returncode == 0, finished.stderr
    (rule,) = [r for r in json.loads(finished.stdout)["rules"] if r["Rule"] == "LoaderArgs"]
    assert rule["Details"]["seen"] and all(seen == ["bool", "int"] for seen in rule["Details"]["seen"])
