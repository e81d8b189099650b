"""Readers of a run for notebooks and custom rules, in the spirit of SageMaker Debugger's
profiler readers (``smdebug.profiler``), over stepscope's analysis model.

    from stepscope.analysis import open_run
    run = open_run("stepscope-runs/train-20261121T101500Z")   # or an imported run
    run.system.get_events(start_us, end_us, event_type="gpu")  # SystemMetricEvent list
    run.framework.get_events(start_us, end_us)                 # FrameworkEvent list
    run.framework.events_by_step(12, phase="TRAIN")
    run.system.latest_timestamp_us()
    step_duration_histogram(run), metrics_histogram(run, "CPUUtilization"), utilization_heatmap(run)

Times are microseconds since the Unix epoch in the reader calls (SageMaker's unit); events carry
both ``*_us`` fields and the model's nanoseconds. ``run.refresh()`` reloads a live run.
"""

from stepscope.analysis._readers import (FrameworkEvent, FrameworkReader, Run, SystemMetricEvent,
                                         SystemMetricsReader, open_run)
from stepscope.analysis._rules import Rule, load_rules_file, run_rules
from stepscope.analysis._plots_data import metrics_histogram, step_duration_histogram, utilization_heatmap

__all__ = ["open_run", "Run", "SystemMetricsReader", "FrameworkReader", "SystemMetricEvent", "FrameworkEvent",
           "Rule", "load_rules_file", "run_rules", "metrics_histogram", "step_duration_histogram", "utilization_heatmap"]
