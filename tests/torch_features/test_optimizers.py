"""Optimizer steps (docs/pytorch.md rule 5): closures, GradScaler skipping a step, LR
schedulers wrapping step, and gradient accumulation; each TRAIN step carries its update."""

import json

import pytest

from conftest import requires_torch2
from torch_runs import contains


def seen(run):
    return json.loads(run.stdout.strip().splitlines()[-1])


def run_case(run_script, case):
    run = run_script("optimizer_cases.py", case)
    assert run.returncode == 0, run.describe()
    assert "Traceback" not in run.stderr and "Warning" not in run.stderr, run.stderr
    return run


def updates(run):
    return [(s["args"]["update"], s["args"]["optimizer_steps"]) for s in run.steps("TRAIN")]


def test_a_closure_runs_beside_the_optimizer_step_not_inside_it(run_script):
    run = run_case(run_script, "closure")
    assert run.step_counts()["TRAIN"] == seen(run)["batches"] == 12
    forwards, backwards, steps = run.spans("Forward"), run.spans("Backward"), run.spans("OptimizerStep")
    assert len(forwards) == len(backwards) == 12
    for span in forwards + backwards:
        assert not any(contains(step, span) for step in steps), f"{span['name']} inside OptimizerStep"
    # Each step() is cut once around its closure: before it, and after it (marked so).
    assert len(steps) == 24
    assert sum(1 for s in steps if s["args"].get("after_closure")) == 12
    assert updates(run) == [(n, 1) for n in range(12)]


def test_lbfgs_closure_forwards_do_not_begin_steps(run_script):
    run = run_case(run_script, "lbfgs")
    assert run.step_counts() == {"TRAIN": 12, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert [s["step"] for s in run.steps()] == list(range(12))
    assert updates(run) == [(n, 1) for n in range(12)]


@requires_torch2
def test_a_grad_scaler_that_skips_an_update_is_recorded(run_script):
    run = run_case(run_script, "grad_scaler")
    what = seen(run)
    assert what["skipped"] == [3] and what["batches"] == 12
    assert run.step_counts()["TRAIN"] == 12
    assert len(run.spans("OptimizerStep")) == what["optimizer_steps"] == 11
    skipped = run.instants("OptimizerStepSkipped")
    assert len(skipped) == 1 and skipped[0]["args"]["optimizer"] == "SGD"
    step_3 = run.steps("TRAIN")[3]
    assert contains(step_3, skipped[0]) and step_3["args"]["update_skipped"] == 1
    # The skipped update is still an update: the step after it belongs to the next one.
    assert [u for u, _ in updates(run)] == list(range(12))


def test_an_lr_scheduler_wrapping_step_keeps_one_span_per_step(run_script):
    run = run_case(run_script, "scheduler")
    assert run.step_counts()["TRAIN"] == 12
    assert len(run.spans("OptimizerStep")) == 12
    assert updates(run) == [(n, 1) for n in range(12)]


def test_accumulated_batches_share_their_update(run_script):
    run = run_case(run_script, "accumulate")
    assert run.step_counts()["TRAIN"] == 12
    assert updates(run) == [(n // 4, 1 if n % 4 == 3 else 0) for n in range(12)]
