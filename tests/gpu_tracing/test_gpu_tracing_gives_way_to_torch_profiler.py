"""The injected CUPTI tracer and torch's profiler in one real torch 2.x process.

`stepscope run` names libstepscope_cupti.so in CUDA_INJECTION64_PATH and the CUDA driver calls
its InitializeInjection at cuInit. This machine has no GPU, so the test plays the driver: the
job calls InitializeInjection itself (ctypes), with the tracer reading the fake libcupti
(STEPSCOPE_CUPTI_LIBRARY). Everything else is real: stepscope's instrumentation of torch, torch's
own profiler started by the script (and by stepscope's operators window), the stream the tracer
writes and the loader that reads it back. CUPTI has one set of activity callbacks per process,
so while a torch profiler runs the tracer must have handed CUPTI over (GpuTracing:yielded) and
must take it back when the profiler ends (GpuTracing:tracing).

Run by hand (from the repository root, after `ninja -C build`):

    STEPSCOPE_CUPTI_INJECTION=build/python/stepscope/libstepscope_cupti.so \\
    STEPSCOPE_FAKE_CUPTI=build/src/platform/cupti/libfake_cupti.so PYTHONPATH=build/python:tests \\
        .venv/bin/python -m pytest -q tests/gpu_tracing
"""
import os
import subprocess
import sys
import textwrap

import pytest

from stepscope.analysis import open_run

INJECTION = os.environ.get("STEPSCOPE_CUPTI_INJECTION", "")
FAKE_CUPTI = os.environ.get("STEPSCOPE_FAKE_CUPTI", "")

SCRIPT = textwrap.dedent("""
    import ctypes, os, sys
    import torch
    import stepscope.torch

    stepscope.torch.instrument(detail=[])
    if sys.argv[1] == "profiler_before_cuda":
        # torch's profiler starts before the first CUDA call: the driver initialises the tracer
        # while the profiler holds CUPTI, and tracing must start only when the profiler ends.
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
            torch.ones(8).sum()
    else:
        ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as outer:
            with torch.autograd.profiler.profile():  # nested: one hand-over, one take-back
                torch.ones(8).sum()
        torch.ones(8).sum()
    print("done")
""")


def tracer_states(node_dir):
    run = open_run(node_dir)
    events = run.framework.get_events(0, 2 ** 52)
    return [(e.name, e.args.get("reason")) for e in sorted(events, key=lambda e: e.start_us)
            if e.name.startswith("GpuTracing:")]


def run_job(tmp_path, mode, case):
    node_dir = tmp_path / "job" / "node"
    node_dir.mkdir(parents=True)
    env = dict(os.environ, STEPSCOPE_NODE_DIR=str(node_dir), CUDA_INJECTION64_PATH=INJECTION,
               STEPSCOPE_GPU_TRACER_MODE=mode, STEPSCOPE_CUPTI_LIBRARY=FAKE_CUPTI, STEPSCOPE_TORCH="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT, case], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout
    return node_dir, done.stderr


@pytest.mark.skipif(not INJECTION or not FAKE_CUPTI, reason="the GPU tracer is not built (no CUPTI 13 headers)")
def test_the_tracer_yields_while_torch_profiles_and_resumes_after(tmp_path):
    node_dir, stderr = run_job(tmp_path, "whole_job", "nested")
    assert "cannot give way" not in stderr
    assert tracer_states(node_dir) == [
        ("GpuTracing:tracing", "started in whole_job mode"),
        ("GpuTracing:yielded", "torch profiler started"),
        ("GpuTracing:tracing", "torch profiler ended"),
        ("GpuTracing:off", "stopped"),
    ]


@pytest.mark.skipif(not INJECTION or not FAKE_CUPTI, reason="the GPU tracer is not built (no CUPTI 13 headers)")
def test_a_profiler_started_before_cuda_keeps_cupti_until_it_ends(tmp_path):
    node_dir, _ = run_job(tmp_path, "whole_job", "profiler_before_cuda")
    states = tracer_states(node_dir)
    assert states[0] == ("GpuTracing:tracing", "started in whole_job mode")
    assert ("GpuTracing:yielded", "torch profiler started") not in states


@pytest.mark.skipif(not INJECTION or not FAKE_CUPTI, reason="the GPU tracer is not built (no CUPTI 13 headers)")
def test_with_tracing_off_the_package_leaves_the_injected_library_alone(tmp_path):
    node_dir, stderr = run_job(tmp_path, "off", "nested")
    # The job still called InitializeInjection itself (the driver would, for any library named):
    # the tracer ran, but stepscope's Python side made no hand-over.
    assert [s for s, _ in tracer_states(node_dir) if s == "GpuTracing:yielded"] == []
    assert "cannot give way" not in stderr


GPU_WINDOW_SCRIPT = textwrap.dedent("""
    import ctypes, os, sys
    import torch
    import stepscope.torch

    fake = ctypes.CDLL(os.environ["STEPSCOPE_CUPTI_LIBRARY"])  # the tracer's CUPTI: the same copy
    MEMSET = 3  # FAKE_CUPTI_MEMSET: recorded in the "everything" mode only
    stepscope.torch.instrument(detail=[])
    with stepscope.torch.profile("gpu") as skipped:  # before the driver loaded the tracer
        pass
    print("before cuInit:", skipped.path)
    ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
    print("whole job:", fake.fake_cupti_enabled(MEMSET))
    with stepscope.torch.profile("gpu") as window:
        print("in the window:", fake.fake_cupti_enabled(MEMSET))
    print("after:", fake.fake_cupti_enabled(MEMSET))
    print("written:", os.path.basename(window.path or "none"))
""")


@pytest.mark.skipif(not INJECTION or not FAKE_CUPTI, reason="the GPU tracer is not built (no CUPTI 13 headers)")
def test_a_gpu_window_records_everything_while_it_is_open(tmp_path):
    node_dir = tmp_path / "job" / "node"
    node_dir.mkdir(parents=True)
    env = dict(os.environ, STEPSCOPE_NODE_DIR=str(node_dir), CUDA_INJECTION64_PATH=INJECTION,
               STEPSCOPE_GPU_TRACER_MODE="whole_job", STEPSCOPE_CUPTI_LIBRARY=FAKE_CUPTI, STEPSCOPE_TORCH="1")
    done = subprocess.run([sys.executable, "-c", GPU_WINDOW_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "before cuInit: None"
    assert "the GPU tracer does not run in this process" in done.stderr
    assert lines[1:4] == ["whole job: 0", "in the window: 1", "after: 0"]
    assert lines[4].startswith("written: gpu-") and lines[4].endswith(".json.zst")
