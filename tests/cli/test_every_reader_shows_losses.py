"""Every command that reads a run shows its data-loss problems (issue 12): a run whose process log
is gone undercounts, and each reader says so on stderr in one line per problem
(src/cli/run_problems.h). `stepscope info` reads imported runs through the same model, so it
counts what an import holds instead of 0 samples and 0 events."""
import json
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import record_job

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
REPO = pathlib.Path(__file__).resolve().parents[2]

RECORD = """
import stepscope
for i in range(3):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("forward"):
            pass
"""


@pytest.fixture(scope="module")
def run_without_its_process_log(cli, tmp_path_factory):
    job = record_job(cli, tmp_path_factory.mktemp("lost"), RECORD, timeout=120)
    logs = sorted((job / "n").glob("proc-*.log"))
    assert len(logs) == 1, logs
    logs[0].unlink()
    return job, logs[0].name


def lost_line(command, log_name):
    return re.compile(rf"^stepscope {command}: data loss: node 'n' has no {re.escape(log_name)} .*"
                      r"\[missing_process_log\]$", re.MULTILINE)


# `rules --custom` hands over to Python (stepscope.analysis.rules_cli), which loads the run itself.
CUSTOM_RULE = str(REPO / "examples" / "rules" / "slow_steps.py")
READERS = [["rules"], ["rules", "--custom", CUSTOM_RULE], ["report"], ["summary"], ["export", "--format", "csv"],
           ["info", "--json"]]


@pytest.mark.parametrize("command", READERS, ids=["rules", "rules-custom", "report", "summary", "export", "info"])
def test_each_reader_names_the_missing_process_log(cli, run_without_its_process_log, tmp_path, command):
    run, log_name = run_without_its_process_log
    extra = ["-o", str(tmp_path / "out")] if command[0] in ("report", "export") else []
    if command[0] == "rules":
        extra = ["--out", str(tmp_path / "rules")]
    result = subprocess.run([cli, command[0], str(run), *command[1:], *extra], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert len(lost_line(command[0], log_name).findall(result.stderr)) == 1, result.stderr


def test_compare_names_the_loss_of_each_run(cli, run_without_its_process_log):
    run, log_name = run_without_its_process_log
    result = subprocess.run([cli, "compare", str(run), str(run)], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    for which in ("RUN_A", "RUN_B"):
        assert re.search(rf"^stepscope compare: {which}: data loss: node 'n' has no {re.escape(log_name)} .*"
                         r"\[missing_process_log\]$", result.stderr, re.MULTILINE), result.stderr


def test_info_lists_the_loss_as_a_typed_problem(cli, run_without_its_process_log):
    run, log_name = run_without_its_process_log
    text = subprocess.run([cli, "info", str(run)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert text.returncode == 0, text.stderr
    assert re.search(rf"^problem    data loss: node 'n' has no {re.escape(log_name)} .*\[missing_process_log\]$",
                     text.stdout, re.MULTILINE), text.stdout
    data = json.loads(subprocess.run([cli, "info", str(run), "--json"], capture_output=True, text=True,
                                     timeout=120, stdin=subprocess.DEVNULL).stdout)
    assert data["schema_version"] == 2
    (problem,) = [p for p in data["problems"] if p["name"] == "missing_process_log"]
    assert problem["severity"] == "data_loss" and problem["count"] == 1 and log_name in problem["sentence"]
    # The process's events are gone with its log: the model holds none of them.
    assert data["counts"]["steps"]["TRAIN"] == 0 and data["counts"]["spans"] == 0


def test_a_complete_run_prints_no_problem_lines(cli, tmp_path):
    result = subprocess.run([cli, "run", "--out", str(tmp_path), "--job", "ok", "--node", "n", "--no-detail", "--",
                             PYTHON, "-c", RECORD], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    summary = subprocess.run([cli, "summary", str(tmp_path / "ok")], capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
    assert summary.returncode == 0 and "data loss" not in summary.stderr, summary.stderr
    assert "  dropped events: 0\n" in summary.stdout


def test_info_counts_what_an_import_holds(cli, tmp_path):
    imported = subprocess.run([cli, "import", "sagemaker", str(REPO / "tests/golden/rules/sm_rank_nodes/input"),
                               "--out", str(tmp_path), "--job", "x"], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    assert imported.returncode == 0, imported.stderr
    # The importer's own line gives the model's sizes: "N nodes, S series, X samples, E events, ...".
    sizes = re.search(r"(\d+) nodes, \d+ series, (\d+) samples, (\d+) events", imported.stdout)
    assert sizes, imported.stdout
    nodes, samples, events = (int(n) for n in sizes.groups())
    assert samples > 0 and events > 0
    result = subprocess.run([cli, "info", str(tmp_path / "x"), "--json"], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    counts = data["counts"]
    assert data["source"] == "sagemaker" and data["job"] == "x"
    assert counts["system_samples"] == samples
    assert counts["spans"] + counts["instants"] + counts["counters"] + sum(counts["steps"].values()) == events
    assert counts["nodes"] == nodes == len(data["nodes"])
    assert counts["processes"] == len(data["processes"]) > 0  # every (node, pid) with facts or events
    assert sum(p["events"] for p in data["processes"]) == events
    assert data["bytes_on_disk"]["model_file"] > 0
    text = subprocess.run([cli, "info", str(tmp_path / "x")], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert text.returncode == 0, text.stderr
    assert f"samples    {samples} system samples" in text.stdout, text.stdout
    assert "dropped    not recorded by stepscope (imported from sagemaker)" in text.stdout
