"""`stepscope run --instance/--count` twice, then `stepscope compare` and `stepscope summary`
on the two runs (docs/compare.md).

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/compare
"""

import collections
import json
import math
import os
import statistics
import sys
import subprocess

import pytest

from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)
from stepscope import _core

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
STEPS = 30


@pytest.fixture(scope="module")
def runs(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    paths = {}
    # A: 40 ms steps; B: 10 ms steps. Both on 2 x p3.2xlarge.
    for job, step_s in (("slow", "0.04"), ("fast", "0.01")):
        finished = subprocess.run(
            [cli, "run", "--out", str(out), "--job", job, "--node", "n1", "--no-detail",
             "--instance", "p3.2xlarge", "--count", "2", "--",
             PYTHON, os.path.join(HERE, "tiny_train.py"), step_s, str(STEPS)],
            capture_output=True, text=True, timeout=300)
        assert finished.returncode == 0, finished.stderr
        paths[job] = os.path.join(out, job)
    return paths


def train_steps(run_dir):
    """The run's TRAIN step durations in ms, from the store."""
    return [(e["end_ns"] - e["start_ns"]) / 1e6 for e in _core.read_run(run_dir)["events"]
            if e["kind"] == "step" and e["phase"] == "TRAIN"]


def spans_ms(run_dir, name):
    return [(e["end_ns"] - e["start_ns"]) / 1e6 for e in _core.read_run(run_dir)["events"]
            if e["kind"] == "span" and e["name"] == name]


def mann_whitney(x, y):
    """Two-sided Mann-Whitney U of x against y with tie and continuity corrections (the normal
    approximation, as scipy's method="asymptotic"): (U of x, p-value)."""
    n_x, n_y = len(x), len(y)
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
    n = n_x + n_y
    ties = collections.Counter(x + y).values()
    sigma = math.sqrt(n_x * n_y / 12.0 * ((n + 1) - sum(t ** 3 - t for t in ties) / (n * (n - 1))))
    if sigma == 0:
        return u, 1.0
    z = (max(u, n_x * n_y - u) - n_x * n_y / 2.0 - 0.5) / sigma
    return u, min(1.0, math.erfc(z / math.sqrt(2.0)))


def run_cli(cli, *args):
    finished = subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    return finished.stdout


def test_manifest_records_the_instance(runs):
    with open(os.path.join(runs["slow"], "n1", "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    assert manifest["instance_type"] == "p3.2xlarge"
    assert manifest["instance_count"] == 2
    assert manifest["config"]["instance_count"] == {"value": 2, "from": "flag"}


def test_compare_json(cli, runs):
    document = json.loads(run_cli(cli, "compare", runs["slow"], runs["fast"], "--json"))
    assert document["schema"] == "stepscope.report"
    assert document["kind"] == "compare"
    a, b = document["runs"]
    for run in (a, b):
        assert run["instance_type"] == "p3.2xlarge"
        assert run["instance_count"] == 2
        assert run["price_per_hour"] == 3.825
        # cost = count x duration x price, to the cent
        assert run["cost"] == round(2 * run["duration_s"] / 3600 * 3.825, 2)
    cost = document["cost"]
    assert cost["available"] is True
    assert cost["saving"] == pytest.approx(abs(a["cost"] - b["cost"]), abs=1e-9)

    # The statistics are those of the two runs' own steps and spans, read back from the store.
    # (How far apart a loaded machine leaves 40 ms and 10 ms steps is not checked: a busy machine
    # stretches either; run_comparison_unittest.cc and mann_whitney_unittest.cc check the
    # statistics on fixed data.)
    steps = {job: train_steps(runs[job]) for job in ("slow", "fast")}
    train = document["steps"]["phases"][0]
    assert train["phase"] == "TRAIN"
    assert train["a"]["count"] == STEPS
    assert train["b"]["count"] == STEPS
    assert train["a"]["p50_ms"] == pytest.approx(statistics.median(steps["slow"]), rel=1e-12)
    assert train["b"]["p50_ms"] == pytest.approx(statistics.median(steps["fast"]), rel=1e-12)
    # A step sleeps its whole length: no step is shorter, whatever the load.
    assert min(steps["slow"]) >= 40 and min(steps["fast"]) >= 10
    assert train["delta_p50_share"] == pytest.approx(
        (train["b"]["p50_ms"] - train["a"]["p50_ms"]) / train["a"]["p50_ms"], rel=1e-12)
    u, p_value = mann_whitney(steps["slow"], steps["fast"])
    assert train["test"]["u"] == u
    assert train["test"]["p_value"] == pytest.approx(p_value, rel=1e-9, abs=1e-300)
    assert train["test"]["significant"] is (train["test"]["p_value"] < train["test"]["alpha"])

    forward = {row["name"]: row for row in document["phases"]["rows"]}["Forward"]
    assert document["phases"]["per"] == "step"
    for side, job, least_ms in (("a_ms", "slow", 20), ("b_ms", "fast", 5)):
        spans = spans_ms(runs[job], "Forward")
        assert len(spans) == STEPS and min(spans) >= least_ms
        assert forward[side] == pytest.approx(sum(spans) / STEPS, rel=1e-9)
    assert document["utilization"]["rows"][0]["metric"] == "CPU"


def test_compare_text_and_prices(cli, runs, tmp_path):
    text = run_cli(cli, "compare", runs["slow"], runs["fast"])
    assert "2 x p3.2xlarge" in text
    assert "$3.825" in text
    assert all(len(line) <= 100 for line in text.splitlines()), text
    prices = tmp_path / "prices.toml"
    prices.write_text('[[instances]]\nname = "p3.2xlarge"\nprice_per_hour = 3600.0\n')
    document = json.loads(run_cli(cli, "compare", runs["slow"], runs["fast"], "--prices", str(prices),
                                  "--count-b", "1", "--json"))
    a, b = document["runs"]
    # $3600/h is $1/s: the cost is count x seconds.
    assert a["cost"] == round(2 * a["duration_s"], 2)
    assert b["instance_count"] == 1
    assert b["cost"] == round(b["duration_s"], 2)
    # Which run is cheaper depends on how long each took, start-up included, on this machine.
    expected = "B" if b["cost"] < a["cost"] else "A" if a["cost"] < b["cost"] else None
    assert document["cost"]["cheaper"] == expected


def test_compare_errors_are_one_line(cli, runs, tmp_path):
    finished = subprocess.run([cli, "compare", runs["slow"], str(tmp_path / "nothing")],
                              capture_output=True, text=True, timeout=60)
    assert finished.returncode == 1
    assert finished.stderr.startswith("stepscope compare: RUN_B: ")
    assert finished.stderr.count("\n") == 1


def test_summary(cli, runs):
    env = dict(os.environ, NO_COLOR="1")
    finished = subprocess.run([cli, "summary", runs["fast"]], capture_output=True, text=True, timeout=300, env=env)
    assert finished.returncode == 0, finished.stderr
    text = finished.stdout
    assert "\033" not in text
    assert "1 node, 2 x p3.2xlarge (source: stepscope)" in text
    assert "initialization" in text and "training loop" in text and "finalization" in text
    row = [line.split() for line in text.splitlines() if line.startswith("  n1 ")]
    assert row and row[0][1] == "TRAIN" and row[0][2] == str(STEPS), text
    assert "dropped events: 0" in text
    assert os.path.join(runs["fast"], "report.html") in text
    assert all(len(line) <= 100 for line in text.splitlines()), text


def test_instance_from_config_file_and_bad_values(cli, tmp_path):
    config = tmp_path / "stepscope.toml"
    config.write_text('instance = "p3.8xlarge"\ninstance_count = 3\n')
    out = tmp_path / "runs"
    finished = subprocess.run([cli, "run", "--out", str(out), "--job", "cfg", "--node", "n1", "--no-detail",
                               "--config", str(config), "--", PYTHON, "-c", "pass"],
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    with open(out / "cfg" / "n1" / "manifest.json", encoding="utf-8") as f:
        manifest = json.load(f)
    assert manifest["instance_type"] == "p3.8xlarge"
    assert manifest["instance_count"] == 3
    assert manifest["config"]["instance"] == {"value": "p3.8xlarge", "from": "config file"}

    bad = subprocess.run([cli, "run", "--out", str(out), "--count", "0", "--", PYTHON, "-c", "pass"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr == ("stepscope run: --count: instance count must be a whole number from 1 to 100000, "
                          "not '0'\n")


def test_compare_html(cli, runs, tmp_path):
    page = tmp_path / "compare.html"
    run_cli(cli, "compare", runs["slow"], runs["fast"], "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "<title>stepscope compare: slow vs fast</title>" in html
    assert '"kind":"compare"' in html
