"""The window scheduler's rules (stepscope/torch/_windows.py), driven step by step with fake
collectors in this process (which does not record: the record calls are no-ops here)."""

import pytest

from stepscope.torch import _window_writer, _windows

TRAIN, EVAL = 0, 1


class FakeCollector:
    def __init__(self, log, spec, index):
        self.log, self.name = log, f"{spec.kind}#{index}"

    def start(self):
        self.log.append(("start", self.name))

    def step_ended(self, phase, number, more):
        self.log.append(("step", self.name, phase, number, more))

    def stop(self):
        self.log.append(("stop", self.name))
        return {"fake": True}

    def discard(self):
        self.log.append(("discard", self.name))


class FakeClock:
    """Stands in for the time module inside _windows."""

    def __init__(self, now):
        self.now = now

    def time(self):
        return self.now

    def time_ns(self):
        return int(self.now * 1e9)

    def perf_counter_ns(self):
        return 0


@pytest.fixture
def harness(monkeypatch):
    log, documents = [], []
    monkeypatch.setattr(_windows, "_make_collector", lambda spec, index: FakeCollector(log, spec, index))
    monkeypatch.setattr(_windows._detail_store, "write_window", lambda doc: (documents.append(doc), ("f", 1))[1])
    monkeypatch.setattr(_windows.os, "register_at_fork", lambda **kwargs: None)
    clock = FakeClock(1_800_000_000.0)
    monkeypatch.setattr(_windows, "time", clock)

    def make(*windows):
        specs = [_windows.WindowSpec.from_json(w, f"window {i}", "test") for i, w in enumerate(windows)]
        return _windows.WindowScheduler(specs, writer=_window_writer.InlineWriter())

    make.log, make.documents, make.clock = log, documents, clock
    return make


def run_steps(scheduler, phases, first_numbers=None, clock=None, seconds=0.0):
    """Steps of the given phases, numbered per phase, each predicted right."""
    numbers = dict(first_numbers or {})
    for phase in phases:
        number = numbers.get(phase, 0)
        scheduler.on_step_begin(phase, number)
        if clock is not None:
            clock.now += seconds
        scheduler.on_step_end(phase, number)
        numbers[phase] = number + 1


def test_a_step_window_covers_exactly_its_steps(harness):
    scheduler = harness({"kind": "python", "start_step": 2, "num_steps": 2})
    run_steps(scheduler, [TRAIN] * 6)
    assert harness.log == [("start", "python#0"), ("step", "python#0", TRAIN, 2, True),
                           ("step", "python#0", TRAIN, 3, False), ("stop", "python#0")]
    (doc,) = harness.documents
    assert (doc["steps"], doc["steps_counted"], doc["other_steps"], doc["complete"]) == ([2, 3], 2, 0, True)
    assert doc["window"]["index"] == 0 and doc["fake"] is True


def test_steps_of_other_phases_inside_are_not_counted(harness):
    scheduler = harness({"kind": "operators", "start_step": 1, "num_steps": 2})
    run_steps(scheduler, [TRAIN, TRAIN, EVAL, EVAL, TRAIN, TRAIN])
    (doc,) = harness.documents
    assert (doc["steps"], doc["steps_counted"], doc["other_steps"]) == ([1, 2], 2, 2)


def test_a_window_opened_for_a_mispredicted_step_is_discarded_and_waits(harness):
    scheduler = harness({"kind": "operators", "start_step": 3, "num_steps": 1})
    run_steps(scheduler, [TRAIN] * 3)
    scheduler.on_step_begin(TRAIN, 3)  # predicted TRAIN 3 ...
    scheduler.on_step_end(EVAL, 0)     # ... it was an evaluation step
    run_steps(scheduler, [TRAIN], {TRAIN: 3})
    assert harness.log == [("start", "operators#0"), ("discard", "operators#0"), ("start", "operators#0"),
                           ("step", "operators#0", TRAIN, 3, False), ("stop", "operators#0")]
    assert harness.documents[0]["steps"] == [3, 3]


def test_a_due_window_waits_while_its_kind_is_busy(harness):
    scheduler = harness({"kind": "python", "start_step": 1, "num_steps": 3},
                        {"kind": "python", "start_step": 2, "num_steps": 1, "profiler": "sampling"},
                        {"kind": "operators", "start_step": 2, "num_steps": 1})
    run_steps(scheduler, [TRAIN] * 6)
    assert [(d["window"]["index"], d["steps"]) for d in harness.documents] == [(2, [2, 2]), (0, [1, 3]), (1, [4, 4])]


def test_dataloader_windows_open_at_the_end_of_the_step_before(harness):
    scheduler = harness({"kind": "dataloader", "start_step": 2, "num_steps": 1},
                        {"kind": "dataloader", "start_step": 0, "num_steps": 1, "phase": "EVAL"})
    scheduler.on_step_begin(TRAIN, 0)
    scheduler.on_step_end(TRAIN, 0)
    assert harness.log == []
    scheduler.on_step_begin(TRAIN, 1)
    scheduler.on_step_end(TRAIN, 1)
    assert harness.log == [("start", "dataloader#0")]  # before TRAIN step 2 began
    run_steps(scheduler, [TRAIN, EVAL], {TRAIN: 2})
    assert [(d["window"]["index"], d["steps"], d["step_phase"]) for d in harness.documents] == [
        (0, [2, 2], "TRAIN"), (1, [0, 0], "EVAL")]


def test_outside_windows_a_step_takes_the_fast_path(harness, monkeypatch):
    scheduler = harness(*_windows._config.default_detail())
    slow = []
    monkeypatch.setattr(scheduler, "_step_begin", lambda phase, number: slow.append(("begin", number)))
    monkeypatch.setattr(scheduler, "_step_end", lambda phase, number: slow.append(("end", number)))
    run_steps(scheduler, [TRAIN] * 5 + [EVAL] * 20)
    assert slow == []
    scheduler.on_step_begin(TRAIN, 5)
    assert slow == [("begin", 5)]


def test_time_windows_open_and_close_at_boundaries(harness, capsys):
    start = harness.clock.now + 1.0
    scheduler = harness({"kind": "operators", "start_unix_time": start, "duration_s": 0.25},
                        {"kind": "python", "start_unix_time": start - 10, "duration_s": 1})
    # Steps of 0.125 s (exact in binary): step k ends at start + 0.125 * (k - 7).
    run_steps(scheduler, [TRAIN] * 12, clock=harness.clock, seconds=0.125)
    assert harness.log == [("start", "operators#0"), ("step", "operators#0", TRAIN, 8, True),
                           ("step", "operators#0", TRAIN, 9, False), ("stop", "operators#0")]
    (doc,) = harness.documents
    # Opened at step 7's end (= its start time), closed at step 9's end (= start + duration).
    assert (doc["start_ns"], doc["end_ns"]) == (int(start * 1e9), int((start + 0.25) * 1e9))
    assert (doc["steps"], doc["complete"]) == ([8, 9], True)
    assert capsys.readouterr().err == ("stepscope: detail window 1 (python from 1799999991.000 for 1 s) passed with "
                                       "no step boundary inside it; skipped\n")


def test_an_explicit_window_defers_a_scheduled_one_of_its_kind(harness):
    scheduler = harness({"kind": "operators", "start_step": 1, "num_steps": 1})
    scheduler.on_step_begin(TRAIN, 0)
    explicit = scheduler.open_explicit(_windows.WindowSpec("operators", source="explicit"))
    scheduler.on_step_end(TRAIN, 0)
    run_steps(scheduler, [TRAIN], {TRAIN: 1})
    scheduler.close_explicit(explicit)
    run_steps(scheduler, [TRAIN], {TRAIN: 2})
    assert [(d["window"]["index"], d["steps"]) for d in harness.documents] == [(1, [0, 1]), (0, [2, 2])]
    with pytest.raises(RuntimeError, match="another operators window is open"):
        scheduler.open_explicit(_windows.WindowSpec("operators", source="explicit"))
        scheduler.open_explicit(_windows.WindowSpec("operators", source="explicit"))


def test_windows_still_open_at_exit_are_written_incomplete(harness):
    scheduler = harness({"kind": "python", "start_step": 1, "num_steps": 5})
    run_steps(scheduler, [TRAIN] * 3)
    scheduler.close_all()
    (doc,) = harness.documents
    assert (doc["steps"], doc["steps_counted"], doc["complete"]) == ([1, 2], 2, False)


def test_a_control_replaces_the_pending_windows_of_its_kind(harness):
    scheduler = harness({"kind": "operators", "start_step": 5, "num_steps": 1},
                        {"kind": "python", "start_step": 9, "num_steps": 3})
    indices = scheduler.add_windows([{"kind": "operators", "start_step": 2, "num_steps": 1}])
    assert indices == [2]
    assert [(i, s.kind, s.start_step, s.source) for i, s in scheduler.pending()] == [
        (1, "python", 9, "test"), (2, "operators", 2, "control")]
    with pytest.raises(ValueError, match=r"^detail window 1: start_step -1 is negative; steps count from 0$"):
        scheduler.add_windows([{"kind": "operators", "start_step": -1, "num_steps": 1}])


def test_resolve_windows_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("STEPSCOPE_CONFIG", raising=False)
    for name in ("STEPSCOPE_DETAIL", "STEPSCOPE_DETAILED_STEPS", "STEPSCOPE_PYTHON_STEPS",
                 "STEPSCOPE_DATALOADER_STEPS", "STEPSCOPE_PYTHON_PROFILER"):
        monkeypatch.delenv(name, raising=False)
    defaults = _windows.resolve_windows()
    assert [(s.kind, s.start_step, s.num_steps, s.profiler, s.timer, s.source) for s in defaults] == [
        ("operators", 5, 1, None, None, "default"), ("dataloader", 7, 1, None, None, "default"),
        ("python", 9, 3, "cprofile", "cycle", "default")]
    config = tmp_path / "config.json"
    config.write_text('{"detail": [{"kind": "dataloader", "start_unix_time": 1.8e9, "duration_s": 2}]}')
    monkeypatch.setenv("STEPSCOPE_CONFIG", str(config))
    (from_file,) = _windows.resolve_windows()
    assert (from_file.kind, from_file.start_unix_time, from_file.duration_s) == ("dataloader", 1.8e9, 2.0)
    assert _windows.resolve_windows(detail=[]) == []
    (keyword,) = _windows.resolve_windows(detail=[{"kind": "python", "start_step": 0, "num_steps": 1,
                                                   "profiler": "sampling"}])
    assert (keyword.profiler, keyword.timer, keyword.source) == ("sampling", None, "keyword argument")


def test_a_failing_collector_ends_its_window_not_the_job(harness, monkeypatch, capsys):
    class Broken(FakeCollector):
        def step_ended(self, phase, number, more):
            raise RuntimeError("boom")

    monkeypatch.setattr(_windows, "_make_collector", lambda spec, index: Broken(harness.log, spec, index))
    scheduler = harness({"kind": "python", "start_step": 1, "num_steps": 2})
    run_steps(scheduler, [TRAIN] * 4)
    assert harness.log == [("start", "python#0"), ("discard", "python#0")]
    assert harness.documents == [] and scheduler.pending() == []
    assert capsys.readouterr().err == "stepscope: detail window 0 (python TRAIN steps 1-2) failed: RuntimeError: boom\n"
