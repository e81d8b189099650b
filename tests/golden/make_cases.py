#!/usr/bin/python3
"""Generates the inputs of the rules' golden cases (tests/golden/rules/<case>/input/).

Each input is a SageMaker Debugger profiler-output folder (shared/FORMATS.md §1): system metrics
as JSON lines, one file per node and minute, and framework events as pevents Chrome-trace arrays.
The data is synthetic and fully deterministic (a fixed seed per case, values rounded to two
decimals), so running this again rewrites identical files. expected/ is not written here: it
comes from rebaselining (tests/golden/README.md).

Usage: /usr/bin/python3 tests/golden/make_cases.py [--out tests/golden/rules] [CASE ...]
"""
import argparse
import json
import math
import os
import random
import shutil
import time

T0 = 1_700_000_040  # epoch seconds of every case's first sample (2023-11-14T22:14:00Z)

# ---------------------------------------------------------------------------------------------
# Writers


def hour_folder(t_s):
    return time.strftime("%Y%m%d%H", time.gmtime(int(t_s)))


def write_system(root, node, records):
    """records: (t_s, type, name, dimension, value); one file per node and started minute."""
    by_minute = {}
    for record in records:
        by_minute.setdefault(int(record[0]) // 60 * 60, []).append(record)
    for minute, rows in sorted(by_minute.items()):
        folder = os.path.join(root, "system", "incremental", hour_folder(minute))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "%010d.%s.json" % (minute, node)), "w") as out:
            for t_s, type_, name, dimension, value in rows:
                out.write(json.dumps({"Type": type_, "Name": name, "Dimension": dimension,
                                      "Value": round(value, 2), "NodeId": node,
                                      "Timestamp": round(t_s, 6)}) + "\n")


def write_pevents(root, node, events, base_us):
    """events: dicts with phase, name, start_us (absolute), dur_us, optional pid/tid/args."""
    if not events:
        return
    phases = []
    for event in events:
        if event["phase"] not in phases:
            phases.append(event["phase"])
    trace = [{"name": "process_name", "ph": "M", "pid": 0,
              "args": {"start_time_since_epoch_in_micros": base_us}}]
    for index, phase in enumerate(phases, start=1):
        trace.append({"name": "process_name", "ph": "M", "pid": index, "args": {"name": phase}})
        trace.append({"name": "process_sort_index", "ph": "M", "pid": index, "args": {"sort_index": index}})
    last_end_us = base_us
    for event in sorted(events, key=lambda e: (e["start_us"], -e["dur_us"])):
        record = {"name": event["name"], "ph": "X", "ts": event["start_us"] - base_us,
                  "dur": event["dur_us"], "pid": phases.index(event["phase"]) + 1,
                  "tid": event.get("tid", 1)}
        if event.get("args"):
            record["args"] = event["args"]
        trace.append(record)
        last_end_us = max(last_end_us, event["start_us"] + event["dur_us"])
    folder = os.path.join(root, "framework", "pevents", hour_folder(base_us / 1e6))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "%d_%s_pythontimeline.json" % (last_end_us, node))
    with open(path, "w") as out:
        out.write("[\n" + ",\n".join(json.dumps(record) for record in trace) + "\n]\n")


# ---------------------------------------------------------------------------------------------
# Generators


class Node:
    """One node's metrics: callables of (snapshot index, t_s, rng) -> value, or None."""

    def __init__(self, name, cores=4, gpus=0, cpu=None, iowait=None, gpu=None, gpu_memory=None,
                 memory=None):
        self.name = name
        self.cores = cores
        self.gpus = gpus
        self.cpu = cpu or (lambda k, core, rng: 30 + 10 * rng.random())
        self.iowait = iowait or (lambda k, core, rng: 1 + rng.random())
        self.gpu = gpu or (lambda k, g, rng: 70 + 20 * rng.random())
        self.gpu_memory = gpu_memory or (lambda k, g, rng: 40 + 2 * rng.random())
        self.memory = memory or (lambda k, rng: 25 + rng.random())


def system_records(node, seconds, interval_s, rng, skip=lambda t: False):
    records = []
    for k in range(int(seconds / interval_s) + 1):
        # Snapshots a few ms after the interval tick, as a real sampler's would be.
        t = T0 + k * interval_s + 0.001 * (k % 7)
        if skip(t - T0):
            continue
        for core in range(node.cores):
            records.append((t, "cpu", "cpu%d" % core, "CPUUtilization", node.cpu(k, core, rng)))
            records.append((t, "cpu", "cpu%d" % core, "I/OWaitPercentage", node.iowait(k, core, rng)))
        for g in range(node.gpus):
            records.append((t, "gpu", "gpu%d" % g, "GPUUtilization", node.gpu(k, g, rng)))
            records.append((t, "gpu", "gpu%d" % g, "GPUMemoryUtilization", node.gpu_memory(k, g, rng)))
        records.append((t, "memory", "MemoryUsedPercent", "", node.memory(k, rng)))
        records.append((t, "network", "ReceiveBytesPerSecond", "Algorithm", 1e6 + 1e5 * rng.random()))
        records.append((t, "network", "TransmitBytesPerSecond", "Algorithm", 5e5 + 1e5 * rng.random()))
        records.append((t, "i/o", "ReadThroughputInBytesPerSecond", "", 2e6 * rng.random()))
    return records


def training_events(start_s, steps, step_us, rng, gpus=0, outliers=(), dataloader=False,
                    step_us_fn=None, gap_us=2_000):
    """TRAIN steps back to back from start_s, each with a data fetch, CPU and GPU operators."""
    events = []
    t_us = int(start_s * 1e6)
    if dataloader:
        events.append({"phase": "DataLoaderIterInitialize", "name": "DataLoaderIterInitialize",
                       "start_us": t_us - 50_000, "dur_us": 40_000,
                       "args": {"num_workers": 1, "pin_memory": "False"}})
    for step in range(steps):
        duration = step_us_fn(step) if step_us_fn else step_us
        if step in outliers:
            duration *= 8
        duration += int(rng.random() * step_us * 0.05)
        events.append({"phase": "Step:ModeKeys.TRAIN", "name": "Step:ModeKeys.TRAIN", "start_us": t_us,
                       "dur_us": duration, "args": {"step_num": str(step)}})
        fetch = duration // (3 if dataloader else 10)
        events.append({"phase": "DataLoaderIter", "name": "DataLoaderIter.__next__", "start_us": t_us,
                       "dur_us": fetch})
        if dataloader:
            events.append({"phase": "DataLoaderWorker", "name": "DataLoaderWorker", "start_us": t_us,
                           "dur_us": fetch - 100, "tid": 7, "args": {"pid": 4321, "worker_id": 0}})
        forward = t_us + fetch
        events.append({"phase": "Forward", "name": "Forward", "start_us": forward,
                       "dur_us": (duration - fetch) // 3})
        events.append({"phase": "cpu_functions", "name": "aten::conv2d", "start_us": forward + 10,
                       "dur_us": (duration - fetch) // 5})
        events.append({"phase": "cpu_functions", "name": "aten::addmm",
                       "start_us": forward + 20 + (duration - fetch) // 5, "dur_us": (duration - fetch) // 10})
        for g in range(gpus):
            events.append({"phase": "gpu_functions-dev:%d" % g, "name": "volta_sgemm_128x64_nn",
                           "start_us": forward + 50, "dur_us": (duration - fetch) // 2, "tid": 7 + g})
        t_us += duration + gap_us
    return events


def make_case(out_dir, name, nodes, seconds, interval_s=2.0, events=None, parameters=None, skip=None,
              seed=1):
    rng = random.Random(seed)
    case = os.path.join(out_dir, name)
    shutil.rmtree(os.path.join(case, "input"), ignore_errors=True)
    os.makedirs(os.path.join(case, "input"))
    root = os.path.join(case, "input")
    for node in nodes:
        write_system(root, node.name, system_records(node, seconds, interval_s, rng, skip or (lambda t: False)))
    for node_name, node_events in (events or {}).items():
        write_pevents(root, node_name, node_events, T0 * 1_000_000)
    params_path = os.path.join(case, "parameters.json")
    if parameters:
        with open(params_path, "w") as out:
            out.write(json.dumps(parameters, indent=2, sort_keys=True) + "\n")
    elif os.path.exists(params_path):
        os.remove(params_path)


def low(k, i, rng):
    return 2 + 5 * rng.random()


def high(k, i, rng):
    return 92 + 7 * rng.random()


CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


@case
def no_gpu(out):
    rng = random.Random(11)
    make_case(out, "no_gpu", [Node("algo-1", cores=4)], 150,
              events={"algo-1": training_events(T0 + 5, 250, 500_000, rng)})


@case
def one_gpu(out):
    rng = random.Random(12)
    make_case(out, "one_gpu", [Node("algo-1", cores=4, gpus=1)], 150,
              events={"algo-1": training_events(T0 + 5, 250, 500_000, rng, gpus=1)})


@case
def four_gpus(out):
    # Unbalanced GPUs (gpu3 idles) and GPU memory that keeps growing on gpu0.
    rng = random.Random(13)
    node = Node("algo-1", cores=8, gpus=4,
                gpu=lambda k, g, rng: (5 + rng.random()) if g == 3 else 75 + 15 * rng.random(),
                gpu_memory=lambda k, g, rng: min(99, 20 + 0.6 * k) if g == 0 else 30 + rng.random())
    # The defaults wait 1000 datapoints; a three-minute case needs a shorter patience to fire.
    make_case(out, "four_gpus", [node], 180,
              events={"algo-1": training_events(T0 + 5, 300, 500_000, rng, gpus=4)},
              parameters={"LoadBalancing": {"patience": 10}, "GPUMemoryIncrease": {"patience": 10},
                          "LowGPUUtilization": {"patience": 10, "window": 20}})


@case
def two_nodes(out):
    rng = random.Random(14)
    nodes = [Node("algo-1", cores=4, gpus=2),
             Node("algo-2", cores=4, gpus=2, gpu=lambda k, g, rng: 20 + 10 * rng.random())]
    make_case(out, "two_nodes", nodes, 150,
              events={"algo-1": training_events(T0 + 5, 200, 600_000, rng, gpus=2),
                      "algo-2": training_events(T0 + 5, 200, 600_000, rng, gpus=2)})


@case
def window_boundaries(out):
    # 10 s windows; samples every 2 s land exactly on window edges (counted in both windows),
    # steps of 2.5 s start on and straddle the edges, and low GPU utilization comes and goes in
    # runs just around the default patience.
    rng = random.Random(15)
    node = Node("algo-1", cores=2, gpus=1,
                gpu=lambda k, g, rng: 3.0 if (k // 5) % 3 == 1 else 60 + 10 * rng.random())
    make_case(out, "window_boundaries", [node], 60, interval_s=2.0,
              events={"algo-1": training_events(T0, 23, 2_500_000, rng, gpus=1, gap_us=0)},
              parameters={"ProfilerReport": {"scan_interval_us": 10_000_000},
                          "LowGPUUtilization": {"patience": 5, "window": 5}})


@case
def empty_windows(out):
    # Data, then three minutes with none, then data again: the windows in between are empty.
    rng = random.Random(16)
    make_case(out, "empty_windows", [Node("algo-1", cores=2, gpus=1)], 330,
              skip=lambda t: 70 <= t < 250,
              events={"algo-1": training_events(T0 + 5, 100, 500_000, rng, gpus=1) +
                      training_events(T0 + 260, 100, 500_000, rng, gpus=1)})


@case
def custom_parameters(out):
    rng = random.Random(17)
    node = Node("algo-1", cores=4, gpus=1, cpu=lambda k, c, rng: 60 + 20 * rng.random(),
                gpu=lambda k, g, rng: 20 + 20 * rng.random())
    make_case(out, "custom_parameters", [node], 150,
              events={"algo-1": training_events(T0 + 5, 200, 600_000, rng, gpus=1, outliers=(50, 51))},
              parameters={"CPUBottleneck": {"threshold": 10, "cpu_threshold": 55, "gpu_threshold": 45},
                          "LowGPUUtilization_threshold_p95": 50,
                          "StepOutlier": {"stddev": 2},
                          "ProfilerReport": {"scan_interval_us": 30_000_000}})


@case
def cpu_bottleneck(out):
    rng = random.Random(18)
    node = Node("algo-1", cores=4, gpus=1, cpu=high, gpu=low)
    make_case(out, "cpu_bottleneck", [node], 150,
              events={"algo-1": training_events(T0 + 5, 200, 700_000, rng, gpus=1)},
              parameters={"CPUBottleneck": {"patience": 10}})


@case
def low_gpu_utilization(out):
    rng = random.Random(19)
    node = Node("algo-1", cores=8, gpus=2, gpu=lambda k, g, rng: 3 + 4 * rng.random(),
                gpu_memory=lambda k, g, rng: 10 + rng.random())
    make_case(out, "low_gpu_utilization", [node], 180,
              events={"algo-1": training_events(T0 + 5, 300, 500_000, rng, gpus=2)},
              parameters={"LowGPUUtilization": {"patience": 10, "window": 20},
                          "BatchSize": {"patience": 10, "window": 20}})


@case
def step_outliers(out):
    rng = random.Random(20)
    make_case(out, "step_outliers", [Node("algo-1", cores=4, gpus=1)], 150,
              events={"algo-1": training_events(T0 + 5, 220, 400_000, rng, gpus=1,
                                                outliers=(30, 31, 90, 150, 151, 152))},
              parameters={"StepOutlier": {"n_outliers": 2}})


@case
def dataloader(out):
    # One worker on 8 cores, data fetch a third of each step, I/O wait up.
    rng = random.Random(21)
    node = Node("algo-1", cores=8, gpus=1, iowait=lambda k, c, rng: 20 + 10 * rng.random(),
                gpu=lambda k, g, rng: 30 + 10 * math.sin(k / 5.0) + rng.random())
    make_case(out, "dataloader", [node], 150,
              events={"algo-1": training_events(T0 + 5, 200, 600_000, rng, gpus=1, dataloader=True)},
              parameters={"IOBottleneck": {"patience": 10, "io_threshold": 15}})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules"))
    parser.add_argument("cases", nargs="*", help="cases to write (default: all): " + ", ".join(CASES))
    args = parser.parse_args()
    for name in args.cases or CASES:
        if name not in CASES:
            parser.error("unknown case %r; cases: %s" % (name, ", ".join(CASES)))
        CASES[name](args.out)
        print("wrote", os.path.join(args.out, name, "input"))


if __name__ == "__main__":
    main()
