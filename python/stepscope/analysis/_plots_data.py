"""The data behind the report's standard charts, for notebooks (plot them with anything)."""

import numpy


def metrics_histogram(run, dimension="CPUUtilization", bins=50, node=None):
    """{series name: (counts, edges)} of every series with `dimension` (e.g. 'GPUUtilization')."""
    result = {}
    for series in run.system.series(dimension=dimension, node=node):
        _, values = run.system.values(series)
        if len(values):
            result[f"{series['node']}/{series['name']}"] = numpy.histogram(values, bins=bins)
    return result


def step_duration_histogram(run, phase="TRAIN", bins=100):
    """{node: (counts, edges)} of step durations in seconds."""
    by_node = {}
    for step in run.framework.steps(phase):
        by_node.setdefault(step.node_id, []).append(step.duration_us / 1e6)
    return {node: numpy.histogram(durations, bins=bins) for node, durations in by_node.items()}


def utilization_heatmap(run, resolution_s=1.0, node=None):
    """(row labels, bucket start times in µs, matrix rows × buckets of mean utilization %) of every
    CPU core and GPU: the report's CPU/GPU utilization heatmap."""
    rows = run.system.series(dimension="CPUUtilization", node=node) + \
        run.system.series(dimension="GPUUtilization", node=node)
    if not rows:
        return [], numpy.zeros(0), numpy.zeros((0, 0))
    start = run.system.first_timestamp_us()
    end = run.system.latest_timestamp_us()
    width = resolution_s * 1e6
    buckets = max(1, int((end - start) // width) + 1)
    matrix = numpy.full((len(rows), buckets), numpy.nan)
    for i, series in enumerate(rows):
        times, values = run.system.values(series)
        if not len(times):
            continue
        index = numpy.clip(((times - start) // width).astype(int), 0, buckets - 1)
        sums = numpy.bincount(index, weights=values, minlength=buckets)
        counts = numpy.bincount(index, minlength=buckets)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            matrix[i] = numpy.where(counts > 0, sums / numpy.maximum(counts, 1), numpy.nan)
    labels = [f"{s['node']}/{s['name']}" for s in rows]
    return labels, start + numpy.arange(buckets) * width, matrix
