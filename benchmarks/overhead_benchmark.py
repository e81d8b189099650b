"""Step-time overhead of `stepscope run` on the bundled example (spec §6: always-on tier ≤ 1 %).

Runs examples/train_cnn.py (plain PyTorch, no stepscope calls) A/B, alternating, N times:

  A  plain:      /usr/bin/python3 examples/train_cnn.py ...
  B  always-on:  stepscope run --interval 100ms [--no-detail] -- /usr/bin/python3 \
                     examples/train_cnn.py ...
                 (steps, forward/backward/optimizer spans, data loader, 100 ms system sampling)
  C  detail:     stepscope run --interval 100ms -- ... with the default detail windows
                 (operators at step 5, data loader at step 7, Python at steps 9-11); only when
                 this stepscope has detail windows (`stepscope run` accepts --detailed-steps);
                 a C run that fails is reported and C dropped, A/B go on

Time is measured inside the training script (its last line, `train_loop_seconds=...
median_train_step_ms=... mean_train_step_ms=...`), so process start-up, torch import and the
launcher's teardown do not count. For each variant the benchmark takes the median over the
repetitions of each run's median step time (the bar's metric), mean step time and training-loop
time, and reports overhead = variant / A - 1, with the paired per-repetition overheads and A's
own spread as the noise to read it against. The order of the variants rotates every repetition
so that drift in the machine's load does not favour one of them. Each B/C run is checked to
have recorded every training step, so a run that silently recorded nothing cannot pass.

Usage (from the repository root, after `ninja -C build stepscope _core`):

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/overhead_benchmark.py --repeats 5

Options size the example (--epochs, --steps-per-epoch, --batch-size, --num-workers), pick the
CLI (--cli, default $STEPSCOPE_CLI or build/src/cli/stepscope) and --json writes the results.
Exit status: 0 when the always-on overhead is within the bar, 1 when not, 2 on a set-up error.
On a shared two-core machine run it when it is quiet: other load on the cores moves single runs
by several per cent, more than the bar.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "train_cnn.py")
BAR_PCT = 1.0
RESULT_LINE = re.compile(r"^train_loop_seconds=(?P<loop>\S+) train_steps=(?P<steps>\d+) "
                         r"median_train_step_ms=(?P<median>\S+) mean_train_step_ms=(?P<mean>\S+)$")
METRICS = ("median_step_ms", "mean_step_ms", "loop_s")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of each variant")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--interval", default="100ms", help="system sampling interval of B and C")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--cli", default=os.environ.get("STEPSCOPE_CLI")
                        or os.path.join(REPO, "build", "src", "cli", "stepscope"))
    parser.add_argument("--no-warmup", action="store_true", help="skip the uncounted first run")
    parser.add_argument("--skip-detail", action="store_true", help="do not measure variant C")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def cli_flags(cli):
    """The options `stepscope run --help` lists (this stepscope's capabilities)."""
    result = subprocess.run([cli, "run", "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"--[a-z][a-z-]*", result.stdout))


def run_once(variant, command, out_dir, expected_steps, cli):
    """Runs one variant and returns its metrics, read from the example's last line."""
    started = time.perf_counter()
    # The same environment for every variant (PYTHONPATH names the stepscope package that
    # `stepscope run` instruments the job with), so that only stepscope differs.
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                            stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"variant {variant} exited with {result.returncode}: "
                           f"{' '.join(command)}\n{result.stderr[-3000:]}")
    match = None
    for line in result.stdout.splitlines():
        match = RESULT_LINE.match(line.strip()) or match
    if match is None:
        raise RuntimeError(f"variant {variant}: no train_loop_seconds line in the output:\n"
                           f"{result.stdout[-2000:]}")
    metrics = {"median_step_ms": float(match["median"]), "mean_step_ms": float(match["mean"]),
               "loop_s": float(match["loop"]), "wall_s": wall}
    if variant != "A":
        metrics.update(recorded(cli, out_dir, expected_steps, variant))
    return metrics


def recorded(cli, run_dir, expected_steps, variant):
    """What the stepscope run recorded; fails unless every training step is there."""
    result = subprocess.run([cli, "info", run_dir, "--json"], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"variant {variant}: stepscope info failed: {result.stderr}")
    info = json.loads(result.stdout)
    train_steps = info["counts"]["steps"]["TRAIN"]
    if train_steps != expected_steps:
        raise RuntimeError(f"variant {variant} recorded {train_steps} TRAIN steps, expected "
                           f"{expected_steps}: is automatic instrumentation on?\n"
                           f"{json.dumps(info['counts'])}")
    events = sum(p["events"] for p in info["processes"] if p["kind"] == "process")
    return {"recorded_train_steps": train_steps, "events": events,
            "dropped_events": info["dropped_events"],
            "bytes": info["bytes_on_disk"]["total"]}


def pct(value, base):
    return 100.0 * (value / base - 1.0)


def summarize(results, variant):
    """Medians over repetitions, and the paired overheads against A per repetition."""
    runs = results[variant]
    summary = {metric: statistics.median(r[metric] for r in runs) for metric in METRICS}
    if variant != "A":
        base = results["A"]
        summary["overhead_pct"] = {m: pct(summary[m], statistics.median(r[m] for r in base))
                                   for m in METRICS}
        summary["paired_overhead_pct"] = {
            m: [round(pct(r[m], a[m]), 2) for r, a in zip(runs, base)] for m in METRICS}
    return summary


def spread_pct(values):
    """(max - min) / median, in per cent: how far identical runs wander on this machine."""
    return 100.0 * (max(values) - min(values)) / statistics.median(values)


def main():
    args = parse_args()
    if not os.path.exists(args.cli):
        print(f"error: no stepscope CLI at {args.cli} (build it, or pass --cli)", file=sys.stderr)
        return 2
    flags = cli_flags(args.cli)
    example = [args.python, EXAMPLE, "--epochs", str(args.epochs),
               "--steps-per-epoch", str(args.steps_per_epoch), "--batch-size",
               str(args.batch_size), "--num-workers", str(args.num_workers)]
    expected_steps = args.epochs * args.steps_per_epoch
    root = tempfile.mkdtemp(prefix="stepscope-overhead-")
    # Detail windows are on by default where they exist: the always-on tier is measured
    # without them, and with them as variant C.
    always_on = ["--interval", args.interval] + (["--no-detail"] if "--no-detail" in flags else [])
    variants = {"A": None, "B": always_on}
    notes = []
    if args.skip_detail:
        notes.append("C (detail windows) skipped: --skip-detail")
    elif "--detailed-steps" not in flags:
        notes.append("C (detail windows) skipped: this stepscope run has no --detailed-steps")
    else:
        # The defaults (operators 5:1, data loader 7:1, Python 9:3), named explicitly so that a
        # config file cannot change them.
        variants["C"] = ["--interval", args.interval, "--detailed-steps", "5:1",
                         "--dataloader-steps", "7:1", "--python-steps", "9:3"]

    def command(variant, index):
        """The variant's command line and its run directory (None for the plain run)."""
        if variants[variant] is None:
            return example, None
        job = f"{variant}{index}"
        return ([args.cli, "run", "--out", root, "--job", job, "--node", "n",
                 *variants[variant], "--", *example], os.path.join(root, job))

    print(f"overhead benchmark: {' '.join(example[1:])}; {args.repeats} repetitions of "
          f"{', '.join(variants)}; stepscope flags B: {' '.join(always_on)}", flush=True)
    for note in notes:
        print(f"  {note}")
    results = {variant: [] for variant in variants}
    try:
        if not args.no_warmup:  # fills the page cache and warms torch's import
            run_once("A", example, None, expected_steps, args.cli)
        for index in range(args.repeats):
            # Rotate the order each repetition: A B C, B C A, C A B, ...
            names = list(variants)
            order = names[index % len(names):] + names[:index % len(names)]
            for variant in order:
                if variant not in variants:  # C dropped earlier in this repetition
                    continue
                cmd, out = command(variant, index)
                try:
                    metrics = run_once(variant, cmd, out, expected_steps, args.cli)
                except RuntimeError as error:
                    if variant != "C":
                        raise
                    # Detail windows are optional here: say why C stopped and carry on.
                    notes.append(f"C (detail windows) dropped after a failed run: {error}")
                    print(f"  {notes[-1]}", flush=True)
                    del variants["C"], results["C"]
                    continue
                finally:
                    if out:
                        shutil.rmtree(out, ignore_errors=True)
                results[variant].append(metrics)
                extra = (f", {metrics['events']} events, {metrics['dropped_events']} dropped"
                         if variant != "A" else "")
                print(f"  rep {index + 1} {variant}: median step "
                      f"{metrics['median_step_ms']:.3f} ms, mean step "
                      f"{metrics['mean_step_ms']:.3f} ms, loop {metrics['loop_s']:.3f} s{extra}",
                      flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(root, ignore_errors=True)

    summaries = {variant: summarize(results, variant) for variant in variants}
    a = summaries["A"]
    print(f"\nA plain: median step {a['median_step_ms']:.3f} ms, mean step "
          f"{a['mean_step_ms']:.3f} ms, loop {a['loop_s']:.3f} s (medians of {args.repeats})")
    print(f"  noise: A's own spread over repetitions (max-min)/median: median step "
          f"{spread_pct([r['median_step_ms'] for r in results['A']]):.1f} %, mean step "
          f"{spread_pct([r['mean_step_ms'] for r in results['A']]):.1f} %, loop "
          f"{spread_pct([r['loop_s'] for r in results['A']]):.1f} %")
    labels = {"B": "B always-on", "C": "C with detail windows"}
    for variant in variants:
        if variant == "A":
            continue
        s = summaries[variant]
        print(f"{labels[variant]}: median step {s['median_step_ms']:.3f} ms "
              f"({s['overhead_pct']['median_step_ms']:+.2f} %), mean step "
              f"{s['mean_step_ms']:.3f} ms ({s['overhead_pct']['mean_step_ms']:+.2f} %), loop "
              f"{s['loop_s']:.3f} s ({s['overhead_pct']['loop_s']:+.2f} %)")
        paired = s["paired_overhead_pct"]["median_step_ms"]
        print(f"  paired per repetition, median step: {paired} % "
              f"(median {statistics.median(paired):+.2f} %)")
    overhead = summaries["B"]["overhead_pct"]["median_step_ms"]
    verdict = "PASS" if overhead <= BAR_PCT else "FAIL"
    print(f"\nalways-on tier step-time overhead {overhead:+.2f} % (median step time, medians of "
          f"{args.repeats}) vs bar {BAR_PCT:.0f} %: {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": vars(args), "variants": {k: v for k, v in variants.items()},
                       "notes": notes, "runs": results, "summaries": summaries,
                       "verdict": verdict}, f, indent=2)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
