"""What closing an operators detail window costs the training thread (docs/detail-windows.md;
issue 10: at most 1 ms, conversion and writing off that thread).

Runs a tiny-step training loop (an 8 -> 16 -> 2 MLP, batch 4, SGD, a DataLoader without
workers: ~0.5 ms steps, Python-bound, so any GIL the writer thread holds shows in the steps)
under `stepscope run --no-detail --detailed-steps START:K` for each window size K, --repeats
times, and reads each run back (stepscope._core.read_run and the window's document):

  stop       the DetailWindowStop span: torch's profiler stop on the training thread
  write      the DetailWindowWrite span on the writer thread (save, convert, compress, write)
  finish     the document's finish_ns (the writer thread's part before compressing and writing)
  events     the window's host events (events_total)
  median     the median TRAIN step outside the window and the AFTER steps after it
  after[i]   the i-th step after the window (step START+K+i)
  excess     sum over the AFTER steps of max(0, step - median): what the writer thread took from
             the training thread after the window, beside the stop itself
  control    the same sum over AFTER steps long after the window: what the machine's own noise
             (other processes, a shared VM) costs such a stretch; excess - control is the window's

Each figure is the median over the repetitions. The stop's cost per event is the least-squares
slope of stop against events over all runs (torch's _disable_profiler materialises every event
on the calling thread), its fixed part the intercept.

To compare stepscope Python packages (e.g. the previous commit's, where the writer thread
converted events in Python), give each as --variant LABEL=PYTHONPATH: the runs alternate between
them (the job inherits PYTHONPATH), and each gets its own table.

Usage (from the repository root, after `ninja -C build stepscope _core`):

    PYTHONPATH=build/python .venv/bin/python benchmarks/detail_window_close_benchmark.py --repeats 5

--cli picks the stepscope binary (default $STEPSCOPE_CLI or build/src/cli/stepscope), --python the
job's interpreter (default: this one), --sizes the window sizes in steps, --variant as above
(default: the PYTHONPATH this runs with), --json writes every run.
Exit status: 0, or 2 on a set-up error (a run that failed or recorded no window).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AFTER = 40  # steps after the window that are looked at

TRAIN_LOOP = r'''
import sys, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
steps = int(sys.argv[1])
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.randn(steps * 4, 8), torch.randint(0, 2, (steps * 4,)))
for x, y in DataLoader(data, batch_size=4):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss.item()
'''


def run_once(args, variant, size, workdir, repeat):
    from stepscope import _core
    from stepscope.torch import _detail_store

    label, pythonpath = variant
    out = os.path.join(workdir, f"{label}-k{size}-r{repeat}")
    steps = args.start + size + 3 * AFTER
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=pythonpath)
    command = [args.cli, "run", "--out", out, "--job", "bench", "--node", "n", "--no-detail",
               "--detailed-steps", f"{args.start}:{size}", "--", args.python, "-c", TRAIN_LOOP, str(steps)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    run_dir = os.path.join(out, "bench")
    docs = _detail_store.list_windows(os.path.join(run_dir, "n"))
    data = _core.read_run(run_dir)
    spans = {name: [e for e in data["events"] if e["kind"] == "span" and e["name"] == name]
             for name in ("DetailWindowStop", "DetailWindowWrite")}
    if len(docs) != 1 or any(len(found) != 1 for found in spans.values()):
        raise RuntimeError(f"{run_dir}: expected one window, found {len(docs)} documents and spans "
                           f"{ {k: len(v) for k, v in spans.items()} }")
    doc = docs[0]
    durations = {e["step"]: (e["end_ns"] - e["start_ns"]) / 1e6 for e in data["events"]
                 if e["kind"] == "step" and e["phase"] == "TRAIN" and not e["unfinished"] and e["pid"] == doc["pid"]}
    first_after = args.start + size
    after = [durations[first_after + i] for i in range(AFTER) if first_after + i in durations]
    control = [durations[n] for n in range(steps - AFTER - 1, steps - 1) if n in durations]
    outside = [d for n, d in durations.items() if 3 <= n < args.start or n >= first_after + AFTER]
    median = statistics.median(outside)
    return {
        "variant": label,
        "size": size,
        "events": doc["events_total"],
        "profiler": doc["profiler"],
        "stop_ms": (spans["DetailWindowStop"][0]["end_ns"] - spans["DetailWindowStop"][0]["start_ns"]) / 1e6,
        "write_ms": (spans["DetailWindowWrite"][0]["end_ns"] - spans["DetailWindowWrite"][0]["start_ns"]) / 1e6,
        "finish_ms": doc["finish_ns"] / 1e6,
        "median_step_ms": median,
        "after_ms": after,
        "excess_ms": sum(max(0.0, d - median) for d in after),
        "control_ms": sum(max(0.0, d - median) for d in control),
        "trace_file": doc.get("trace_file"),
    }


def least_squares(points):
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0, mean_y
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return slope, mean_y - slope * mean_x


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=os.environ.get("STEPSCOPE_CLI", os.path.join(REPO, "build", "src", "cli", "stepscope")))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--start", type=int, default=20, help="the window's first step")
    parser.add_argument("--sizes", default="1,4,16", help="window sizes in steps, comma-separated")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHONPATH",
                        help="a stepscope Python package to measure (repeatable)")
    parser.add_argument("--json", help="write every run here")
    args = parser.parse_args()
    if not os.path.exists(args.cli):
        print(f"no stepscope binary at {args.cli}; pass --cli", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    variants = [tuple(v.split("=", 1)) for v in args.variant] or [("current", os.environ.get("PYTHONPATH", ""))]
    if any(len(v) != 2 for v in variants):
        print("--variant takes LABEL=PYTHONPATH", file=sys.stderr)
        return 2
    runs = []
    with tempfile.TemporaryDirectory(prefix="stepscope-close-") as workdir:
        try:
            for repeat in range(args.repeats):
                # Interleaved: drift in the machine's load spreads over every variant and size.
                for size in sizes:
                    for variant in variants:
                        runs.append(run_once(args, variant, size, workdir, repeat))
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 2

    def med(values):
        return statistics.median(values)

    for label, _ in variants:
        print(f"[{label}] operators window at TRAIN step {args.start}, {args.repeats} repetitions, medians "
              f"(times in ms)")
        print(f"{'steps':>5} {'events':>7} {'stop':>7} {'write':>7} {'finish':>7} {'median':>7} {'after[0]':>9} "
              f"{'after[1]':>9} {'after[2]':>9} {'max after':>9} {'excess':>7} {'control':>7} {'after0/med':>10}")
        for size in sizes:
            mine = [r for r in runs if r["size"] == size and r["variant"] == label]
            median = med([r["median_step_ms"] for r in mine])
            after = [med([r["after_ms"][i] for r in mine]) for i in range(3)]
            print(f"{size:>5} {med([r['events'] for r in mine]):>7.0f} {med([r['stop_ms'] for r in mine]):>7.2f} "
                  f"{med([r['write_ms'] for r in mine]):>7.1f} {med([r['finish_ms'] for r in mine]):>7.1f} "
                  f"{median:>7.3f} {after[0]:>9.3f} {after[1]:>9.3f} {after[2]:>9.3f} "
                  f"{med([max(r['after_ms']) for r in mine]):>9.3f} {med([r['excess_ms'] for r in mine]):>7.2f} "
                  f"{med([r['control_ms'] for r in mine]):>7.2f} {after[0] / median:>10.2f}")
        mine = [r for r in runs if r["variant"] == label]
        slope, intercept = least_squares([(r["events"], r["stop_ms"]) for r in mine])
        print(f"stop = {intercept:.3f} ms + {slope * 1000:.2f} µs per event (least squares over {len(mine)} runs); "
              f"1 ms is reached at ~{max(0.0, (1.0 - intercept) / slope):.0f} events" if slope > 0 else
              f"stop = {intercept:.3f} ms, no growth with events measured")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"start": args.start, "repeats": args.repeats, "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
