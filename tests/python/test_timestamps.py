"""Recorded times are Unix-epoch nanoseconds: CLOCK_MONOTONIC shifted by the run's clock anchor,
a (monotonic, Unix) pair read while the run recorded.

Both sides are compared on CLOCK_MONOTONIC, with the script's own readings around the span: the
recorder's ticks convert to that clock to within its calibration (microseconds), whatever the
machine's load. How far apart the anchor's two readings fell is not checked here: a process can
be preempted between any two clock reads."""

import json
import time

# Error of converting the recorder's ticks to CLOCK_MONOTONIC: bracketed calibration pairs and a
# rate measured over milliseconds give well under a microsecond over a second; not a timing.
CONVERSION_SLACK_NS = 100_000

SCRIPT = """
    import json
    import time
    import stepscope
    {start}
    before = time.monotonic_ns()
    with stepscope.annotate("sleep"):
        time.sleep(0.05)
    after = time.monotonic_ns()
    print(json.dumps({{"before": before, "after": after}}))
"""


def check_span(span, anchor, script_clock, test_clock):
    # The anchor was read by the recording process, between the test's readings around it.
    assert test_clock["monotonic_before"] <= anchor["monotonic_ns"] <= test_clock["monotonic_after"]
    assert test_clock["realtime_before"] <= anchor["realtime_ns"] <= test_clock["realtime_after"]
    offset = anchor["realtime_ns"] - anchor["monotonic_ns"]
    start, end = span["start_ns"] - offset, span["end_ns"] - offset
    # The span lies between the script's own readings, and lasts the sleep's 50 ms at least.
    assert script_clock["before"] - CONVERSION_SLACK_NS <= start, (start, script_clock)
    assert end <= script_clock["after"] + CONVERSION_SLACK_NS, (end, script_clock)
    assert end - start >= 50_000_000 - CONVERSION_SLACK_NS


def clocks_around(run):
    before = {"monotonic_before": time.monotonic_ns(), "realtime_before": time.time_ns()}
    completed = run()
    return completed, {**before, "monotonic_after": time.monotonic_ns(), "realtime_after": time.time_ns()}


def test_span_times_are_unix_time_under_stepscope_run(record):
    # Started the way `stepscope run` starts it: at import, from STEPSCOPE_NODE_DIR.
    result, test_clock = clocks_around(lambda: record(SCRIPT.format(start="")))
    (span,) = result.run.spans("sleep")
    (stream,) = result.run.streams
    anchor = json.loads(stream["meta"])["clock_anchor"]
    check_span(span, anchor, json.loads(result.stdout), test_clock)


def test_span_times_are_unix_time_after_an_explicit_start(run_python, read_run, tmp_path):
    start = f'stepscope.start(out={str(tmp_path / "runs")!r}, job="job", node="node")'
    completed, test_clock = clocks_around(lambda: run_python(SCRIPT.format(start=start)))
    run = read_run(tmp_path / "runs" / "job")
    (span,) = run.spans("sleep")
    (stream,) = run.streams
    anchor = json.loads(stream["meta"])["clock_anchor"]
    check_span(span, anchor, json.loads(completed.stdout), test_clock)
