"""What `import stepscope` costs a fresh interpreter (bar, issue 10 §5: at most 30 ms).

Usage (from the repository root, after building ``_core`` into build/)::

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/import_time_benchmark.py [--repeats 40]

For each interpreter (--python, repeatable; default the torch 2.x venv's .venv/bin/python and
Debian's /usr/bin/python3, those that exist) it starts `PY -c "import stepscope"` and `PY -c
pass` alternately, --repeats times each, and reports the medians of the wall time and of the
CPU time (user + system, from the rusage of the waited-for child) and their differences: the
import's cost. Then it runs `PY -X importtime -c "import stepscope"` --importtime-repeats
times and prints the median cumulative time of `stepscope` as Python itself measures it, and
the modules that the import loads which a bare interpreter does not, largest first: what to
import lazily next.

Every run gets this script's environment (PYTHONPATH must name the package to measure), less
PYTHONDONTWRITEBYTECODE (--keep-env keeps it): without .pyc files each run would compile
stepscope's modules again, which an installed package never does. The package is imported once
before the timed runs, which writes them.

Exit status 0 when every interpreter's median wall-time difference is within the bar, 1 when
not, 2 on a set-up error (e.g. stepscope not importable).
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import startup_runs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAR_MS = 30.0
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)$")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40, help="runs of each variant (default 40)")
    parser.add_argument("--importtime-repeats", type=int, default=9,
                        help="-X importtime runs (default 9; 0 skips them)")
    startup_runs.add_interpreter_arguments(parser)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    args.python = startup_runs.interpreters(args)
    return args


def timed(command, env):
    """(wall s, CPU s) of one run; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                            timeout=120)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n"
                           f"{result.stderr.decode(errors='replace')[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_times(python, code, env):
    """{module: (self µs, cumulative µs)} from one `-X importtime` run."""
    result = subprocess.run([python, "-X", "importtime", "-c", code], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, env=env, timeout=120)
    modules = {}
    for line in result.stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match:
            modules[match[4]] = (int(match[1]), int(match[2]))
    return modules


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    args = parse_args()
    env = dict(os.environ)
    startup_runs.drop_bytecode_switch(env, args)
    passed = True
    try:
        for python in args.python:
            where = subprocess.run([python, "-c", "import stepscope; print(stepscope.__file__)"],
                                   capture_output=True, text=True, env=env, timeout=120)
            if where.returncode != 0:
                raise RuntimeError(f"{python} cannot import stepscope (set PYTHONPATH):\n"
                                   f"{where.stderr[-2000:]}")
            print(f"{python}: stepscope from {os.path.dirname(where.stdout.strip())}; "
                  f"{args.repeats} runs each, alternating (load average {load_average()} before)",
                  flush=True)
            variants = {"pass": [python, "-c", "pass"],
                        "import": [python, "-c", "import stepscope"]}
            runs = {name: [] for name in variants}
            for index in range(args.repeats):
                order = ("pass", "import") if index % 2 == 0 else ("import", "pass")
                for name in order:
                    runs[name].append(timed(variants[name], env))
            wall = {n: statistics.median(r[0] for r in rs) * 1e3 for n, rs in runs.items()}
            cpu = {n: statistics.median(r[1] for r in rs) * 1e3 for n, rs in runs.items()}
            added = wall["import"] - wall["pass"]
            passed = passed and added <= BAR_MS
            print(f"  wall ms, medians: -c pass {wall['pass']:.1f}, -c 'import stepscope' "
                  f"{wall['import']:.1f}, import {added:+.1f} (bar {BAR_MS:.0f}): "
                  f"{'PASS' if added <= BAR_MS else 'FAIL'}")
            print(f"  CPU ms, medians: -c pass {cpu['pass']:.1f}, -c 'import stepscope' "
                  f"{cpu['import']:.1f}, import {cpu['import'] - cpu['pass']:+.1f}")
            if args.importtime_repeats > 0:
                bare = set(import_times(python, "pass", env))
                samples = [import_times(python, "import stepscope", env)
                           for _ in range(args.importtime_repeats)]
                total = statistics.median(s.get("stepscope", (0, 0))[1] for s in samples)
                extra = {}
                for sample in samples:
                    for module, (self_us, _) in sample.items():
                        if module not in bare:
                            extra.setdefault(module, []).append(self_us)
                largest = sorted(((statistics.median(v), m) for m, v in extra.items()), reverse=True)
                print(f"  -X importtime, medians of {args.importtime_repeats}: stepscope "
                      f"{total / 1e3:.1f} ms cumulative; {len(extra)} modules beyond a bare "
                      "interpreter's, by self time: "
                      + ", ".join(f"{m} {us / 1e3:.1f}" for us, m in largest[:8]))
            print(f"  (load average {load_average()} after)", flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
