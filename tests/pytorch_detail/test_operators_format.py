"""The operators window's conversion of profiler events, checked against real Kineto traces
(tests/fixtures/kineto): Debian's torch has no Kineto and no GPU, so events are rebuilt here the
way torch 2.x's profiler hands them over (FunctionEvent: time_range in µs since the trace start,
kernels attached to the launching runtime call, device events of their own for kernels and
memory copies, device_time_total), from what those traces recorded."""

import gzip
import json
import os

import lane
import pytest
import torch
from torch.autograd import DeviceType
from torch.autograd.profiler_util import Interval, Kernel

from stepscope.torch import _operators

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
SIMPLE_ADD = os.path.join(FIXTURES, "kineto", "critical_path_simple_add_trace.json.gz")
CPU_ONLY = os.path.join(FIXTURES, "kineto", "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")


class Event:
    """The attributes of torch 2.x's FunctionEvent that the conversion reads."""

    def __init__(self, name, thread, start_us, end_us, device_type=DeviceType.CPU, device_index=0,
                 shapes=None, kernels=(), device_time_total=0.0, self_device_time_total=0.0, self_cpu=None):
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.device_type = device_type
        self.device_index = device_index
        self.input_shapes = shapes or []
        self.kernels = list(kernels)
        self.device_time_total = device_time_total
        self.self_device_time_total = self_device_time_total
        on_cpu = device_type == DeviceType.CPU
        self.cpu_time_total = end_us - start_us if on_cpu else 0
        self.self_cpu_time_total = (self.cpu_time_total if self_cpu is None else self_cpu) if on_cpu else 0
        self.is_async = False


class Results:
    def __init__(self, trace_start_ns):
        self._start = trace_start_ns

    def trace_start_ns(self):
        return self._start


class Profile:
    def __init__(self, trace_start_ns):
        self.kineto_results = Results(trace_start_ns)


def load(path):
    with gzip.open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def simple_add():
    """The trace's aten::rand call: its CPU ops and runtime calls, and the device work they
    launched (matched by correlation id), as FunctionEvents relative to the trace start."""
    trace = load(SIMPLE_ADD)["traceEvents"]
    trace_start_us = next(e["ts"] for e in trace if e.get("cat") == "Trace")
    rand = next(e for e in trace if e.get("cat") == "cpu_op" and e["name"] == "aten::rand")
    inside = [e for e in trace if e.get("cat") in ("cpu_op", "cuda_runtime") and e["tid"] == rand["tid"]
              and rand["ts"] <= e["ts"] and e["ts"] + e["dur"] <= rand["ts"] + rand["dur"]]
    by_correlation = {e["args"]["correlation"]: e for e in trace
                      if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    launched = [by_correlation[e["args"]["correlation"]] for e in inside
                if e.get("cat") == "cuda_runtime" and e["args"].get("correlation") in by_correlation]
    assert launched, "the fixture's aten::rand launches a kernel"
    events = []
    for e in inside:
        device = by_correlation.get(e["args"].get("correlation")) if e["cat"] == "cuda_runtime" else None
        kernels = [Kernel(device["name"], device["args"]["device"], device["dur"])] if device else []
        # A CPU op's device time is that of the kernels launched inside it.
        device_total = sum(by_correlation[r["args"]["correlation"]]["dur"] for r in inside
                           if r["cat"] == "cuda_runtime" and r["args"].get("correlation") in by_correlation
                           and e["ts"] <= r["ts"] <= e["ts"] + e["dur"])
        events.append(Event(e["name"], e["tid"], e["ts"] - trace_start_us, e["ts"] + e["dur"] - trace_start_us,
                            kernels=kernels, device_time_total=device_total,
                            self_device_time_total=device["dur"] if device else 0))
    for d in launched:
        events.append(Event(d["name"], d["tid"], d["ts"] - trace_start_us, d["ts"] + d["dur"] - trace_start_us,
                            device_type=DeviceType.CUDA, device_index=d["args"]["device"]))
    return trace_start_us, inside, launched, events


def test_kineto_trace_start_places_events_on_the_unix_clock(simple_add):
    trace_start_us, inside, launched, events = simple_add
    start_ns, clock, error = _operators.profiler_start_ns(Profile(trace_start_us * 1000), trace_start_us * 1000 - 5000,
                                                          trace_start_us * 1000 + 5000)
    assert (start_ns, clock, error) == (trace_start_us * 1000, "trace_start", 0)
    payload = _operators.events_payload(events, start_ns)
    assert [(e["name"], e["start_ns"], e["end_ns"]) for e in payload["events"]] == [
        (e["name"], e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000) for e in sorted(inside, key=lambda e: e["ts"])]
    device = [(e["name"], e["device_type"], e["device"], e["start_ns"], e["end_ns"]) for e in payload["device_events"]]
    assert device == [(d["name"], "cuda", d["args"]["device"], d["ts"] * 1000, (d["ts"] + d["dur"]) * 1000)
                      for d in launched]
    assert (payload["events_total"], payload["device_events_total"]) == (len(inside), len(launched))


def test_kernels_and_device_time_of_operators(simple_add):
    trace_start_us, inside, launched, events = simple_add
    payload = _operators.events_payload(events, trace_start_us * 1000)
    launches = [e for e in payload["events"] if e.get("kernels")]
    assert [(e["name"], e["kernels"]) for e in launches] == [
        ("cudaLaunchKernel", [{"name": d["name"], "device": 0, "duration_ns": d["dur"] * 1000}]) for d in launched]
    (rand,) = [e for e in payload["events"] if e["name"] == "aten::rand"]
    assert rand["device_ns"] == sum(d["dur"] for d in launched) * 1000
    assert rand["cpu_ns"] == next(e["dur"] for e in inside if e["name"] == "aten::rand") * 1000
    host_only = [e for e in payload["events"] if e["name"] == "aten::empty"]
    assert host_only and all("device_ns" not in e for e in host_only)


def test_a_trace_start_on_another_clock_falls_back_to_the_bracket():
    # This trace's timestamps are on a monotonic clock (baseTimeNanoseconds says where Unix is).
    trace = load(CPU_ONLY)
    monotonic_start_ns = int(next(e["ts"] for e in trace["traceEvents"] if e.get("cat") == "Trace") * 1000)
    before, after = trace["baseTimeNanoseconds"], trace["baseTimeNanoseconds"] + 3000
    assert _operators.profiler_start_ns(Profile(monotonic_start_ns), before, after) == (before + 1500, "bracket", 1500)


def test_recorded_shapes_come_from_the_events():
    trace = load(CPU_ONLY)["traceEvents"]
    op = next(e for e in trace if e.get("cat") == "cpu_op" and e["args"].get("Input Dims"))
    event = Event(op["name"], op["tid"], 1.0, 1.0 + op["dur"], shapes=op["args"]["Input Dims"], self_cpu=0.25)
    (converted,) = _operators.events_payload([event], 1_000_000)["events"]
    assert converted["shapes"] == op["args"]["Input Dims"]
    assert (converted["start_ns"], converted["cpu_ns"], converted["self_cpu_ns"]) == (
        1_001_000, round(op["dur"] * 1000), 250)


def test_events_beyond_the_cap_are_counted_not_kept():
    events = [Event(f"op{i}", 1, i, i + 0.5) for i in range(10)]
    payload = _operators.events_payload(events, 0, max_events=4)
    assert [e["name"] for e in payload["events"]] == ["op0", "op1", "op2", "op3"]
    assert (payload["events_total"], payload["events_capped"]) == (10, True)


def test_profiler_choice_follows_capabilities():
    mode, cuda, make = _operators.choose_profiler(kineto=True, cuda=False)
    profiler = make()
    assert (mode, cuda, type(profiler)) == ("kineto", False, torch.profiler.profile)
    assert profiler.activities == {torch.profiler.ProfilerActivity.CPU} and profiler.record_shapes
    mode, cuda, make = _operators.choose_profiler(kineto=False, cuda=False)
    profiler = make()
    assert (mode, type(profiler), profiler.record_shapes) == ("legacy", torch.autograd.profiler.profile, True)
    assert _operators.choose_profiler()[0] == ("kineto" if torch.autograd.kineto_available() else "legacy")


def _one_training_step(model, optimizer):
    optimizer.zero_grad()
    loss = model(torch.ones(4, 8)).sum()
    loss.backward()
    optimizer.step()


def _profile_one_step(stop):
    """Profiles one identical training step with this torch's legacy profiler, stopped by `stop`
    (profiler -> profiler with its events parsed); the (name, shapes) of its operators."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    _one_training_step(model, optimizer)  # warm-up: first-call allocations differ
    _, _, factory = _operators.choose_profiler(kineto=False, cuda=False)
    profiler = factory()
    profiler.__enter__()
    _one_training_step(model, optimizer)
    stopped = stop(profiler)
    return sorted((e.name, str(e.input_shapes)) for e in stopped.function_events), stopped


def test_stopping_now_and_parsing_later_gives_what_exit_gives():
    """stop_profiler's split (disable on the training thread, parse on the writer thread) must
    give the events torch's own __exit__ would: same operators with the same shapes, a tree.
    torch 1.13 parses inside __exit__, so stepscope splits it; torch 2.x parses lazily on the
    first access of function_events, so its own __exit__ already leaves the parsing for later."""
    def with_exit(profiler):
        profiler.__exit__(None, None, None)
        return profiler

    def split(profiler):
        if lane.is_torch2():
            assert not _operators._parse_later_possible(profiler)
            finish = _operators.stop_profiler(profiler)
            assert profiler._function_events is None  # torch 2.x has not parsed yet
        else:
            assert _operators._parse_later_possible(profiler)
            finish = _operators.stop_profiler(profiler)
            assert profiler.function_events is None  # nothing parsed on the training thread
        return finish()

    # As sets: torch 1.13 records one aten::sum more or less from run to run, either way.
    expected, _ = _profile_one_step(with_exit)
    got, stopped = _profile_one_step(split)
    assert set(got) == set(expected) and len(got) > 20
    assert any(e.cpu_children for e in stopped.function_events)  # _build_tree ran
    assert stopped.key_averages()  # what the payload asks for next
