"""torch.compile and torch.export under `stepscope run` (docs/pytorch.md, "torch.compile"):
stepscope causes no graph break (dynamo's counters equal a plain run's), and the steps and
their phases are those of the eager run."""

import json

import pytest

from conftest import requires_torch2

COMPILED_MODES = ["compile", "method", "fullgraph", "step", "export"]
# 2 epochs of 8 TRAIN and 8 EVAL batches.
EXPECTED_PHASES = [("TRAIN", n) for n in range(8)] + [("EVAL", n) for n in range(8)] + \
                  [("TRAIN", n) for n in range(8, 16)] + [("EVAL", n) for n in range(8, 16)]


def counters(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def eager(run_script):
    run = run_script("compile_modes.py", "eager")
    assert run.returncode == 0, run.describe()
    return run


def test_eager_reference_has_a_step_per_batch(eager):
    assert eager.phase_sequence() == EXPECTED_PHASES
    assert len(eager.spans("Forward")) == 32
    assert {s["args"]["module"] for s in eager.spans("Forward")} == {"Regressor"}
    assert len(eager.spans("Backward")) == len(eager.spans("OptimizerStep")) == 16


@requires_torch2
@pytest.mark.parametrize("mode", COMPILED_MODES)
def test_compiled_training_has_the_eager_steps_and_no_graph_break_of_stepscope(run_script, run_plain, mode):
    run = run_script("compile_modes.py", mode)
    assert run.returncode == 0, run.describe()
    profiled = counters(run.stdout)
    plain = counters(run_plain("compile_modes.py", mode))
    assert profiled == plain, f"dynamo saw something else under stepscope:\n{profiled}\nplain:\n{plain}"
    assert not any("stepscope" in reason for reason in profiled["graph_breaks"])
    if mode in ("compile", "method", "fullgraph"):
        assert profiled["graph_breaks"] == {}  # a compiled model alone has none
    assert (profiled["train_batches"], profiled["eval_batches"]) == (16, 16)
    assert run.phase_sequence() == EXPECTED_PHASES
    assert "Traceback" not in run.stderr, run.stderr
    # Backward and the optimizer step run outside the model's graph: recorded in every mode.
    assert len(run.spans("Backward")) == len(run.spans("OptimizerStep")) == 16


@requires_torch2
@pytest.mark.parametrize("mode", ["compile", "method", "fullgraph"])
def test_spans_of_a_compiled_model_name_the_users_model(run_script, mode):
    run = run_script("compile_modes.py", mode, job=f"names-{mode}")
    assert run.returncode == 0, run.describe()
    forwards = run.spans("Forward")
    assert len(forwards) == 32
    assert {f["args"]["module"] for f in forwards} == {"Regressor"}
    if mode != "method":  # model.compile() compiles in place: no wrapper object
        assert {f["args"].get("wrapper") for f in forwards} == {"OptimizedModule"}


@requires_torch2
def test_export_tracing_records_no_step_and_no_span(run_script):
    """torch.export traces the model once before the loops: that call is no step and no span."""
    run = run_script("compile_modes.py", "export", job="export-spans")
    assert run.returncode == 0, run.describe()
    first_step = run.steps()[0]["start_ns"]
    assert [s for s in run.spans("Forward") if s["start_ns"] < first_step] == []
    assert len(run.spans("Forward")) == 32
