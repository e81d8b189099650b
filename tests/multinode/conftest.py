"""Fixtures for the multi-node end-to-end tests (docs/multi-node.md): a two-node torchrun job
(gloo, CPU; examples/pytorch/train_ddp.py) on this one machine, each node its own `stepscope run`
writing into one shared job directory.

The nodes are network namespaces joined by a veth pair, each a host with its own address
(10.213.N.1 and .2), when this machine lets us make them (root with CAP_NET_ADMIN, iproute2);
else two launchers on loopback with distinct node ids. Either way torchrun's static rendezvous
runs on node 0, so node 1 holds global ranks 2 and 3; rank 3 is slowed on purpose and node 1's
clock is skewed by CLOCK_SKEW_NS (STEPSCOPE_TEST_CLOCK_SKEW_NS), which the analysis must undo
from the offset measured through the rendezvous store.

Run by hand (from the repository root, as root for the namespaces):

    STEPSCOPE_CLI=build/src/cli/stepscope PYTHONPATH=build/python:tests \\
        .venv/bin/python -m pytest -q tests/multinode
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from cli_fixtures import cli  # noqa: F401 (the pytest fixture, tests/cli_fixtures.py)

PYTHON = sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "pytorch", "train_ddp.py")
NODES = ("node0", "node1")
RANKS_PER_NODE = 2
SLOW_RANK = 3      # on node1
# Rank 3 sleeps 100 ms in each step. The rule finds it when the others wait for it more than half
# of their step, so the ranks' own work must stay under 100 ms a step: ~5 ms on a quiet machine,
# but four ranks share two cores here and a CI run loads them with other suites (30 ms did not
# always hold: the rule saw no straggler in one CI run).
SLOW_MS = 100
CLOCK_SKEW_NS = 2_500_000_000  # node1's clock is 2.5 s ahead
# As tests/torchrun: the default 10 % is a fraction of a millisecond of this model's steps,
# within a shared two-core machine's scheduling noise.
STRAGGLER_THRESHOLD_PCT = 50
EXAMPLE_ARGS = ["--epochs", "3", "--samples", "960", "--batch-size", "16"]
STEPS_PER_RANK = 45  # 960 samples / 4 ranks / 16 per batch * 3 epochs


def torchrun():
    script = os.path.join(os.path.dirname(PYTHON), "torchrun")
    return [script] if os.access(script, os.X_OK) else [PYTHON, "-m", "torch.distributed.run"]


class Topology:
    """Where each node runs: a command prefix, its address and its network interface."""

    def __init__(self):
        self.kind = "loopback"
        self.suffix = f"{os.getpid() % 10000}{random.randrange(100)}"
        self.namespaces = []
        self.prefixes = [[], []]
        self.addresses = ["127.0.0.1", "127.0.0.1"]
        self.interfaces = ["lo", "lo"]

    def _ip(self, *args):
        return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)

    def try_namespaces(self):
        if shutil.which("ip") is None:
            return "no `ip` command (iproute2)"
        subnet = 10 + random.randrange(200)
        names = [f"ssmn{i}-{self.suffix}" for i in range(2)]
        links = [f"ssv{i}-{self.suffix}"[:15] for i in range(2)]
        steps = [("netns", "add", names[0]), ("netns", "add", names[1]),
                 ("link", "add", links[0], "type", "veth", "peer", "name", links[1])]
        for step in steps:
            done = self._ip(*step)
            if done.returncode != 0:
                self.cleanup()
                return f"`ip {' '.join(step)}` failed: {done.stderr.strip()}"
            if step[:2] == ("netns", "add"):
                self.namespaces.append(step[2])
        addresses = [f"10.213.{subnet}.1", f"10.213.{subnet}.2"]
        for i in range(2):
            for step in (("link", "set", links[i], "netns", names[i]),
                         ("-n", names[i], "addr", "add", addresses[i] + "/24", "dev", links[i]),
                         ("-n", names[i], "link", "set", links[i], "up"),
                         ("-n", names[i], "link", "set", "lo", "up")):
                done = self._ip(*step)
                if done.returncode != 0:
                    self.cleanup()
                    return f"`ip {' '.join(step)}` failed: {done.stderr.strip()}"
        self.kind = "namespaces"
        self.prefixes = [["ip", "netns", "exec", names[i]] for i in range(2)]
        self.addresses = addresses
        self.interfaces = links
        return ""

    def cleanup(self):
        for name in self.namespaces:
            self._ip("netns", "del", name)
        self.namespaces = []


class MultiNodeJob:
    """A finished two-node job, read back."""

    def __init__(self, cli, job_dir, processes, topology):
        self.cli = cli
        self.dir = str(job_dir)
        self.topology = topology
        self.outputs = {}
        for node, process in processes.items():
            self.outputs[node] = process

    def describe(self):
        text = f"topology: {self.topology.kind}\n"
        for node, (code, out, err) in self.outputs.items():
            text += f"--- {node}: exit {code}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-3000:]}\n"
        return text

    def cli_json(self, *args):
        finished = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=300,
                                  stdin=subprocess.DEVNULL)
        assert finished.returncode == 0, finished.stderr
        return json.loads(finished.stdout)

    def read(self, *parts):
        with open(os.path.join(self.dir, *parts), encoding="utf-8") as f:
            return json.load(f)


def start_node(cli, topology, out, job, index, master_port, extra_env, script_args):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=topology.interfaces[index], **extra_env)
    command = [*topology.prefixes[index], cli, "run", "--out", str(out), "--job", job, "--node", NODES[index],
               "--no-detail", "--rule", f"Straggler.threshold_pct={STRAGGLER_THRESHOLD_PCT}", "--",
               *torchrun(), "--nnodes", "2", "--node-rank", str(index), "--nproc-per-node", str(RANKS_PER_NODE),
               "--master-addr", topology.addresses[0], "--master-port", str(master_port), "--max-restarts", "0",
               EXAMPLE, *EXAMPLE_ARGS, *script_args]
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)


def process_tree(root):
    """`root` and every process descended from it, read from /proc (torchrun's workers run in
    sessions of their own, so its process group is not all of a node)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(parent, []).append(int(entry))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, []))
    return tree


def kill_node(process):
    """SIGKILL to a node's launcher and everything under it, as when its machine dies."""
    tree = process_tree(process.pid)
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class WatchedOutput:
    """A process's stdout and stderr read as they come (so a test can wait for a line), kept for
    describe()."""

    def __init__(self, process, marker):
        self.process = process
        self.out, self.err = [], []
        self.seen = threading.Event()
        self.threads = [threading.Thread(target=self._read, args=(process.stdout, self.out, marker), daemon=True),
                        threading.Thread(target=self._read, args=(process.stderr, self.err, None), daemon=True)]
        for thread in self.threads:
            thread.start()

    def _read(self, stream, lines, marker):
        for line in stream:
            lines.append(line)
            if marker is not None and marker in line:
                self.seen.set()

    def result(self, timeout):
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        for thread in self.threads:
            thread.join(timeout=30)
        return (self.process.returncode, "".join(self.out), "".join(self.err))


def finish(processes, timeout):
    results = {}
    deadline = time.monotonic() + timeout
    for node, process in processes.items():
        try:
            out, err = process.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
        results[node] = (process.returncode, out, err)
    return results


@pytest.fixture(scope="session")
def topology():
    chosen = Topology()
    why_not = chosen.try_namespaces()
    if why_not:
        sys.stderr.write(f"multinode: network namespaces unavailable ({why_not}); two launchers on loopback\n")
    yield chosen
    chosen.cleanup()


@pytest.fixture(scope="session")
def job(cli, topology, tmp_path_factory):
    """Both nodes run to the end; rank 3 (node1) slowed, node1's clock skewed."""
    out = tmp_path_factory.mktemp("multinode")
    port = 29000 + random.randrange(2000)
    slow = ["--slow-rank", str(SLOW_RANK), "--slow-ms", str(SLOW_MS)]
    processes = {NODES[0]: start_node(cli, topology, out, "job", 0, port, {}, slow),
                 NODES[1]: start_node(cli, topology, out, "job", 1, port,
                                      {"STEPSCOPE_TEST_CLOCK_SKEW_NS": str(CLOCK_SKEW_NS)}, slow)}
    run = MultiNodeJob(cli, out / "job", finish(processes, 900), topology)
    for node, (code, _, _) in run.outputs.items():
        assert code == 0, f"{node} failed\n{run.describe()}"
    return run


@pytest.fixture(scope="session")
def lost_node_job(cli, topology, tmp_path_factory):
    """node1 (launcher, torchrun and its ranks) is killed once its ranks train; node0's ranks then
    fail on the lost peer and its launcher ends the node. Were node1's ranks left alive (they run
    in sessions of their own), they would finish training and node0's torchrun would wait out its
    300 s exit barrier for node1's dead agent."""
    out = tmp_path_factory.mktemp("multinode-lost")
    port = 29000 + random.randrange(2000)
    # 40 epochs of 15 steps, 100 ms each on rank 3: ~60 s of training, killed two epochs in.
    longer = ["--epochs", "40", "--slow-rank", str(SLOW_RANK), "--slow-ms", str(SLOW_MS)]
    processes = {NODES[0]: start_node(cli, topology, out, "lost", 0, port, {}, longer),
                 NODES[1]: start_node(cli, topology, out, "lost", 1, port, {}, longer)}
    # Killed once every rank trained two epochs: rank 0 (node0) prints each epoch's loss, and DDP
    # keeps the ranks in step. Waiting a fixed time after the ranks started was too short on a
    # loaded machine (nothing recorded yet).
    node0 = WatchedOutput(processes[NODES[0]], "epoch 1: loss")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not node0.seen.wait(0.5):
        if processes[NODES[1]].poll() is not None or processes[NODES[0]].poll() is not None:
            break
    killed_at_ns = time.time_ns()
    kill_node(processes[NODES[1]])
    outputs = finish({NODES[1]: processes[NODES[1]]}, 600)
    outputs[NODES[0]] = node0.result(600)
    run = MultiNodeJob(cli, out / "lost", {node: outputs[node] for node in NODES}, topology)
    run.killed_at_ns = killed_at_ns
    return run
