"""Exact steps under the training frameworks (docs/pytorch.md, "Training frameworks"): one step
per batch the framework processed, in the right phase, each TRAIN step with the optimizer update
it belongs to; no wait-only GLOBAL steps from a framework's read-ahead."""

import pytest


def check_exact_steps(run, eval_key, accumulate):
    processed = run.processed()
    counts = run.step_counts()
    assert counts == {"TRAIN": processed["train_batches"], "EVAL": processed[eval_key], "PREDICT": 0, "GLOBAL": 0}, \
        (counts, processed)
    # Every step is one batch: step numbers are consecutive per phase.
    for phase in ("TRAIN", "EVAL"):
        assert [s["step"] for s in run.steps(phase)] == list(range(counts[phase]))
    updates = [s["args"]["update"] for s in run.steps("TRAIN")]
    assert updates == [n // accumulate for n in range(len(updates))]
    assert len(set(updates)) == processed["optimizer_steps"]
    stepping = [s["args"]["optimizer_steps"] for s in run.steps("TRAIN")]
    assert stepping == [1 if n % accumulate == accumulate - 1 else 0 for n in range(len(stepping))]


@pytest.mark.parametrize("loader", ["sized", "iterable"])
def test_lightning_trainer(run_framework, loader):
    run = run_framework("lightning_train.py", "--loader", loader, "--accumulate", "4")
    check_exact_steps(run, "val_batches", accumulate=4)
    # Lightning's sanity check runs 2 validation batches before training.
    assert [s["phase"] for s in run.steps()][:3] == ["EVAL", "EVAL", "TRAIN"]


@pytest.mark.parametrize("accumulate", [1, 4])
def test_hugging_face_trainer(run_framework, accumulate):
    run = run_framework("hf_trainer.py", "--accumulate", str(accumulate))
    check_exact_steps(run, "eval_batches", accumulate=accumulate)
    assert {f["args"]["module"] for f in run.spans("Forward")} == {"BertForSequenceClassification"}


def test_accelerate_loop(run_framework):
    run = run_framework("accelerate_loop.py", "--accumulate", "2")
    check_exact_steps(run, "eval_batches", accumulate=2)
    assert {f["args"]["module"] for f in run.spans("Forward")} == {"Classifier"}
