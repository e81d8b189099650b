"""Turning automatic instrumentation off (STEPSCOPE_TORCH=0) and scripts that mark their own
steps with stepscope.step() (docs/pytorch.md rule 4: explicit steps win)."""

import collections
import textwrap

import pytest

Counter = collections.Counter

# 64 samples in batches of 8: 8 TRAIN steps, then 8 PREDICT steps over the same loader.
EXPLICIT_LOOPS = {
    # The step opens before the batch is fetched (the old examples/train_cnn.py pattern).
    "step-then-next": """
        batches = iter(loader)
        for _ in range(len(loader)):
            with stepscope.step(phase="TRAIN"):
                x, y = next(batches)
                train(x, y)
        model.eval()
        with torch.no_grad():
            batches = iter(loader)
            for _ in range(len(loader)):
                with stepscope.step(phase="PREDICT"):
                    x, y = next(batches)
                    model(x)
    """,
    # The batch is fetched first: the DataLoader has begun an automatic step by the time the
    # script's first stepscope.step() runs.
    "for-batch-in-loader": """
        for x, y in loader:
            with stepscope.step(phase="TRAIN"):
                train(x, y)
        model.eval()
        with torch.no_grad():
            for x, y in loader:
                with stepscope.step(phase="PREDICT"):
                    model(x)
    """,
}

EXPLICIT_SCRIPT = """
import stepscope
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(x, y):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()

"""


@pytest.mark.parametrize("loop", sorted(EXPLICIT_LOOPS))
def test_explicit_steps_replace_automatic_ones(run_example, tmp_path, loop):
    script = tmp_path / "explicit_steps.py"
    script.write_text(EXPLICIT_SCRIPT + textwrap.dedent(EXPLICIT_LOOPS[loop]))
    run = run_example(str(script), job=f"explicit-{loop}")
    assert run.returncode == 0, run.describe()
    assert run.step_counts() == {"TRAIN": 8, "EVAL": 0, "PREDICT": 8, "GLOBAL": 0}
    assert run.phase_sequence() == ([("TRAIN", n) for n in range(8)]
                                    + [("PREDICT", n) for n in range(8)])
    # Spans go on: every forward, backward, optimizer step and data wait is recorded (a for
    # loop also asks each exhausted iterator once more).
    waits = 18 if loop == "for-batch-in-loader" else 16
    assert Counter(s["name"] for s in run.spans()) == Counter(
        Forward=16, Backward=8, OptimizerStep=8, DataLoaderIter=waits)
    inside, _ = run.spans_by_step()
    for step, names in inside:
        assert names["Forward"] == 1, (step, names)


def test_stepscope_torch_0_turns_instrumentation_off(run_example):
    run = run_example("plain_loop.py", "--epochs", 1, "--samples", 64, env={"STEPSCOPE_TORCH": "0"},
                      job="torch-off")
    assert run.returncode == 0, run.describe()
    assert run.printed("train_iterations") == 2
    assert run.of_kind("step") == []
    assert run.spans() == []
    # The process start is recorded before the setting is read; nothing else is.
    assert [e["name"] for e in run.events] == ["Lifecycle:ProcessStart"]


@pytest.mark.parametrize("loop", sorted(EXPLICIT_LOOPS))
def test_explicit_steps_mark_the_lifecycle(run_example, tmp_path, loop):
    """Spec §2.1: the lifecycle (first step = end of initialization, last step) of every job."""
    script = tmp_path / "explicit_steps.py"
    script.write_text(EXPLICIT_SCRIPT + textwrap.dedent(EXPLICIT_LOOPS[loop]))
    run = run_example(str(script), job=f"explicit-lifecycle-{loop}")
    assert run.returncode == 0, run.describe()
    marks = {e["name"]: e["start_ns"] for e in run.instants() if e["name"].startswith("Lifecycle:")}
    steps = run.steps()
    assert marks.get("Lifecycle:FirstStep") == steps[0]["start_ns"]
    assert marks.get("Lifecycle:LastStep") == steps[-1]["end_ns"]
