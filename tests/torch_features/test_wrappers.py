"""Wrapped models (docs/pytorch.md, "Wrappers"): spans and the anchor model name the user's
model, not OptimizedModule, DistributedDataParallel or DataParallel, and calling the unwrapped
model for evaluation is still the anchor model's step."""

import pytest

import lane

WRAPPERS = {"ddp": "DistributedDataParallel", "dp": "DataParallel", "compiled": "OptimizedModule",
            "ddp_compiled": "OptimizedModule"}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_a_wrapped_model_is_the_users_model(run_script, wrapper):
    if wrapper in ("compiled", "ddp_compiled") and not lane.is_torch2():
        pytest.skip("torch 1.13 has no torch.compile")
    run = run_script("wrapped_models.py", wrapper)
    assert run.returncode == 0, run.describe()
    assert run.phase_sequence() == [("TRAIN", n) for n in range(6)] + [("EVAL", n) for n in range(4)]
    forwards = run.spans("Forward")
    assert len(forwards) == 10
    assert {f["args"]["module"] for f in forwards} == {"Classifier"}
    assert [f["args"].get("wrapper") for f in forwards] == [WRAPPERS[wrapper]] * 6 + [None] * 4
