"""Instructions per training step of the bundled example, plain and under `stepscope run`
(always-on tier), counted by callgrind: a figure that does not move with the machine's load.

Usage (from the repository root, after `ninja -C build stepscope _core`; takes 15-40 minutes on 2 cores)::

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/overhead_instructions_benchmark.py

What runs: a driver that imports examples/train_cnn.py as a module and calls its own
`train_epoch` with its SmallCnn, SyntheticImages (augmented) and SGD, batch --batch-size, for N
steps, under `valgrind --tool=callgrind --separate-threads=yes`:

  A  plain:      valgrind ... PY driver.py N
  B  always-on:  stepscope run --no-detail --out TMP -- valgrind ... PY driver.py N

each for N = --steps-low and N = --steps-high. Everything the process does once (interpreter
and torch start-up, stepscope's start-up and its last flush of fixed size, building the model,
the first steps' warm-up) is the same for both N, so

    instructions per step = (I(N high) - I(N low)) / (N high - N low)

The loader reads the samples in order (shuffle off; a sample depends on its index alone), so the
low run's steps are exactly the high run's first steps.

Threads are counted apart: the job's own (the Python thread and torch's OpenMP threads) and
stepscope's recorder flusher, which compresses the recorded events on another thread. The
flusher also wakes every 100 ms of wall time; under callgrind a step lasts about 50 times longer,
so its idle wake-ups are over-counted here by that factor, which makes its figure an upper bound.

Settings that keep the counts repeatable, the same for A and B: overhead_benchmark.CONTROLLED_ENV
(glibc malloc thresholds fixed, so both take the same allocator paths), OMP_WAIT_POLICY=PASSIVE (libgomp
threads would otherwise spin at barriers for a time-dependent number of instructions, and
valgrind runs one thread at a time), PYTHONHASHSEED=0, DataLoader workers off (--num-workers 0:
with workers the batches prefetched at the end depend on timing), and PYTHONDONTWRITEBYTECODE
removed. The example's own torch.set_num_threads(2) is kept.

Reports per-step instructions of A and B, B - A, and (B - A) / A: the always-on tier's cost in
instructions (bar: 1 %, SPEC §6).
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from overhead_benchmark import CONTROLLED_ENV

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "train_cnn.py")
BAR_PCT = 1.0

DRIVER = """
import importlib.util, sys
import torch
from torch.utils.data import DataLoader

spec = importlib.util.spec_from_file_location("train_cnn", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
steps, batch = int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
torch.set_num_threads(2)  # as the example's main()
# A sample depends on its index alone; read in order, the first batches are the same for any N.
samples = example.SyntheticImages(steps * batch, seed=1, augment=True)
loader = DataLoader(samples, batch_size=batch, shuffle=False, num_workers=0)
model = example.SmallCnn()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
step_seconds = []
example.train_epoch(model, loader, optimizer, step_seconds, [])
print(f"driver_steps={len(step_seconds)}")
"""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps-low", type=int, default=3)
    parser.add_argument("--steps-high", type=int, default=9)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"))
    parser.add_argument("--cli", default=os.environ.get("STEPSCOPE_CLI")
                        or os.path.join(REPO, "build", "src", "cli", "stepscope"))
    parser.add_argument("--keep", help="keep the callgrind files in this directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="callgrind runs at a time (default: the number of CPUs)")
    args = parser.parse_args()
    if not 1 <= args.steps_low < args.steps_high:
        parser.error("need 1 <= --steps-low < --steps-high")
    return args


def thread_counts(pattern):
    """{file: (instructions, is the recorder's flusher)} of one run's per-thread files."""
    counts = {}
    for path in sorted(glob.glob(pattern)):
        if not re.search(r"-\d+$", path):
            continue
        total, flusher = None, False
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("summary:"):
                    total = int(line.split()[1])
                elif "FlusherLoop" in line and line.startswith(("fn=", "cfn=")):
                    flusher = True
        if total is not None:
            counts[path] = (total, flusher)
    return counts


def run(args, variant, steps, workdir):
    """(job threads' instructions, flusher instructions, wall s) of one callgrind run."""
    out = os.path.join(workdir, f"{variant}{steps}")
    os.makedirs(out)
    driver = os.path.join(workdir, "driver.py")
    command = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={out}/cg.%p", args.python, driver, EXAMPLE, str(steps),
               str(args.batch_size)]
    if variant == "B":
        command = [args.cli, "run", "--out", os.path.join(workdir, "runs"), "--job",
                   f"{variant}{steps}", "--no-detail", "--", *command]
    # The wall-clock benchmark's settings (OpenMP passive, glibc malloc thresholds fixed): with
    # glibc's dynamic mmap threshold the allocator takes other code paths depending on what the
    # process freed before, which stepscope's buffers change.
    env = dict(os.environ, **CONTROLLED_ENV, PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, env=env,
                            stdin=subprocess.DEVNULL, timeout=7200)
    wall = time.monotonic() - started
    if result.returncode != 0 or f"driver_steps={steps}" not in result.stdout:
        raise RuntimeError(f"{variant} with {steps} steps failed ({result.returncode}):\n"
                           f"{result.stdout[-1000:]}\n{result.stderr[-3000:]}")
    if variant == "B":
        info = subprocess.run([args.cli, "info", os.path.join(workdir, "runs", f"B{steps}"),
                               "--json"], capture_output=True, text=True, timeout=300)
        recorded = json.loads(info.stdout)["counts"]["steps"]["TRAIN"] if info.returncode == 0 else None
        if recorded != steps:
            raise RuntimeError(f"B with {steps} steps recorded {recorded} TRAIN steps: is "
                               f"automatic instrumentation on?\n{info.stderr[-2000:]}")
    counts = thread_counts(os.path.join(out, "cg.*"))
    job = sum(n for n, flusher in counts.values() if not flusher)
    flusher = sum(n for n, flusher in counts.values() if flusher)
    return job, flusher, wall


def main():
    args = parse_args()
    for tool in ("valgrind",):
        if shutil.which(tool) is None:
            print(f"error: {tool} is not installed", file=sys.stderr)
            return 2
    if not os.path.exists(args.cli):
        print(f"error: no stepscope CLI at {args.cli} (build it, or pass --cli)", file=sys.stderr)
        return 2
    workdir = args.keep or tempfile.mkdtemp(prefix="stepscope-callgrind-")
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(workdir, "driver.py"), "w") as f:
        f.write(DRIVER)
    torch_version = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    print(f"callgrind, {args.python} (torch {torch_version}), examples/train_cnn.py's train_epoch, "
          f"batch {args.batch_size}, {args.steps_low} and {args.steps_high} steps", flush=True)
    counts = {}
    # The four runs side by side, --jobs at a time: callgrind runs a process on one core, and
    # what it counts does not depend on what else runs (only the flusher's idle wake-ups, per
    # wall second, do: see the module docstring).
    runs = [(variant, steps) for variant in ("A", "B") for steps in (args.steps_low, args.steps_high)]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run, args, variant, steps, workdir): (variant, steps) for variant, steps in runs}
            for future in concurrent.futures.as_completed(futures):
                variant, steps = futures[future]
                job, flusher, wall = future.result()
                counts[variant, steps] = (job, flusher)
                print(f"  {variant} {steps:3d} steps: job threads {job:,} instructions, flusher "
                      f"{flusher:,} ({wall:.0f} s under callgrind)", flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    span = args.steps_high - args.steps_low
    per_step = {}
    for variant in ("A", "B"):
        high, low = counts[variant, args.steps_high], counts[variant, args.steps_low]
        per_step[variant] = ((high[0] - low[0]) / span, (high[1] - low[1]) / span)
    a_job, _ = per_step["A"]
    b_job, b_flusher = per_step["B"]
    job_pct = 100.0 * (b_job - a_job) / a_job
    all_pct = 100.0 * (b_job + b_flusher - a_job) / a_job
    print(f"instructions per training step: A plain {a_job:,.0f}; B always-on {b_job:,.0f} in the "
          f"job's threads ({b_job - a_job:+,.0f} = {job_pct:+.3f} %) and {b_flusher:,.0f} in the "
          f"flusher (with it {all_pct:+.3f} %, an upper bound)")
    verdict = "PASS" if all_pct <= BAR_PCT else "FAIL"
    print(f"always-on tier, instructions per step: {all_pct:+.3f} % vs bar {BAR_PCT:.0f} %: {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
