"""Fixtures of the Holistic Trace Analysis cross-check (tests/hta/test_hta_cross_check.py).

HTA (`holistictraceanalysis`, pinned in requirements/dev.txt) reads a directory holding one
trace file per rank, the rank taken from each file's distributedInfo: every case copies its
Kineto fixtures into a directory of its own. stepscope reads the same files through
`stepscope import kineto` and `stepscope report --json` (the report model's gpu_idle and
gpu_activity sections, docs/report-model.md).

Run by hand (from the repository root, after `ninja -C build stepscope`):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python:tests \\
        .venv/bin/python -m pytest -q tests/hta
"""
import json
import os
import shutil

import pytest

from cli_fixtures import cli, stepscope  # noqa: F401 (pytest fixtures, tests/cli_fixtures.py)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINETO = os.path.join(REPO, "tests", "fixtures", "kineto")

# HTA's switch (hta/configs/env_options.py) for its rounding of nanosecond-resolution traces.
DISABLE_NS_ROUNDING = "HTA_DISABLE_NS_ROUNDING"
# The GPU traces of the Kineto fixtures with ProfilerSteps, by case: each case is one job.
STEP_CASES = {
    "nccl_rank0": ["nccl_parser_config_nccl_data.json.gz"],
    "sampled_two_ranks": ["timeline_analysis_sampled_rank-0.json.gz", "trace_filter_sampled_rank-1.json.gz"],
    "ns_resolution": ["ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"],
}
# A GPU trace without ProfilerSteps but with CUDA synchronization records, where HTA's
# definitions go wrong (test_hta_counts_synchronization_records_as_gpu_work).
SYNC_CASE = ["critical_path_alexnet_trace.json.gz"]


def copy_fixtures(names, directory):
    os.makedirs(directory, exist_ok=True)
    for name in names:
        shutil.copy(os.path.join(KINETO, name), directory)
    return str(directory)


@pytest.fixture(scope="session")
def stepscope_report(stepscope, tmp_path_factory):
    """The report model stepscope writes for `names` (imported as one job), cached per case."""
    cache = {}

    def report(names):
        key = tuple(names)
        if key not in cache:
            out = tmp_path_factory.mktemp("imported")
            result = stepscope("import", "kineto", *[os.path.join(KINETO, n) for n in names], "--out", out,
                               "--job", "hta")
            assert result.returncode == 0, result.stderr
            result = stepscope("report", out / "hta", "--json")
            assert result.returncode == 0, result.stderr
            cache[key] = json.loads(result.stdout)
        return cache[key]

    return report


@pytest.fixture(scope="session")
def hta_analysis(tmp_path_factory):
    """HTA's TraceAnalysis over a directory holding copies of `names`, cached per case. By default
    HTA reads nanosecond-resolution times exactly (HTA_DISABLE_NS_ROUNDING=1); `ns_rounding=True`
    keeps its default, which shrinks every such event to whole microseconds."""
    from hta.trace_analysis import TraceAnalysis

    cache = {}

    def analysis(names, ns_rounding=False):
        key = (tuple(names), ns_rounding)
        if key not in cache:
            directory = copy_fixtures(names, tmp_path_factory.mktemp("hta"))
            saved = os.environ.get(DISABLE_NS_ROUNDING)
            os.environ[DISABLE_NS_ROUNDING] = "0" if ns_rounding else "1"
            try:
                cache[key] = TraceAnalysis(trace_dir=directory)
            finally:
                if saved is None:
                    del os.environ[DISABLE_NS_ROUNDING]
                else:
                    os.environ[DISABLE_NS_ROUNDING] = saved
        return cache[key]

    return analysis
