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


def write_system(root, node, records, decimals=6):
    """records: (t_s, type, name, dimension, value), in time order; one file per node and started
    minute, named by that minute (as SageMaker's agent names them)."""
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
                                      "Timestamp": round(t_s, decimals)}) + "\n")


def write_pevents(root, node, events, base_us):
    """events: dicts with phase, name, start_us (absolute), dur_us, optional pid/tid/args."""
    if not events:
        return
    ordered = sorted(events, key=lambda e: (e["start_us"], -e["dur_us"]))
    last_end_us = max([base_us] + [e["start_us"] + e["dur_us"] for e in events])
    write_trace_file(root, node, ordered, base_us, last_end_us, hour_folder(base_us / 1e6))


def write_trace_file(root, node, events, base_us, name_us, hour):
    """One pythontimeline file named <name_us>_<node>: the time base, a process per phase, the
    events in the order given."""
    phases = []
    for event in events:
        if event["phase"] not in phases:
            phases.append(event["phase"])
    trace = [{"name": "process_name", "ph": "M", "pid": 0,
              "args": {"start_time_since_epoch_in_micros": base_us}}]
    for index, phase in enumerate(phases, start=1):
        trace.append({"name": "process_name", "ph": "M", "pid": index, "args": {"name": phase}})
        trace.append({"name": "process_sort_index", "ph": "M", "pid": index, "args": {"sort_index": index}})
    for event in events:
        record = {"name": event["name"], "ph": "X", "ts": event["start_us"] - base_us,
                  "dur": event["dur_us"], "pid": phases.index(event["phase"]) + 1,
                  "tid": event.get("tid", 1)}
        if event.get("args"):
            record["args"] = event["args"]
        trace.append(record)
    folder = os.path.join(root, "framework", "pevents", hour)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "%d_%s_pythontimeline.json" % (name_us, node))
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
        records += host_records(node, k, t, rng)
    return records


def host_records(node, k, t, rng):
    """A snapshot's host memory, network and disk records."""
    return [(t, "memory", "MemoryUsedPercent", "", node.memory(k, rng)),
            (t, "network", "ReceiveBytesPerSecond", "Algorithm", 1e6 + 1e5 * rng.random()),
            (t, "network", "TransmitBytesPerSecond", "Algorithm", 5e5 + 1e5 * rng.random()),
            (t, "i/o", "ReadThroughputInBytesPerSecond", "", 2e6 * rng.random())]


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
              seed=1, extra_records=None):
    """extra_records: {node: [(t_s, type, name, dimension, value)]} merged by time into the node's
    system records (stepscope's own series, such as the NVML depth metrics)."""
    rng = random.Random(seed)
    case = os.path.join(out_dir, name)
    shutil.rmtree(os.path.join(case, "input"), ignore_errors=True)
    os.makedirs(os.path.join(case, "input"))
    root = os.path.join(case, "input")
    for node in nodes:
        records = system_records(node, seconds, interval_s, rng, skip or (lambda t: False))
        if extra_records and node.name in extra_records:
            records = sorted(records + extra_records[node.name], key=lambda record: record[0])
        write_system(root, node.name, records)
    for node_name, node_events in (events or {}).items():
        write_pevents(root, node_name, node_events, T0 * 1_000_000)
    write_parameters(case, parameters)


def write_parameters(case, parameters):
    """<case>/parameters.json, or none when the case uses the defaults."""
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


@case
def gpu_health(out):
    # What the NVML source records beyond utilization (issue 15 §3), as stepscope's own series:
    # gpu0's power cap holds its clocks down while steps 60-139 run 40 % slower (GPUThrottling
    # ties the two), the GPUs idle with their clocks down (not throttling) before training; gpu1
    # also reports Xid 79 and Xid 13, one uncorrected and two corrected ECC errors (GPUErrors).
    # Everything happens before 120 s: the windows after the last full minute are not evaluated.
    rng = random.Random(22)
    events = training_events(T0 + 5, 250, 500_000, rng, gpus=2,
                             step_us_fn=lambda step: 700_000 if 60 <= step < 140 else 500_000)
    steps = [e for e in events if e["phase"] == "Step:ModeKeys.TRAIN"]
    capped_from = steps[60]["start_us"] / 1e6
    capped_to = (steps[139]["start_us"] + steps[139]["dur_us"]) / 1e6
    reasons = ["power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake", "sync_boost",
               "idle", "app_clocks"]
    extra = []
    for k in range(int(170 / 2.0) + 1):
        t = T0 + k * 2.0 + 0.001 * (k % 7) + 0.0012
        for g in range(2):
            active = set()
            if t < T0 + 5:
                active.add("idle")
            if g == 0 and capped_from <= t <= capped_to:
                active.add("power_cap")
            for reason in reasons:
                extra.append((t, "stepscope", "gpu/gpu%d/throttle_%s" % (g, reason), "",
                              1 if reason in active else 0))
            extra.append((t, "stepscope", "gpu/gpu%d/pcie_tx_bytes_per_s" % g, "", 2.5e9 + 1e8 * rng.random()))
            extra.append((t, "stepscope", "gpu/gpu%d/pcie_rx_bytes_per_s" % g, "", 4.0e9 + 1e8 * rng.random()))
            extra.append((t, "stepscope", "gpu/gpu%d/ecc_corrected_errors" % g, "",
                          (4 if t < T0 + 70 else 6) if g == 1 else 0))
            extra.append((t, "stepscope", "gpu/gpu%d/ecc_uncorrected_errors" % g, "",
                          1 if g == 1 and t >= T0 + 80 else 0))
        if k == 25:
            extra.append((t, "stepscope", "gpu/gpu1/xid", "", 79))
            extra.append((t, "stepscope", "gpu/gpu1/xid", "", 13))
    make_case(out, "gpu_health", [Node("algo-1", cores=4, gpus=2)], 170,
              events={"algo-1": events}, extra_records={"algo-1": extra})


# ---------------------------------------------------------------------------------------------
# SageMaker-layout trials (the `sm_*` cases): what SageMaker Debugger's profiler writes, file for
# file (shared/FORMATS.md §1), so the reference's own rule code can run on them
# (tests/golden/run_reference.py writes their reference/ outputs):
# - system/incremental/<YYYYMMDDHH>/<minute>.<node>.json: one file per node and minute, named by
#   the minute it covers (not by its first sample), records in time order; the cores of a
#   snapshot share one Timestamp, the GPU records come 1.2 ms later (another sampler thread);
# - framework/pevents/<YYYYMMDDHH>/<end_us>_<node>_pythontimeline.json: one file per writer and
#   minute, named by the end of its last event, events in the order they ended, ts relative to
#   the job's start (start_time_since_epoch_in_micros); a rank's writer names its node
#   `<rank>-algo-<n>`;
# - system/ and framework/training_job_end.ts: the job finished.
# Nothing straddles a minute edge and no sample lies on one, so the comparison with the
# reference shows the causes these cases are about, not the documented window-edge differences
# (RULES.md §0, §10).


def write_sm_pevents(root, writer_node, events, base_us):
    """events: dicts with phase, name, start_us (absolute), dur_us, optional tid/args; one file
    per minute of their end, in end order."""
    by_minute = {}
    for event in events:
        end_us = event["start_us"] + event["dur_us"]
        by_minute.setdefault(end_us // 60_000_000, []).append(event)
    for minute, chunk in sorted(by_minute.items()):
        chunk.sort(key=lambda e: (e["start_us"] + e["dur_us"], e["start_us"]))
        last_end_us = chunk[-1]["start_us"] + chunk[-1]["dur_us"]
        write_trace_file(root, writer_node, chunk, base_us, last_end_us, hour_folder(last_end_us / 1e6))


def sm_system_records(node, first_s, last_s, interval_s, rng, offset_fn=lambda k: 0.0):
    """Snapshots at first_s + k·interval_s (+ offset_fn(k)) up to last_s."""
    records = []
    k = 0
    while True:
        t = first_s + k * interval_s + offset_fn(k)
        if t > last_s:
            break
        for core in range(node.cores):
            records.append((t, "cpu", "cpu%d" % core, "CPUUtilization", node.cpu(k, core, rng)))
        for core in range(node.cores):
            records.append((t, "cpu", "cpu%d" % core, "I/OWaitPercentage", node.iowait(k, core, rng)))
        records += host_records(node, k, t, rng)
        for g in range(node.gpus):
            records.append((t + 0.0012, "gpu", "gpu%d" % g, "GPUUtilization", node.gpu(k, g, rng)))
            records.append((t + 0.0012, "gpu", "gpu%d" % g, "GPUMemoryUtilization", node.gpu_memory(k, g, rng)))
        k += 1
    return records


def sm_training(first_s, last_s, step_us, rng, gpus=0, mode="TRAIN", outlier_every=0, pid=4000,
                workers=(), first_step=0, edge_margin_s=1.0):
    """Steps of `mode` back to back from first_s, none within edge_margin_s of a minute edge
    or past last_s, each with a data fetch (DataLoaderIter on the main process and, per worker
    pid, a DataLoaderWorker event), a forward pass, CPU operators and GPU kernels."""
    events = []
    t_us = int(round(first_s * 1e6))
    step = first_step
    phase = "Step:ModeKeys." + mode
    while True:
        duration = step_us + int(rng.random() * step_us * 0.1)
        if outlier_every and step % outlier_every == outlier_every // 2:
            duration *= 6
        minute_end_us = (t_us // 60_000_000 + 1) * 60_000_000
        if t_us + duration > minute_end_us - edge_margin_s * 1e6:
            t_us = minute_end_us + int(edge_margin_s * 1e6)  # wait past the edge
            continue
        if t_us + duration > last_s * 1e6:
            break
        events.append({"phase": phase, "name": phase, "start_us": t_us, "dur_us": duration,
                       "args": {"pid": pid, "step_num": str(step)}})
        fetch = duration // 4
        events.append({"phase": "DataLoaderIter", "name": "DataLoaderIter.__next__", "start_us": t_us,
                       "dur_us": fetch, "args": {"pid": pid}})
        for index, worker in enumerate(workers):
            events.append({"phase": "DataLoaderWorker", "name": "DataLoaderWorker", "start_us": t_us + 5,
                           "dur_us": fetch - 10 - index, "tid": 10 + index,
                           "args": {"pid": worker, "worker_id": index}})
        forward = t_us + fetch
        events.append({"phase": "Forward", "name": "Net", "start_us": forward,
                       "dur_us": (duration - fetch) // 3, "args": {"pid": pid, "step_num": str(step)}})
        events.append({"phase": "cpu_functions", "name": "aten::conv2d", "start_us": forward + 10,
                       "dur_us": (duration - fetch) // 5, "args": {"step_num": step, "device": "cpu"}})
        events.append({"phase": "cpu_functions", "name": "aten::addmm",
                       "start_us": forward + 20 + (duration - fetch) // 5, "dur_us": (duration - fetch) // 10,
                       "args": {"step_num": step, "device": "cpu"}})
        for g in range(gpus):
            events.append({"phase": "gpu_functions-dev:%d" % g, "name": "volta_sgemm_128x64_nn",
                           "start_us": forward + 50, "dur_us": (duration - fetch) // 2, "tid": g,
                           "args": {"step_num": step, "device": g}})
        t_us += duration + 1_000
        step += 1
    return events


def sm_loader_init(t_s, pid, num_workers, pin_memory):
    return {"phase": "DataLoaderIterInitialize", "name": "DataLoaderIterInitialize",
            "start_us": int(round(t_s * 1e6)), "dur_us": 30_000,
            "args": {"pid": pid, "num_workers": num_workers, "pin_memory": pin_memory}}


def make_sm_case(out_dir, name, nodes, first_s, last_s, interval_s=1.0, writers=None, parameters=None,
                 decimals=6, offset_fn=lambda k: 0.0, seed=1):
    """nodes: Node list (system metrics from first_s to last_s); writers: {writer node id: events}."""
    rng = random.Random(seed)
    case = os.path.join(out_dir, name)
    shutil.rmtree(os.path.join(case, "input"), ignore_errors=True)
    root = os.path.join(case, "input")
    os.makedirs(root)
    for node in nodes:
        write_system(root, node.name, sm_system_records(node, first_s, last_s, interval_s, rng, offset_fn),
                     decimals)
    for writer, events in (writers or {}).items():
        write_sm_pevents(root, writer, events, T0 * 1_000_000)
    for folder in ("system", "framework"):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        with open(os.path.join(root, folder, "training_job_end.ts"), "w") as out:
            out.write("%d\n" % int(last_s + 5))
    write_parameters(case, parameters)


@case
def sm_window_grid(out):
    # Cause 1: the first sample 17.25 s into the first file's minute, the last file a partial
    # minute. The reference's windows start at that minute and stop before the last file's.
    rng = random.Random(31)
    node = Node("algo-1", cores=4, gpus=1)
    make_sm_case(out, "sm_window_grid", [node], T0 + 17.25, T0 + 297.5, interval_s=0.5,
                 writers={"algo-1": sm_training(T0 + 18, T0 + 297, 280_000, rng, gpus=1, outlier_every=40)},
                 parameters={"StepOutlier": {"n_outliers": 2}, "LowGPUUtilization": {"patience": 100},
                             "CPUBottleneck": {"patience": 100}},
                 seed=31)


@case
def sm_rank_nodes(out):
    # Cause 2: two ranks on algo-1 write their own timelines (`0-algo-1`, `1-algo-1`) with one
    # data-loader worker each: 4 processes on 8 cores, too few. CPU-bound with idle GPUs.
    rng = random.Random(32)
    node = Node("algo-1", cores=8, gpus=2, cpu=lambda k, c, rng: (91 + 8 * rng.random()) if c < 3 else 40,
                gpu=lambda k, g, rng: 2 + 6 * rng.random())
    writers = {}
    for rank in (0, 1):
        pid = 5000 + rank
        events = [sm_loader_init(T0 + 3 + rank * 0.1, pid, 1, True)]
        events += sm_training(T0 + 4 + rank * 0.05, T0 + 178, 450_000, rng, gpus=1, pid=pid,
                              workers=(6000 + rank,))
        for event in events:  # each rank drives its own GPU
            if event["phase"].startswith("gpu_functions"):
                event["phase"] = "gpu_functions-dev:%d" % rank
        writers["%d-algo-1" % rank] = events
    make_sm_case(out, "sm_rank_nodes", [node], T0 + 1.5, T0 + 179.5, interval_s=1.0, writers=writers,
                 parameters={"CPUBottleneck": {"patience": 20}}, seed=32)


@case
def sm_float_keys(out):
    # Cause 3: timestamps with 4 and with 7 decimals, as SageMaker's agent writes them; every
    # snapshot is a CPU bottleneck, so every anchor is a Details.bottlenecks key.
    rng = random.Random(33)
    node = Node("algo-1", cores=2, gpus=1, cpu=high, gpu=low)
    make_sm_case(out, "sm_float_keys", [node], T0 + 1.2345, T0 + 119.5, interval_s=0.5,
                 writers={"algo-1": sm_training(T0 + 2, T0 + 119, 400_000, rng, gpus=1)},
                 parameters={"CPUBottleneck": {"patience": 10}}, decimals=7,
                 offset_fn=lambda k: 0.0 if k % 2 == 0 else 0.0000321 * (k % 5), seed=33)


@case
def sm_value_types(out):
    # Cause 4: pin_memory a JSON bool, two balanced GPUs (workloads without a violation), string
    # step numbers, one TRAIN phase with outliers (the reference's step_details shape) and a
    # few EVAL steps.
    rng = random.Random(34)
    node = Node("algo-1", cores=4, gpus=2)
    events = [sm_loader_init(T0 + 2, 7000, 2, True)]
    events += sm_training(T0 + 3, T0 + 100, 300_000, rng, gpus=2, pid=7000, workers=(7100, 7101),
                          outlier_every=25)
    events += sm_training(T0 + 121, T0 + 140, 200_000, rng, gpus=2, pid=7000, mode="EVAL")
    make_sm_case(out, "sm_value_types", [node], T0 + 0.75, T0 + 179.75, interval_s=1.0,
                 writers={"algo-1": events}, parameters={"StepOutlier": {"n_outliers": 3}}, seed=34)


@case
def sm_step_mode(out):
    # Causes 5 and 6: StepOutlier with mode=Step:ModeKeys.TRAIN counts every step as a
    # datapoint (EVAL too, as the reference's condition does); custom parameters in every
    # RuleParameters string.
    rng = random.Random(35)
    node = Node("algo-1", cores=4, gpus=1)
    events = sm_training(T0 + 2, T0 + 100, 250_000, rng, gpus=1, outlier_every=30)
    # Fewer than 100 EVAL steps: TRAIN alone has statistics, so step_details keeps the
    # reference's shape (RULES.md §5); their step numbers repeat TRAIN's, as the reference's
    # lookup of outlier steps by number sees them.
    events += sm_training(T0 + 101.5, T0 + 112, 150_000, rng, gpus=1, mode="EVAL")
    events += sm_training(T0 + 121, T0 + 178, 250_000, rng, gpus=1, outlier_every=30, first_step=10_000)
    make_sm_case(out, "sm_step_mode", [node], T0 + 0.5, T0 + 179.5, interval_s=1.0, writers={"algo-1": events},
                 parameters={"StepOutlier": {"mode": "Step:ModeKeys.TRAIN", "stddev": 2.5, "n_outliers": 4},
                             "Dataloader": {"min_threshold": 60, "max_threshold": 250},
                             "LoadBalancing": {"threshold": 0.3},
                             "MaxInitializationTime": {"threshold": 15}},
                 seed=35)


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
