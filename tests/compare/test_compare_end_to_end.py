"""`stepscope run --instance/--count` twice, then `stepscope compare` and `stepscope summary`
on the two runs (docs/compare.md).

Run by hand (from the repository root, after `ninja -C build stepscope _core`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest -q tests/compare
"""

import json
import os
import sys
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
STEPS = 30


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get("STEPSCOPE_CLI")
    if not path or not os.path.exists(path):
        pytest.fail("STEPSCOPE_CLI must name the built stepscope binary (ctest sets it)")
    return path


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

    train = document["steps"]["phases"][0]
    assert train["phase"] == "TRAIN"
    assert train["a"]["count"] == STEPS
    assert train["b"]["count"] == STEPS
    # 40 ms vs 10 ms steps: B's median is far lower, and (almost: a busy machine can stretch a
    # step) every A step is longer than every B step, so U_A is close to n_a * n_b.
    assert train["a"]["p50_ms"] >= 40
    assert train["b"]["p50_ms"] >= 10
    assert train["delta_p50_share"] < -0.4
    assert train["test"]["u"] >= 0.9 * STEPS * STEPS
    assert train["test"]["p_value"] < 1e-6
    assert train["test"]["significant"] is True

    forward = {row["name"]: row for row in document["phases"]["rows"]}["Forward"]
    assert document["phases"]["per"] == "step"
    assert forward["a_ms"] >= 20
    assert forward["b_ms"] >= 5
    assert forward["b_ms"] < forward["a_ms"]
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
    assert document["cost"]["cheaper"] == "B"


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
