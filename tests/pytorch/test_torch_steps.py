"""Steps and their structure under automatic PyTorch instrumentation (docs/pytorch.md, step
boundary rules 1-3): exact step counts per phase for the loops in examples/pytorch/, and
forward/backward/optimizer/data-wait spans nested in their steps."""

import collections
import math

import pytest

from torch_runs import LIFECYCLE

Counter = collections.Counter


def assert_steps_in_order(run):
    """Steps of the main process do not overlap and are numbered 0, 1, 2, ... per phase."""
    steps = run.steps()
    assert {s["pid"] for s in run.of_kind("step")} == {run.main_pid}, "steps outside the loop"
    for before, after in zip(steps, steps[1:]):
        assert before["end_ns"] <= after["start_ns"], (before, after)
    numbers = collections.defaultdict(list)
    for step in steps:
        numbers[step["phase"]].append(step["step"])
    for phase, seen in numbers.items():
        assert seen == list(range(len(seen))), (phase, seen)


# --- plain loop (rule 1) ------------------------------------------------------------------

PLAIN_EPOCHS, PLAIN_SAMPLES, PLAIN_BATCH = 2, 200, 16  # 13 batches per epoch, the last one short


@pytest.fixture(scope="module")
def plain(run_example):
    run = run_example("plain_loop.py", "--epochs", PLAIN_EPOCHS, "--samples", PLAIN_SAMPLES,
                      "--batch-size", PLAIN_BATCH)
    assert run.returncode == 0, run.describe()
    return run


def test_plain_loop_has_one_train_step_per_batch(plain):
    expected = PLAIN_EPOCHS * math.ceil(PLAIN_SAMPLES / PLAIN_BATCH)
    assert plain.printed("train_iterations") == expected == 26
    assert plain.step_counts() == {"TRAIN": expected, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert plain.of_kind("step") == plain.steps(), "no step may be left unfinished"
    assert_steps_in_order(plain)
    assert plain.problems == []


def test_plain_loop_spans_nest_in_their_steps(plain):
    inside, outside = plain.spans_by_step()
    expected = Counter({"DataLoaderIter": 1, "Forward": 2, "Backward": 1, "OptimizerStep": 1})
    for step, names in inside:
        assert names == expected, (step, names)
    # Only the wait that finds each epoch's iterator exhausted lies after the last step.
    assert outside == Counter({"DataLoaderIter": PLAIN_EPOCHS})
    # Forward spans name the top-level module: the model, then the loss module.
    modules = Counter(s["args"]["module"] for s in plain.spans("Forward"))
    assert modules == Counter({"Sequential": 26, "CrossEntropyLoss": 26})
    assert {s["args"]["optimizer"] for s in plain.spans("OptimizerStep")} == {"SGD"}


def test_each_step_begins_with_its_data_wait(plain):
    """Rule 1: the step begins when the loop asks for the batch, so the wait is its first span."""
    for step, _ in plain.spans_by_step()[0]:
        first = min((s for s in plain.spans() if s["start_ns"] >= step["start_ns"]
                     and s["end_ns"] <= step["end_ns"]), key=lambda s: s["start_ns"])
        assert first["name"] == "DataLoaderIter", step


def test_lifecycle_instants_once_in_the_main_process(plain):
    lifecycle = [e for e in plain.instants() if e["name"].startswith("Lifecycle:")]
    assert Counter(e["name"] for e in lifecycle) == Counter(LIFECYCLE)
    assert {e["pid"] for e in lifecycle} == {plain.main_pid}
    at = {e["name"]: e["start_ns"] for e in lifecycle}
    steps = plain.steps()
    assert at["Lifecycle:FirstStep"] == steps[0]["start_ns"]
    assert at["Lifecycle:LastStep"] == steps[-1]["end_ns"]
    assert at["Lifecycle:ProcessStart"] < at["Lifecycle:FirstStep"]
    assert at["Lifecycle:LastStep"] <= at["Lifecycle:Exit"]


def test_info_counts_agree_with_the_events(plain, run_stepscope_info):
    data = run_stepscope_info(plain.dir)
    assert data["counts"]["steps"] == {"TRAIN": 26, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    # Per step: data wait, model and loss forwards, backward, optimizer step; plus one
    # exhausted-iterator wait per epoch.
    assert data["counts"]["spans"] == 26 * 5 + PLAIN_EPOCHS
    # Lifecycle (4) and one DataLoaderIterInitialize per epoch.
    assert data["counts"]["instants"] == 4 + PLAIN_EPOCHS
    assert data["counts"]["unfinished"] == 0
    assert data["dropped_events"] == 0


# --- train, then evaluate each epoch (rule 3) --------------------------------------------

def test_train_then_eval_each_epoch(run_example):
    epochs, train_samples, eval_samples, batch = 2, 120, 50, 16  # 8 train, 4 eval batches
    run = run_example("train_eval.py", "--epochs", epochs, "--train-samples", train_samples,
                      "--eval-samples", eval_samples, "--batch-size", batch)
    assert run.returncode == 0, run.describe()
    assert run.printed("train_iterations") == 16 and run.printed("eval_iterations") == 8
    assert run.step_counts() == {"TRAIN": 16, "EVAL": 8, "PREDICT": 0, "GLOBAL": 0}
    expected = []
    for epoch in range(epochs):
        expected += [("TRAIN", epoch * 8 + i) for i in range(8)]
        expected += [("EVAL", epoch * 4 + i) for i in range(4)]
    assert run.phase_sequence() == expected
    inside, outside = run.spans_by_step()
    for step, names in inside:
        if step["phase"] == "TRAIN":
            assert names == Counter(DataLoaderIter=1, Forward=2, Backward=1, OptimizerStep=1), step
        else:
            assert names == Counter(DataLoaderIter=1, Forward=1), step
    assert outside == Counter({"DataLoaderIter": 2 * epochs})  # each loader exhausted per epoch
    assert {s["args"]["optimizer"] for s in run.spans("OptimizerStep")} == {"Adam"}
    assert_steps_in_order(run)


# --- gradient accumulation -----------------------------------------------------------------

def test_gradient_accumulation_gives_one_step_per_batch(run_example):
    epochs, samples, batch, accumulate = 2, 160, 16, 3  # 10 batches: optimizer after 3, 6, 9, 10
    run = run_example("grad_accumulation.py", "--epochs", epochs, "--samples", samples,
                      "--batch-size", batch, "--accumulate", accumulate)
    assert run.returncode == 0, run.describe()
    assert run.printed("train_iterations") == 20 and run.printed("optimizer_steps") == 8
    assert run.step_counts() == {"TRAIN": 20, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert_steps_in_order(run)
    inside, outside = run.spans_by_step()
    with_optimizer = [step["step"] for step, names in inside if names["OptimizerStep"]]
    assert with_optimizer == [2, 5, 8, 9, 12, 15, 18, 19]
    for step, names in inside:
        assert names == Counter(DataLoaderIter=1, Forward=1, Backward=1,
                                OptimizerStep=int(step["step"] in with_optimizer)), step
    assert outside == Counter({"DataLoaderIter": epochs})


# --- several models per iteration ----------------------------------------------------------

# Per iteration: GAN = generator once + discriminator 3 times, 2 backward, 2 optimizer steps;
# distillation = teacher + student forwards, 1 backward, 1 optimizer step.
PER_ITERATION = {
    "gan": Counter(Forward=4, Backward=2, OptimizerStep=2),
    "distill": Counter(Forward=2, Backward=1, OptimizerStep=1),
}


@pytest.mark.parametrize("loader", [True, False], ids=["dataloader", "no-dataloader"])
@pytest.mark.parametrize("pair", ["gan", "distill"])
def test_several_models_give_one_step_per_iteration(run_example, pair, loader):
    epochs, samples, batch = 2, 100, 16  # 7 iterations per epoch
    args = ["--pair", pair, "--epochs", epochs, "--samples", samples, "--batch-size", batch]
    run = run_example("several_models.py", *args, *([] if loader else ["--no-loader"]),
                      job=f"{pair}-{'loader' if loader else 'tensors'}")
    assert run.returncode == 0, run.describe()
    assert run.printed("train_iterations") == 14
    # Without a DataLoader the anchor is the first model called: the generator, or the teacher
    # (in eval mode under no_grad, yet its steps are TRAIN: the student trains in them).
    assert run.step_counts() == {"TRAIN": 14, "EVAL": 0, "PREDICT": 0, "GLOBAL": 0}
    assert_steps_in_order(run)
    inside, outside = run.spans_by_step()
    expected = PER_ITERATION[pair] + (Counter(DataLoaderIter=1) if loader else Counter())
    for step, names in inside:
        assert names == expected, (step, names)
    assert outside == (Counter(DataLoaderIter=epochs) if loader else Counter())


# --- no DataLoader (rule 2) ----------------------------------------------------------------

def test_loop_without_dataloader_steps_on_the_model_forward(run_example):
    epochs, train_batches, eval_batches = 2, 9, 4
    run = run_example("no_dataloader.py", "--epochs", epochs, "--train-batches", train_batches,
                      "--eval-batches", eval_batches, "--batch-size", 8)
    assert run.returncode == 0, run.describe()
    assert run.printed("train_iterations") == 18 and run.printed("eval_iterations") == 8
    assert run.step_counts() == {"TRAIN": 18, "EVAL": 8, "PREDICT": 0, "GLOBAL": 0}
    expected = []
    for epoch in range(epochs):
        expected += [("TRAIN", epoch * 9 + i) for i in range(9)]
        expected += [("EVAL", epoch * 4 + i) for i in range(4)]
    assert run.phase_sequence() == expected
    inside, outside = run.spans_by_step()
    for step, names in inside:
        if step["phase"] == "TRAIN":  # the loss module's forward belongs to the open step
            assert names == Counter(Forward=2, Backward=1, OptimizerStep=1), step
        else:
            assert names == Counter(Forward=1), step
    assert outside == Counter()
    # No DataLoader: no loader facts; the lifecycle is complete.
    assert run.instants("DataLoaderIterInitialize") == []
    assert Counter(e["name"] for e in run.instants()) == Counter(LIFECYCLE)
