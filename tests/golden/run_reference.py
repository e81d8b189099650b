#!/usr/bin/env python3
"""Runs the reference implementation's ProfilerReport on golden cases and writes what it writes
to <case>/reference/: SageMaker Debugger's rule code (awslabs/sagemaker-debugger, branch 1.0.0,
the last commit that still holds smdebug/profiler/analysis/rules/) evaluating
<case>/input/ with <case>/parameters.json, exactly as its rule container does
(create_trial(..., profiler=True) + invoke_rule(ProfilerReport(trial))), one JSON file per
sub-rule, re-indented (json.load + json.dump keep every key and number as the reference wrote
it).

Not part of the build: it needs a checkout of that reference and its Python dependencies, e.g.

  python3 -m venv /tmp/smdbg && /tmp/smdbg/bin/pip install numpy scipy boto3 protobuf pyinstrument grpcio-tools
  (grpcio-tools compiles the reference's .proto files: python -m grpc_tools.protoc in its smdebug/core/tfevent/proto)
  git -C sagemaker-debugger archive 225e39b9^ | tar -x -C /tmp/smref   # branch 1.0.0
  PYTHONPATH=/tmp/smref /tmp/smdbg/bin/python tests/golden/run_reference.py sm_window_grid ...

The reference's driver takes no parameters for its sub-rules; this script builds the same
eleven rules in the same order with the case's parameters (and the driver's scan_interval_us),
which is what the reference's rule container does with custom rule parameters.

Usage: run_reference.py [--cases DIR] CASE ...
"""
import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import types

# The driver imports its HTML-report plotter (papermill, nbconvert, ...) at module level and
# only calls it when its notebook exists, which it does not here: a stand-in module spares the
# notebook stack.
_PLOTTER = "smdebug.profiler.analysis.rules.plot_visualizations.plot_visualizations"
sys.modules.setdefault(_PLOTTER, types.SimpleNamespace(PlotVisualizations=None))

RULE_ORDER = [
    ("CPUBottleneck", "cpu_bottleneck"),
    ("IOBottleneck", "io_bottleneck"),
    ("LowGPUUtilization", "low_gpu_utilization"),
    ("StepOutlier", "step_outlier"),
    ("GPUMemoryIncrease", "gpu_memory_increase"),
    ("BatchSize", "batch_size"),
    ("MaxInitializationTime", "max_initialization_time"),
    ("LoadBalancing", "load_balancing"),
    ("OverallSystemUsage", "overall_system_usage"),
    ("Dataloader", "dataloader"),
    ("OverallFrameworkMetrics", "overall_framework_metrics"),
]


def parameters_of(case_dir):
    """{rule: {param: value}} and the driver's scan interval, from parameters.json."""
    path = os.path.join(case_dir, "parameters.json")
    per_rule, scan_interval_us = {}, 60 * 1000 * 1000
    if not os.path.exists(path):
        return per_rule, scan_interval_us
    with open(path) as f:
        section = json.load(f)
    for key, value in section.items():
        if isinstance(value, dict):
            if key == "ProfilerReport":
                scan_interval_us = value.get("scan_interval_us", scan_interval_us)
            else:
                per_rule.setdefault(key, {}).update(value)
        elif key == "scan_interval_us":
            scan_interval_us = value
        else:  # "<Rule>_<param>"
            rule, param = key.split("_", 1)
            per_rule.setdefault(rule, {})[param] = value
    return per_rule, scan_interval_us


def run_case(case_dir):
    from smdebug.profiler.analysis.rules.profiler_report import ProfilerReport
    from smdebug.rules.rule_invoker import invoke_rule
    from smdebug.trials import create_trial

    per_rule, scan_interval_us = parameters_of(case_dir)
    work = tempfile.mkdtemp(prefix="smdebug-reference-")
    try:
        trial = create_trial(os.path.join(case_dir, "input"), profiler=True, output_dir=work)
        report = ProfilerReport(trial, scan_interval_us=scan_interval_us,
                                nb_path=os.path.join(work, "no-notebook.ipynb"))
        rules = []
        for rule_name, module_name in RULE_ORDER:
            module = importlib.import_module("smdebug.profiler.analysis.rules." + module_name)
            rules.append(getattr(module, rule_name)(trial, **per_rule.get(rule_name, {})))
        report.rules = rules
        invoke_rule(report)
        out_dir = os.path.join(case_dir, "reference")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        for rule_name, _ in RULE_ORDER:
            with open(os.path.join(work, "profiler-reports", rule_name + ".json")) as f:
                document = json.load(f)
            with open(os.path.join(out_dir, rule_name + ".json"), "w") as f:
                json.dump(document, f, indent=2, sort_keys=True)
                f.write("\n")
        print("wrote", out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules"))
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    for name in args.names:
        run_case(os.path.join(args.cases, name))


if __name__ == "__main__":
    main()
