"""The report prices the run (issue 13 §1, §3): its verdict gives the cost of the run and per hour
when the instance is known, from the built-in catalogue or the user's (`--prices`), and a bad
catalogue is one line naming the file. `stepscope rules --prices` hands the catalogue to
RightSizing."""
import json
import subprocess
import sys

import pytest

PYTHON = sys.executable

STEPS = """
import stepscope, time
for i in range(3):
    with stepscope.step(phase="TRAIN"):
        time.sleep(0.01)
"""


@pytest.fixture(scope="module")
def priced_run(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("priced")
    result = subprocess.run([cli, "run", "--out", str(out), "--job", "j", "--node", "n", "--no-detail",
                             "--instance", "ml.example.big", "--count", "2", "--", PYTHON, "-c", STEPS],
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return out / "j"


def figures(report):
    return {f["key"]: f["value"] for f in report["verdict"]["figures"]}


def test_the_users_catalogue_prices_the_run(cli, priced_run, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[[instances]]\nname = "ml.example.big"\nvcpus = 8\nmemory_gib = 32\nprice_per_hour = 36.0\n')
    result = subprocess.run([cli, "report", str(priced_run), "--json", "--prices", str(prices)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    values = figures(report)
    assert values["cost_per_hour_usd"] == pytest.approx(72.0)  # 2 instances at $36/h
    duration_h = report["run"]["duration_s"] / 3600
    assert values["run_cost_usd"] == pytest.approx(round(72.0 * duration_h, 2), abs=0.011)


def test_an_instance_the_catalogue_does_not_know_has_no_cost(cli, priced_run):
    result = subprocess.run([cli, "report", str(priced_run), "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "run_cost_usd" not in figures(json.loads(result.stdout))


@pytest.mark.parametrize("command", ["report", "rules"])
def test_a_bad_catalogue_is_one_line_naming_the_file(cli, priced_run, tmp_path, command):
    prices = tmp_path / "prices.json"
    prices.write_text('{"instances": [{"name": "x", "price_per_hour": "cheap"}]}')
    result = subprocess.run([cli, command, str(priced_run), "--prices", str(prices)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(prices) in lines[0], result.stderr


def test_rules_hand_the_catalogue_to_right_sizing(cli, priced_run, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"instances": [
        {"name": "ml.example.big", "vcpus": 8, "memory_gib": 32, "price_per_hour": 36.0},
        {"name": "ml.example.small", "vcpus": 2, "memory_gib": 8, "price_per_hour": 1.0}]}))
    result = subprocess.run([cli, "rules", str(priced_run), "--json", "--out", str(tmp_path / "rules"),
                             "--prices", str(prices)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (right_sizing,) = [r for r in json.loads(result.stdout)["rules"] if r["Rule"] == "RightSizing"]
    details = right_sizing["Details"]
    assert "why_no_recommendation" not in details, details
    assert details["recommended"]["instance_type"].endswith("example.small"), details
    assert details["recommended"]["current_price_per_hour"] == pytest.approx(72.0)
    # Without --prices the built-in catalogue does not know the instance.
    result = subprocess.run([cli, "rules", str(priced_run), "--json", "--out", str(tmp_path / "builtin")],
                            capture_output=True, text=True, timeout=120)
    (builtin,) = [r for r in json.loads(result.stdout)["rules"] if r["Rule"] == "RightSizing"]
    assert "neither in the price catalogue nor a known type" in builtin["Details"]["why_no_recommendation"]
