"""`stepscope run --prices FILE` (issue 13 §3): the rules the launcher writes when the job ends
and the end-of-run report price the run with the user's catalogue, whose entries for known
instance types need only a name and a price; a run on a known type that no catalogue prices is
still sized by its capacity; and a catalogue that cannot be used stops `stepscope run` before the
job starts, in one line naming the file and what to fix."""
import json
import re
import subprocess
import sys

import pytest

PYTHON = sys.executable

# The job leaves a marker, so a test can tell whether it ran.
STEPS = """
import pathlib, stepscope, sys, time
pathlib.Path(sys.argv[1]).write_text("ran")
for i in range(3):
    with stepscope.step(phase="TRAIN"):
        time.sleep(0.01)
"""

# Known types, name and price only. Whatever this host's CPU and memory use, some number of
# g5.xlarge at $0.01/h costs less than one g5.48xlarge at $16.288/h (768 GiB, 192 vCPUs at most
# needed at a 100 % target), so RightSizing always has a priced recommendation.
PRICES = {"instances": [{"name": "ml.g5.48xlarge", "price_per_hour": 16.288},
                        {"name": "g5.xlarge", "price_per_hour": 0.01}]}


def run_job(cli, out, marker, *flags):
    return subprocess.run([cli, "run", "--out", str(out), "--job", "j", "--node", "n", "--no-detail", *flags,
                           "--", PYTHON, "-c", STEPS, str(marker)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def right_sizing(rules_document):
    (rule,) = [r for r in rules_document["rules"] if r["Rule"] == "RightSizing"]
    return rule


def report_model(report_html):
    match = re.search(r'<script type="application/json" id="stepscope-model">(.*?)</script>',
                      report_html.read_text(), re.S)
    assert match, "report.html embeds no model"
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def priced_run(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("run-prices")
    prices = out / "prices.json"
    prices.write_text(json.dumps(PRICES))
    marker = out / "marker"
    result = run_job(cli, out, marker, "--instance", "g5.48xlarge", "--count", "1", "--prices", str(prices),
                     "--rule", "RightSizing.target_utilization_pct=100")
    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "ran"
    return out / "j"


def test_the_end_of_run_rules_carry_the_priced_recommendation(priced_run):
    details = right_sizing(json.loads((priced_run / "rules" / "rules.json").read_text()))["Details"]
    assert details["current"]["instance_type"] == "g5.48xlarge", details
    recommended = details["recommended"]
    assert recommended["instance_type"] == "g5.xlarge", details
    assert recommended["current_price_per_hour"] == pytest.approx(16.288)
    assert recommended["price_per_hour"] == pytest.approx(0.01 * recommended["instance_count"])
    assert "basis" not in recommended


def test_the_end_of_run_report_prices_the_run_with_the_catalogue(priced_run):
    model = report_model(priced_run / "report.html")
    figures = {f["key"]: f["value"] for f in model["verdict"]["figures"]}
    assert figures["cost_per_hour_usd"] == pytest.approx(16.288)  # the built-in example has no g5.48xlarge


def test_the_manifest_records_the_catalogue(priced_run, info):
    config = json.dumps(info(priced_run))
    assert "prices.json" in config


def test_without_prices_a_known_type_is_sized_by_capacity(cli, priced_run, tmp_path):
    result = subprocess.run([cli, "rules", str(priced_run), "--json", "--out", str(tmp_path / "rules"),
                             "--rule", "RightSizing.target_utilization_pct=100"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rule = right_sizing(json.loads(result.stdout))
    details = rule["Details"]
    # The built-in example prices no g5.48xlarge, but its capacity is known: a smaller fleet of
    # A10G instances fits this GPU-less job, and the finding says where the saving would come from.
    assert details["recommended"]["basis"] == "capacity", details
    assert details["recommended"]["instance_type"].startswith("g5."), details
    assert "g5.48xlarge" in details["why_no_saving"]
    assert rule["RuleTriggered"] == 1


@pytest.mark.parametrize("catalogue, says", [
    ({"instances": [{"name": "g5.3xlarge", "price_per_hour": 1.0}]}, '"vcpus"'),
    ({"instances": [{"name": "g5.xlarge"}]}, '"price_per_hour"'),
    (None, "cannot be read"),
])
def test_a_bad_catalogue_stops_the_run_before_the_job_starts(cli, tmp_path, catalogue, says):
    prices = tmp_path / "prices.json"
    if catalogue is not None:
        prices.write_text(json.dumps(catalogue))
    marker = tmp_path / "marker"
    result = run_job(cli, tmp_path / "out", marker, "--instance", "g5.xlarge", "--prices", str(prices))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("stepscope run: --prices: ") and str(prices) in lines[0] and says in lines[0], lines
    assert not marker.exists(), "the job ran"
    assert not (tmp_path / "out" / "j").exists()
