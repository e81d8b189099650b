"""Helpers shared by the PyTorch end-to-end tests: starting `stepscope run` on an example and
reading the run back as steps, spans and instants of the job's processes."""

import collections
import json
import os
import sys
import subprocess

from stepscope import _core

PYTHON = sys.executable  # the lane's interpreter: ctest runs pytest with it
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples", "pytorch")
NODE = "n"
LIFECYCLE = ("Lifecycle:ProcessStart", "Lifecycle:FirstStep", "Lifecycle:LastStep",
             "Lifecycle:Exit")
# Spans that only detail windows record (docs/detail-windows.md), beside DetailWindow:<kind>.
DETAIL_SPANS = ("DataLoaderFetchSample", "DataLoaderCollate")


def is_detail_span(name):
    return name.startswith("DetailWindow") or name in DETAIL_SPANS


def launch(cli, out, job, python_args, env=None, detail=False, flags=(), **popen_kwargs):
    """Starts `stepscope run --out OUT --job JOB --node n [--no-detail] -- /usr/bin/python3
    ARGS...`. Without `detail` the run has the always-on tier only, whose spans these tests
    count exactly; with it, the default detail windows too."""
    child_env = dict(os.environ)
    # One thread per process keeps the examples quick and steady on a shared two-core machine.
    child_env.setdefault("OMP_NUM_THREADS", "1")
    child_env.update(env or {})
    command = [cli, "run", "--out", str(out), "--job", job, "--node", NODE,
               *([] if detail else ["--no-detail"]), *flags, "--", PYTHON, *map(str, python_args)]
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env, **popen_kwargs)


def contains(outer, inner):
    """True when `inner` lies within `outer` in time, on the same process and thread."""
    return (outer["pid"] == inner["pid"] and outer["tid"] == inner["tid"]
            and outer["start_ns"] <= inner["start_ns"] and inner["end_ns"] <= outer["end_ns"])


class TorchRun:
    """A finished `stepscope run` of a PyTorch script, read back."""

    def __init__(self, run_dir, returncode, stdout, stderr):
        self.dir = run_dir
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        with open(os.path.join(run_dir, NODE, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.main_pid = self.manifest["pids"]["job"]
        data = _core.read_run(str(run_dir))
        self.problems = data["problems"]
        self.streams = [s for s in data["streams"] if not s["is_system"]]
        self.events = sorted((e for e in data["events"] if e["kind"] != "sample"),
                             key=lambda e: (e["start_ns"], e["end_ns"]))

    def describe(self):
        """What a failed assertion should show: the job's output."""
        return (f"exit {self.returncode}\nstdout:\n{self.stdout[-2000:]}\n"
                f"stderr:\n{self.stderr[-4000:]}")

    def printed(self, key):
        """The value of `key=value` on the script's output (the last one printed)."""
        values = [word.split("=", 1)[1] for line in self.stdout.splitlines()
                  for word in line.split() if word.startswith(key + "=")]
        assert values, f"the script printed no {key}=\n{self.describe()}"
        return int(values[-1])

    def of_kind(self, kind, name=None, pid=None):
        return [e for e in self.events if e["kind"] == kind and (name is None or e["name"] == name)
                and (pid is None or e["pid"] == pid)]

    def steps(self, phase=None):
        """Finished steps (of one phase), in time order."""
        return [e for e in self.of_kind("step")
                if not e["unfinished"] and (phase is None or e["phase"] == phase)]

    def spans(self, name=None, pid=None):
        return self.of_kind("span", name, pid)

    def instants(self, name=None, pid=None):
        return self.of_kind("instant", name, pid)

    def step_counts(self):
        """{phase: finished steps} for every phase."""
        counts = {phase: 0 for phase in ("TRAIN", "EVAL", "PREDICT", "GLOBAL")}
        for step in self.steps():
            counts[step["phase"]] += 1
        return counts

    def phase_sequence(self):
        """(phase, number) of every finished step, in time order."""
        return [(s["phase"], s["step"]) for s in self.steps()]

    def spans_by_step(self, pid=None, always_on_only=False):
        """([(step, Counter of span names inside it)], Counter of the names outside any step)
        for the spans of process `pid` (the main process by default); `always_on_only` leaves
        out the spans of detail windows."""
        pid = self.main_pid if pid is None else pid
        steps = [s for s in self.of_kind("step", pid=pid)]
        inside = [(step, collections.Counter()) for step in steps]
        outside = collections.Counter()
        for span in self.spans(pid=pid):
            if always_on_only and is_detail_span(span["name"]):
                continue
            holders = [counter for step, counter in inside if contains(step, span)]
            assert len(holders) <= 1, f"span {span} lies in {len(holders)} steps"
            (holders[0] if holders else outside)[span["name"]] += 1
        return inside, outside
