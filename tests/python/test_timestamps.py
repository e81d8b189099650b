"""Recorded times are Unix-epoch nanoseconds that agree with the process's own clock."""

import json


def test_span_times_match_the_wall_clock_under_stepscope_run(record):
    # Started the way `stepscope run` starts it: at import, from STEPSCOPE_NODE_DIR.
    result = record("""
        import json
        import time
        import stepscope
        before = time.time_ns()
        with stepscope.annotate("sleep"):
            time.sleep(0.05)
        after = time.time_ns()
        print(json.dumps({"before": before, "after": after}))
    """)
    wall = json.loads(result.stdout)
    (span,) = result.run.spans("sleep")
    slack_ns = 5_000_000  # anchoring error between the recorder's clock and time.time_ns()
    assert 50_000_000 <= span["end_ns"] - span["start_ns"] <= wall["after"] - wall["before"] + slack_ns, (
        f"span lasted {span['end_ns'] - span['start_ns']} ns for a 50 ms sleep; stream meta: "
        f"{result.run.streams[0]['meta']}")
    assert wall["before"] - slack_ns <= span["start_ns"] and span["end_ns"] <= wall["after"] + slack_ns


def test_span_times_match_the_wall_clock_after_an_explicit_start(run_python, read_run, tmp_path):
    result = run_python(f"""
        import json
        import time
        import stepscope
        stepscope.start(out={str(tmp_path / "runs")!r}, job="job", node="node")
        before = time.time_ns()
        with stepscope.annotate("sleep"):
            time.sleep(0.05)
        after = time.time_ns()
        print(json.dumps({{"before": before, "after": after}}))
    """)
    wall = json.loads(result.stdout)
    (span,) = read_run(tmp_path / "runs" / "job").spans("sleep")
    assert 50_000_000 <= span["end_ns"] - span["start_ns"] <= wall["after"] - wall["before"] + 5_000_000
