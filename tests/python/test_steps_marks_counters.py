"""stepscope.step, mark, counter and stats."""

import json

import pytest

import stepscope


def test_steps_are_numbered_per_phase_and_contain_their_spans(record):
    result = record("""
        import stepscope
        for _ in range(5):
            with stepscope.step():
                with stepscope.annotate("forward"):
                    pass
        for _ in range(2):
            with stepscope.step(phase="eval"):
                pass
        with stepscope.step("Predict", number=42):
            pass
        with stepscope.step("GLOBAL", 7) as step:
            assert step.phase == "GLOBAL"
    """)
    run = result.run
    assert run.problems == []
    steps = run.of_kind("step")
    numbers = {}
    for step in steps:
        numbers.setdefault(step["phase"], []).append(step["step"])
    assert numbers == {"TRAIN": [0, 1, 2, 3, 4], "EVAL": [0, 1], "PREDICT": [42], "GLOBAL": [7]}
    assert sorted({step["name"] for step in steps}) == [
        "Step:ModeKeys.EVAL", "Step:ModeKeys.GLOBAL", "Step:ModeKeys.PREDICT", "Step:ModeKeys.TRAIN"]
    assert not any(step["unfinished"] for step in steps)
    train_steps = [step for step in steps if step["phase"] == "TRAIN"]
    for forward in run.spans("forward"):
        assert sum(s["start_ns"] <= forward["start_ns"] and forward["end_ns"] <= s["end_ns"] for s in train_steps) == 1


def test_an_unknown_phase_is_a_value_error_naming_the_allowed_phases():
    with pytest.raises(ValueError, match="'TRAINING'; use one of TRAIN, EVAL, PREDICT, GLOBAL"):
        stepscope.step("TRAINING")
    with pytest.raises(ValueError, match="use one of"):
        stepscope.step(0)
    with pytest.raises(ValueError, match="step number"):
        stepscope.step("TRAIN", number=-2)
    with pytest.raises(ValueError, match="step number"):
        stepscope.step("TRAIN", number=1.5)
    assert repr(stepscope.step("eval", 3)) == "stepscope.step(phase='EVAL', number=3)"
    assert stepscope.PHASES == ("TRAIN", "EVAL", "PREDICT", "GLOBAL")


def test_marks_and_counters_keep_their_names_and_values(record):
    result = record("""
        import fractions
        import stepscope
        for _ in range(3):
            stepscope.mark("epoch")
        for value in (1.5, 0.25, 3):
            stepscope.counter("loss", value)
        stepscope.counter("lr", fractions.Fraction(1, 8))  # anything float() accepts
        try:
            stepscope.counter("loss", "not a number")
        except TypeError:
            print("TypeError")
    """)
    assert result.stdout.strip() == "TypeError"
    run = result.run
    assert run.problems == []
    assert run.counts("instant") == {"epoch": 3}
    assert [e["value"] for e in run.of_kind("counter", "loss")] == [1.5, 0.25, 3.0]
    assert [e["value"] for e in run.of_kind("counter", "lr")] == [0.125]


def test_stats_count_every_recorded_event(record):
    result = record("""
        import json
        import stepscope
        before = stepscope.stats()
        for _ in range(10):
            with stepscope.annotate("span"):
                stepscope.mark("mark")
        with stepscope.step():
            stepscope.counter("c", 1)
        during = stepscope.stats()
        stepscope.stop()
        after = stepscope.stats()
        print(json.dumps({"before": before, "during": during, "after": after,
                          "enabled_after_stop": stepscope.is_enabled()}))
    """)
    stats = json.loads(result.stdout)
    keys = {"events_recorded", "events_dropped", "bytes_written", "blocks_flushed"}
    assert set(stats["before"]) == keys
    assert stats["before"]["events_recorded"] == 0
    assert stats["during"]["events_recorded"] == 10 * 3 + 3
    assert stats["during"]["events_dropped"] == 0
    assert stats["after"]["events_recorded"] == 33
    assert stats["after"]["bytes_written"] > 0
    assert stats["enabled_after_stop"] is False
    run = result.run
    assert sum(run.counts(kind).get(name, 0) for kind, name in
               [("span", "span"), ("instant", "mark"), ("counter", "c")]) == 21
    assert len(run.of_kind("step")) == 1
