"""An operators window on torch 2.x: Kineto's operators with shapes in the detail document, the
window's PyTorch trace file beside it (what Perfetto and Holistic Trace Analysis open), both
aligned with the window's steps, and the conversion done off the training thread."""

import gzip
import json
import os

import pytest

from conftest import run_tiny_train

BATCH = 4
# Torch's profiler_util._filter_name: in the trace, not among torch's (or the document's) events.
HIDDEN = {"aten::is_leaf", "aten::output_nr", "aten::_version", "profiler::_record_function_enter",
          "profiler::_record_function_enter_new", "profiler::_record_function_exit"}


@pytest.fixture(scope="module")
def run(cli, tmp_path_factory):
    """tiny_train.py, 12 TRAIN steps, one operators window over steps 5-6."""
    return run_tiny_train(cli, tmp_path_factory.mktemp("window"), "window")


def table(doc):
    return {row["name"]: row for row in doc["operators"]}


def load_trace(run):
    with gzip.open(os.path.join(run.detail_dir, run.doc()["trace_file"])) as f:
        return json.load(f)


def test_document_holds_kinetos_operators_with_shapes(run):
    doc = run.doc()
    assert (doc["kind"], doc["pid"], doc["steps"], doc["complete"]) == ("operators", run.main_pid, [5, 6], True)
    assert (doc["profiler"], doc["clock"], doc["cuda"]) == ("kineto", "trace_start", False)
    assert doc["torch_version"].startswith("2.")
    ops = table(doc)
    # Two steps of an 8 -> 16 -> 2 MLP: two linear layers forward each, one optimizer step each.
    assert (ops["aten::linear"]["calls"], ops["aten::addmm"]["calls"]) == (4, 4)
    assert ops["Optimizer.step#SGD.step"]["calls"] == 2
    linears = [e["shapes"] for e in doc["events"] if e["name"] == "aten::linear"]
    assert linears == [[[BATCH, 8], [16, 8], [16]], [[BATCH, 16], [2, 16], [2]]] * 2
    assert doc["events_total"] == len(doc["events"]) == sum(row["calls"] for row in doc["operators"])
    assert doc["events_capped"] is False and doc["device_events"] == []
    for event in doc["events"]:
        assert 0 <= event["self_cpu_ns"] <= event["cpu_ns"] == event["end_ns"] - event["start_ns"]
        assert event["tid"] > 0
    assert "conversion_problems" not in doc
    assert doc["finish_ns"] > 0 and doc["stop_overhead_ns"] > 0


def test_the_window_is_also_a_pytorch_trace_file(run):
    doc = run.doc()
    assert doc["trace_file"] == f"operators-{run.main_pid}-0.pt.trace.json.gz"
    assert run.detail_files() == [f"operators-{run.main_pid}-0.json.zst", doc["trace_file"]]
    trace = load_trace(run)
    # Torch's own trace (schemaVersion, baseTimeNanoseconds, traceEvents), plus the rank HTA reads.
    assert trace["schemaVersion"] == 1 and trace["baseTimeNanoseconds"] > 0
    assert trace["distributedInfo"] == {"rank": 0, "world_size": 1}
    operators = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    # The document's events are the trace's operators, as torch itself lists them.
    assert sorted(e["name"] for e in operators if e["name"] not in HIDDEN) == sorted(e["name"] for e in doc["events"])
    linear = next(e for e in operators if e["name"] == "aten::linear")
    assert linear["args"]["Input Dims"] == [[BATCH, 8], [16, 8], [16]]


def test_window_lies_in_its_steps_and_its_span(run):
    doc = run.doc()
    steps = run.train_steps()
    (span,) = run.spans("DetailWindow:operators")
    assert span["args"] == {"window": 0, "first_step": 5, "last_step": 6, "steps": 2}
    # Profiler (Unix clock) against recorder (tick clock converted to Unix): the alignment error
    # is recorded in the document; allow it plus 1 ms of clock conversion.
    slack = doc["clock_error_ns"] + 1_000_000
    first = min(e["start_ns"] for e in doc["events"])
    last = max(e["end_ns"] for e in doc["events"])
    assert span["start_ns"] - slack <= first and last <= span["end_ns"] + slack
    assert steps[5]["start_ns"] - slack <= first and last <= steps[6]["end_ns"] + slack
    # Each step's optimizer step lies in that step.
    optimizer_steps = sorted(e["start_ns"] for e in doc["events"] if e["name"] == "Optimizer.step#SGD.step")
    assert len(optimizer_steps) == 2
    for number, start in zip((5, 6), optimizer_steps):
        assert steps[number]["start_ns"] - slack <= start <= steps[number]["end_ns"] + slack


def test_conversion_runs_on_the_writer_thread(run):
    (stop,) = run.spans("DetailWindowStop")
    (write,) = run.spans("DetailWindowWrite")
    (window,) = run.spans("DetailWindow:operators")
    assert stop["tid"] == window["tid"] != write["tid"]
    assert stop["pid"] == write["pid"] == run.main_pid
    # Stopping lies between the window's last step and the next one.
    steps = run.train_steps()
    assert steps[6]["end_ns"] <= stop["start_ns"] and stop["end_ns"] <= steps[7]["start_ns"]


def test_holistic_trace_analysis_reads_the_detail_directory(run):
    from hta.trace_analysis import TraceAnalysis  # in the torch2 lane's environment (requirements/dev.txt)

    analysis = TraceAnalysis(trace_dir=run.detail_dir)
    assert list(analysis.t.get_all_traces().keys()) == [0]
    frame = analysis.t.get_trace(0)
    names = analysis.t.symbol_table.get_sym_table()
    addmm = frame[frame["name"].map(lambda i: names[i]) == "aten::addmm"]
    row = table(run.doc())["aten::addmm"]
    assert len(addmm) == row["calls"]
    # HTA keeps whole µs: it rounds each event's start up and its end down
    # (hta.common.trace_parser.round_down_time_stamps), so a duration loses up to 2 µs; the sums
    # agree to that.
    assert abs(addmm["dur"].sum() * 1000 - row["cpu_ns"]) <= 2000 * (row["calls"] + 1)


def test_stepscope_info_lists_the_window(run, stepscope):
    doc = run.doc()
    text = stepscope("info", run.dir)
    assert text.returncode == 0, text.stderr
    assert f"operators pid {run.main_pid} window 0, TRAIN steps 5-6" in text.stdout
    info = stepscope("info", run.dir, "--json")
    assert info.returncode == 0, info.stderr
    (window,) = json.loads(info.stdout)["detail_windows"]
    assert window["file"] == f"n/detail/operators-{run.main_pid}-0.json.zst"
    assert window["summary"] == {"profiler": "kineto", "events": doc["events_total"], "events_capped": False,
                                 "device_events": 0, "operators": len(doc["operators"])}
