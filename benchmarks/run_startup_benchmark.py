"""What `stepscope run` adds to a job's wall time: `stepscope run -- python -c pass` against
plain `python -c pass` (bar, issue 10 §5: at most 100 ms more).

Usage (from the repository root, after `ninja -C build stepscope _core`)::

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/run_startup_benchmark.py [--repeats 30]

For each interpreter (--python, repeatable; default the torch 2.x venv's .venv/bin/python and
Debian's /usr/bin/python3, those that exist) it runs `PY -c pass` plain and under
`stepscope run --out TMP --job NAME` (a job directory per run), alternating, --repeats times
each, with this script's environment for both (so a PYTHONPATH naming the build's package
reaches both alike), and reports the
medians of the wall time and of the CPU time (user + system of the whole process tree, from
the rusage of waited-for children) and their differences. CPU time is the steadier figure on a
loaded machine; wall time is what the user waits for. PYTHONDONTWRITEBYTECODE is removed from
that environment (--keep-env keeps it): without .pyc files every process would compile
stepscope's modules again, which a pip-installed package never does.

Then, --breakdown-repeats times (0: skip), it runs the launcher under
`strace -f --seccomp-bpf` tracing only execve, exit_group, unlink and rename (a few dozen
stops, so the timings stay close to untraced ones) and splits the launcher's wall time at
those marks, medians over the runs:

  setup      launcher exec -> the job's exec (config, capability probes, manifest, clock
             calibration, sitecustomize, sampler and rule threads)
  job        the job's exec -> its exit (its own run, with stepscope's Python start-up)
  compact    the job's exit -> the last ring folded into its log (stream compaction)
  manifest   -> the final manifest written
  rules      -> rules/rules.json written (the online rules' final pass)
  report     -> report.html written
  summary    -> the launcher's exit (the terminal summary)

and it reads the job's own start-up cost from `-X importtime` (the sitecustomize import that
loads stepscope and starts the recorder), medians likewise.

Prints PASS/FAIL per interpreter against the bar on the median wall-time difference; exit
status 0 when every interpreter passes, 1 when one does not, 2 on a set-up error.
"""

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import startup_runs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAR_MS = 100.0
PHASES = ("setup", "job", "compact", "manifest", "rules", "report", "summary")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="runs of each variant (default 30)")
    parser.add_argument("--breakdown-repeats", type=int, default=7,
                        help="traced launcher runs for the breakdown (default 7; 0 skips it)")
    startup_runs.add_interpreter_arguments(parser)
    parser.add_argument("--cli", default=os.environ.get("STEPSCOPE_CLI")
                        or os.path.join(REPO, "build", "src", "cli", "stepscope"))
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    args.python = startup_runs.interpreters(args)
    return args


# The environment of every run (main() drops PYTHONDONTWRITEBYTECODE unless --keep-env).
ENV = dict(os.environ)


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command):
    """(wall s, CPU s of the whole tree) of one run; raises if it fails."""
    cpu = children_cpu_s()
    started = time.perf_counter()
    result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, timeout=300, env=ENV)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n"
                           f"{result.stderr.decode(errors='replace')[-2000:]}")
    return wall, children_cpu_s() - cpu


_jobs = iter(range(1 << 30))


def launcher(cli, out, *command):
    """`stepscope run` of `command` into a job directory of its own under `out`."""
    return [cli, "run", "--out", out, "--job", f"job{next(_jobs)}", "--", *command]


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


# --- the breakdown ----------------------------------------------------------------------------

LINE = re.compile(r"^(\d+)\s+(\d+):(\d+):(\d+\.\d+)\s+(.*)$")


def trace_marks(trace_path):
    """Phase boundaries (seconds since the launcher's exec) from an `strace -f -tt` log."""
    events = []
    with open(trace_path) as f:
        for line in f:
            match = LINE.match(line)
            if match:
                pid, h, m, s, rest = match.groups()
                events.append((int(pid), int(h) * 3600 + int(m) * 60 + float(s), rest))
    launcher_pid, t0 = events[0][0], events[0][1]
    marks = {}
    job_pid = None
    for pid, t, rest in events:
        if job_pid is None and pid != launcher_pid and rest.startswith("execve("):
            job_pid, marks["setup"] = pid, t
        elif pid == job_pid and rest.startswith("exit_group(") and "job" not in marks:
            marks["job"] = t
        elif "job" in marks and pid == launcher_pid:
            if rest.startswith("unlink(") and '.ring"' in rest:
                marks["compact"] = t
            elif rest.startswith("rename(") and rest.endswith('/manifest.json") = 0'):
                marks["manifest"] = t
            elif rest.startswith("rename(") and '/rules/rules.json")' in rest:
                marks["rules"] = t
            elif rest.startswith("rename(") and '/report.html")' in rest:
                marks["report"] = t
            elif rest.startswith("exit_group("):
                marks["summary"] = t
    missing = [p for p in PHASES if p not in marks]
    if missing:
        raise RuntimeError(f"no {', '.join(missing)} mark in {trace_path}")
    phases, previous = {}, t0
    for phase in PHASES:
        phases[phase] = marks[phase] - previous
        previous = marks[phase]
    phases["total"] = previous - t0
    return phases


def breakdown(cli, python, out, repeats):
    """Median seconds per phase over `repeats` traced launcher runs."""
    runs = []
    for index in range(repeats):
        trace = os.path.join(out, f"trace{index}.txt")
        command = ["strace", "-f", "-tt", "-qq", "--seccomp-bpf", "-o", trace,
                   "-e", "trace=execve,exit_group,unlink,rename",
                   *launcher(cli, os.path.join(out, "traced"), python, "-c", "pass")]
        timed(command)
        runs.append(trace_marks(trace))
    return {phase: statistics.median(r[phase] for r in runs) for phase in (*PHASES, "total")}


IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)$")


def startup_imports(cli, python, out, repeats):
    """Median µs of the job's sitecustomize import (stepscope, the recorder's start) and of
    `import stepscope` inside it, from -X importtime."""
    site_us, package_us = [], []
    for _ in range(repeats):
        result = subprocess.run(launcher(cli, os.path.join(out, "importtime"), python, "-X",
                                         "importtime", "-c", "pass"),
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=300, env=ENV)
        cumulative = {}
        for line in result.stderr.splitlines():
            match = IMPORT_LINE.match(line)
            if match:
                cumulative[match[4]] = max(cumulative.get(match[4], 0), int(match[2]))
        site_us.append(cumulative.get("sitecustomize", 0))
        package_us.append(cumulative.get("stepscope", 0))
    return statistics.median(site_us), statistics.median(package_us)


# --- main -------------------------------------------------------------------------------------

def main():
    args = parse_args()
    if not os.path.exists(args.cli):
        print(f"error: no stepscope CLI at {args.cli} (build it, or pass --cli)", file=sys.stderr)
        return 2
    startup_runs.drop_bytecode_switch(ENV, args)
    trace = args.breakdown_repeats > 0 and shutil.which("strace") is not None
    if args.breakdown_repeats > 0 and not trace:
        print("strace is not installed: the breakdown is skipped", file=sys.stderr)
    out = tempfile.mkdtemp(prefix="stepscope-startup-")
    passed = True
    try:
        for python in args.python:
            plain = [python, "-c", "pass"]
            print(f"{python}: {args.repeats} runs each of `-c pass`, plain and under "
                  f"`{os.path.basename(args.cli)} run --out TMP --job NAME`, alternating "
                  f"(load average {load_average()} before)", flush=True)
            timed(plain)  # warm the page cache for both
            timed(launcher(args.cli, out, *plain))
            results = {"plain": [], "run": []}
            for index in range(args.repeats):
                order = ("plain", "run") if index % 2 == 0 else ("run", "plain")
                for variant in order:
                    command = plain if variant == "plain" else launcher(args.cli, out, *plain)
                    results[variant].append(timed(command))
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out, exist_ok=True)
            wall = {v: statistics.median(r[0] for r in runs) * 1e3 for v, runs in results.items()}
            cpu = {v: statistics.median(r[1] for r in runs) * 1e3 for v, runs in results.items()}
            added = wall["run"] - wall["plain"]
            verdict = "PASS" if added <= BAR_MS else "FAIL"
            passed = passed and added <= BAR_MS
            print(f"  wall ms, medians: plain {wall['plain']:.1f}, stepscope run {wall['run']:.1f},"
                  f" added {added:+.1f} (bar {BAR_MS:.0f}): {verdict}")
            print(f"  CPU ms (user+sys, whole tree), medians: plain {cpu['plain']:.1f}, "
                  f"stepscope run {cpu['run']:.1f}, added {cpu['run'] - cpu['plain']:+.1f}")
            if trace:
                phases = breakdown(args.cli, python, out, args.breakdown_repeats)
                print(f"  launcher wall ms under strace --seccomp-bpf, medians of "
                      f"{args.breakdown_repeats}: "
                      + ", ".join(f"{p} {phases[p] * 1e3:.1f}" for p in (*PHASES, "total")))
            if args.breakdown_repeats > 0:
                site_us, package_us = startup_imports(args.cli, python, out,
                                                      args.breakdown_repeats)
                print(f"  the job's stepscope start-up (-X importtime, medians): sitecustomize "
                      f"{site_us / 1e3:.1f} ms, of which `import stepscope` {package_us / 1e3:.1f} ms")
            print(f"  (load average {load_average()} after)", flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
