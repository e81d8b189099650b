"""The notebook reader API (stepscope.analysis) on a real run: the same numbers as the raw store
reader (stepscope._core.read_run), by time range and by step."""

import numpy
import pytest

from stepscope import _core
from stepscope.analysis import metrics_histogram, open_run, step_duration_histogram, utilization_heatmap


@pytest.fixture(scope="module")
def stalled(run_with_rules):
    return run_with_rules("reader", "--steps", 120, "--stall-every", 30)


@pytest.fixture(scope="module")
def raw(stalled):
    return _core.read_run(stalled.directory)


def test_system_events_by_time_range_match_the_store(stalled, raw):
    run = open_run(stalled.directory)
    samples = [e for e in raw["events"] if e["kind"] == "sample" and e["name"].endswith("/util_pct")
               and e["name"].startswith("cpu/cpu")]
    assert samples, "the run has per-core CPU samples"
    middle = sorted(e["start_ns"] for e in samples)[len(samples) // 2]
    expected = [e for e in samples if e["start_ns"] <= middle]
    got = run.system.get_events(0, middle / 1000.0, event_type="cpu", dimension="CPUUtilization")
    assert len(got) == len(expected)
    assert sorted(e.value for e in got) == sorted(e["value"] for e in expected)
    assert {e.node_id for e in got} == {"n1"}
    assert run.system.latest_timestamp_us() >= max(e["start_ns"] for e in samples) / 1000.0


def test_steps_and_events_by_step(stalled, raw):
    run = open_run(stalled.directory)
    steps = run.framework.steps("TRAIN")
    assert [s.step for s in steps] == list(range(120))
    raw_steps = sorted((e for e in raw["events"] if e["kind"] == "step"), key=lambda e: e["start_ns"])
    assert [round(s.duration_us * 1000) for s in steps] == [e["end_ns"] - e["start_ns"] for e in raw_steps]
    inside = run.framework.events_by_step(29)
    assert sorted({e.phase for e in inside}) == ["Backward", "DataLoaderIter", "Forward", "OptimizerStep"]
    assert all(steps[29].start_us <= e.start_us <= steps[29].end_us for e in inside)
    assert run.framework.events_by_step(10_000) == []


def test_chart_helpers(stalled, raw):
    run = open_run(stalled.directory)
    ((node, (counts, edges)),) = step_duration_histogram(run, bins=10).items()
    assert node == "n1" and counts.sum() == 120 and len(edges) == 11
    # The histogram of the steps' own durations, in seconds, read from the store.
    durations_s = [(e["end_ns"] - e["start_ns"]) / 1000.0 / 1e6 for e in raw["events"] if e["kind"] == "step"]
    expected_counts, expected_edges = numpy.histogram(durations_s, bins=10)
    assert counts.tolist() == expected_counts.tolist() and edges.tolist() == expected_edges.tolist()
    assert counts[-1] == 4  # the four stalled steps (29, 59, 89, 119) are the slowest
    histograms = metrics_histogram(run, "CPUUtilization", bins=5)
    assert histograms and all(c.sum() > 0 for c, _ in histograms.values())
    labels, times, matrix = utilization_heatmap(run, resolution_s=0.5)
    assert matrix.shape == (len(labels), len(times)) and labels
    assert numpy.nanmax(matrix) <= 100.0
