"""Issue 13: numbers agree everywhere. One real run of the slow-data example (the loop starves
for data) read by every front end: `stepscope info`, `report --json`, `summary`, `compare` and the
SQLite and Chrome exports must give the same job timeline, step counts, step times and data-wait
share, because each reads the one analysis model (docs/architecture.md) and the same rule output.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLOW_DATA = os.path.join(REPO, "examples", "pytorch", "slow_data.py")


@pytest.fixture(scope="module")
def starved_run(cli, tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("runs")
    result = subprocess.run([cli, "run", "--out", str(out), "--job", "starved", "--node", "n1", "--",
                             sys.executable, SLOW_DATA],
                            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return out / "starved"


def run_json(cli, *args):
    result = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def run_text(cli, *args):
    result = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return result.stdout


def assert_printed(summary, label, value):
    """The summary prints `label` then `value`, rounded to the digits it shows (it drops a
    trailing .0)."""
    match = re.search(rf"^\s+{re.escape(label)}\s+([0-9.]+) ", summary, re.M)
    assert match, f"{label!r} missing from the summary:\n{summary}"
    printed = match.group(1)
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    assert abs(float(printed) - value) <= 0.5 * 10 ** -max(decimals, 1) + 1e-9, (label, printed, value)


def figure(report, key):
    return next(f["value"] for f in report["verdict"]["figures"] if f["key"] == key)


def test_every_front_end_tells_the_same_run(cli, starved_run, tmp_path):
    info = run_json(cli, "info", starved_run, "--json")
    report_path = tmp_path / "model.json"
    run_text(cli, "report", starved_run, "--json", "-o", report_path)
    report = json.loads(report_path.read_text())
    summary = run_text(cli, "summary", starved_run)
    compare = run_json(cli, "compare", starved_run, starved_run, "--json")

    # The job timeline: one start, one end, one duration.
    assert report["run"]["start_ns"] == info["start_time_ns"] == compare["runs"][0]["start_ns"]
    assert report["run"]["end_ns"] == info["end_time_ns"] == compare["runs"][0]["end_ns"]
    assert report["run"]["duration_s"] == pytest.approx(info["duration_s"], abs=1e-9)
    assert report["job_summary"]["start_ns"] == info["start_time_ns"]
    assert report["job_summary"]["end_ns"] == info["end_time_ns"]
    assert f"ran {info['duration_s']:.1f} s" in summary, summary

    # Steps: info counts every recorded TRAIN step; the statistics leave out the ones stepscope's
    # detail windows disturbed, and say how many.
    (train,) = [n for n in report["steps"]["nodes"] if n["phase"] == "TRAIN"]
    assert train["count"] + train["disturbed"] == info["counts"]["steps"]["TRAIN"]
    (compared,) = [p for p in compare["steps"]["phases"] if p.get("phase", "TRAIN") == "TRAIN"]
    assert compared["a"]["count"] == train["count"]
    assert compared["a"]["p50_ms"] == pytest.approx(train["p50_ms"], rel=1e-12)
    assert compared["a"]["p95_ms"] == pytest.approx(train["p95_ms"], rel=1e-12)
    assert figure(report, "step_time_TRAIN_p50") == pytest.approx(train["p50_ms"], rel=1e-12)
    assert re.search(rf"^\s+n1\s+TRAIN\s+{train['count']}\s", summary, re.M), summary
    assert_printed(summary, "TRAIN step time p50", train["p50_ms"])
    assert_printed(summary, "TRAIN step time p95", train["p95_ms"])

    # The data wait: the verdict's sentence (DataloaderStarvation's finding), its figure (the
    # step-time breakdown) and the summary print one number.
    wait_pct = figure(report, "data_wait_pct")
    assert wait_pct > 50, "the slow-data example starves its loop"
    sentence = report["verdict"]["sentence"]
    assert f"{wait_pct:.1f} %" in sentence, (sentence, wait_pct)
    assert sentence.split("\n")[0][:40] in " ".join(summary.split()), summary
    assert_printed(summary, "TRAIN time waiting for data", wait_pct)

    # Exports count what info counts.
    database = tmp_path / "run.sqlite"
    run_text(cli, "export", starved_run, "--format", "sqlite", "-o", database)
    with sqlite3.connect(database) as db:
        phases = dict(db.execute("SELECT phase, count(*) FROM steps GROUP BY phase").fetchall())
    assert phases.get("TRAIN", 0) == info["counts"]["steps"]["TRAIN"], phases
    trace_path = tmp_path / "run.trace.json"
    run_text(cli, "export", starved_run, "--format", "chrome", "-o", trace_path)
    trace = json.loads(trace_path.read_text())
    steps = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "Step:ModeKeys.TRAIN"]
    assert len(steps) == info["counts"]["steps"]["TRAIN"]
    assert trace["otherData"]["time_origin_unix_ns"] == info["start_time_ns"]
