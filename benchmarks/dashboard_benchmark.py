#!/usr/bin/env python3
"""The dashboard's speed on the synthetic 24 h / 8-GPU / 500 ms run (issue 14 §3):

  Overview   first meaningful paint (the verdict sentence laid out) <= 1.5 s after navigation
  Nodes      every chart drawn <= 2 s after navigation
  Timeline   >= 30 frames per second while zooming and panning
  Memory     the server's peak RSS after every page, within the one-model bar (issue 12):
             64 B per framework event + 16 B per system sample + 150 MB

against a baseline in the same script: the static report.html of the same run opening on its
verdict (file://, no server). The run is loaded into the server first (its load is reported
apart: a user opens the job list before a run's pages). Medians of --repetitions; exit status 1
when a bar is missed. Timings are never asserted in tests; this is run by hand:

    python3 benchmarks/dashboard_benchmark.py [--run JOB_DIR] [--repetitions 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BARS = {"overview": 1500.0, "nodes": 2000.0}
BAR_FPS = 30.0


def peak_rss_mb(pid):
    """The process's peak resident set (VmHWM), in MB (10^6 bytes, as report_memory_benchmark)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    return float("nan")


def memory_bar_mb(stepscope, run):
    """Issue 12's bar for the run, in MB as report_memory_benchmark computes it: 64 B per framework
    event + 16 B per system sample + 150 MB."""
    info = json.loads(subprocess.run([stepscope, "info", run, "--json"], check=True, capture_output=True,
                                     text=True).stdout)
    counts = info["counts"]
    events = counts["spans"] + counts["instants"] + counts["counters"] + sum(counts["steps"].values())
    return events, counts["system_samples"], (64 * events + 16 * counts["system_samples"]) / 1e6 + 150


def call(base, path, method="GET"):
    request = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read() or b"null")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a stepscope job directory (default: generate the 24 h synthetic run)")
    parser.add_argument("--out", default="/tmp/stepscope-dashboard-benchmark")
    parser.add_argument("--stepscope", default=os.path.join(REPO, "build", "src", "cli", "stepscope"))
    parser.add_argument("--make-run", default=os.path.join(REPO, "build", "benchmarks", "make_synthetic_run"))
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--pages", default="report,overview,nodes,timeline")
    args = parser.parse_args()

    run = args.run
    if run is None:
        run = os.path.join(args.out, "stepscope", "synthetic")
        if not os.path.exists(os.path.join(run, "manifest.json")):
            subprocess.run([args.make_run, args.out, "--hours=24", "--gpus=8", "--interval_ms=500", "--no-sagemaker"],
                           check=True)
    # A finished stepscope run has its rules.json (the end of `stepscope run` writes it); the
    # synthetic run gets it the same way, so the server reads the findings as it would for a real
    # run instead of evaluating them (a live run evaluates them: report_memory_benchmark's case).
    if not os.path.exists(os.path.join(run, "rules", "rules.json")):
        subprocess.run([args.stepscope, "rules", run], check=True, capture_output=True)
    os.makedirs(args.out, exist_ok=True)  # with --run nothing was generated there
    report = os.path.join(args.out, "report.html")
    subprocess.run([args.stepscope, "report", run, "-o", report], check=True, capture_output=True)

    # --port 0: the server picks a free port and prints its URL.
    server = subprocess.Popen([args.stepscope, "serve", os.path.dirname(run), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        for line in server.stdout:
            if line.startswith("open "):
                base = line.split()[1].rstrip("/")
            if line.startswith("press Ctrl-C"):
                break
        if base is None:
            sys.exit("stepscope serve printed no URL")
        # Keep reading what the server prints so a full pipe never blocks it.
        threading.Thread(target=server.stdout.read, daemon=True).start()
        runs = call(base, "/api/runs")["runs"]
        run_id = next(r["id"] for r in runs if os.path.realpath(os.path.join(os.path.dirname(run), r["path"])) == os.path.realpath(run))
        started = time.monotonic()
        call(base, f"/api/runs/{run_id}/load", "POST")
        call(base, f"/api/runs/{run_id}/report")
        load_s = time.monotonic() - started
        driver = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboard_paint.mjs"),
                                 "--web-dir", os.path.join(REPO, "web"), "--url", base, "--run", run_id,
                                 "--report", report, "--repetitions", str(args.repetitions), "--pages", args.pages],
                                capture_output=True, text=True, timeout=1800)
        if driver.returncode != 0:
            sys.exit("dashboard_paint.mjs failed:\n" + driver.stderr)
        results = json.loads(driver.stdout.strip().splitlines()[-1])
        peak_rss = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)

    median = {key: statistics.median(values) for key, values in results.items()}
    print(f"run: {run}")
    print(f"server: load + first report {load_s:.2f} s (once, before the pages)")
    ok = True
    for key in ("overview", "nodes"):
        if key not in median:
            continue
        passed = median[key] <= BARS[key]
        ok &= passed
        ratio = (f"; ratio to the static report's verdict ({median['report']:.0f} ms): {median[key] / median['report']:.2f}"
                 if "report" in median else "")
        print(f"{key:9s} {median[key]:8.0f} ms  (bar {BARS[key]:.0f} ms, {'PASS' if passed else 'FAIL'}){ratio}")
    if "timeline_fps" in median:
        passed = median["timeline_fps"] >= BAR_FPS
        ok &= passed
        print(f"timeline  {median['timeline_fps']:8.1f} fps while zooming and panning (bar {BAR_FPS:.0f}, {'PASS' if passed else 'FAIL'})")
    events, samples, bar = memory_bar_mb(args.stepscope, run)
    passed = peak_rss <= bar
    ok &= passed
    print(f"memory    server peak RSS {peak_rss:.1f} MB for {events} events and {samples} samples "
          f"(bar {bar:.1f} MB, {'PASS' if passed else 'FAIL'})")
    print("raw:", json.dumps(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
