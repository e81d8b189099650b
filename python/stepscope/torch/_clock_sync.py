"""Clock alignment across the nodes of a multi-node torchrun job (docs/multi-node.md).

Every node stamps its events with its own clock (CLOCK_MONOTONIC moved to Unix time by the
node manifest's anchor), and two machines' clocks disagree by as much as their time service
lets them: milliseconds with NTP, seconds without. To put every node's events on one time axis,
local rank 0 of each node measures its clock's offset to the reference node's (the node of
global rank 0) through the job's own rendezvous store, the TCPStore at MASTER_ADDR:MASTER_PORT
that torchrun set up, NTP-style:

    node k                      reference
    t1 = now(); set ping    ->  t2 = now() when the ping arrives
    t4 = now() when pong    <-  t3 = now(); set pong "t2 t3"
    offset = ((t2 - t1) + (t3 - t4)) / 2     round trip = (t4 - t1) - (t3 - t2)

The true offset lies within round trip / 2 of the estimate whatever the network's asymmetry:
that is the uncertainty recorded. Each burst of exchanges keeps its fastest; a burst runs when
the process starts and every `PERIOD_S` after (so drift over the job shows), in a daemon
thread with its own store connection: the job's store calls never wait behind these.

Node k writes `<node dir>/clock_sync.json` (docs/formats.md) after every burst, replaced
whole; the reference writes that it is the reference. A failed burst records its reason and
the next one tries again. Nothing here raises into the job.

The reference serves exchanges in ticket order: a node takes a ticket (an atomic counter in the
store), names itself under it, and the reference, waiting on ticket n, answers "ready", then
times the ping. Only the ping and the pong are timed, so waiting for a ticket's turn never
inflates a round trip.
"""

import datetime
import json
import os
import sys
import threading
import time

PERIOD_S = float(os.environ.get("STEPSCOPE_CLOCK_SYNC_PERIOD_S", "60"))
FIRST_ROUNDS = 8
LATER_ROUNDS = 4
MAX_SAMPLES = 1000     # one per burst: 16 hours at the default period; the first is always kept
TURN_TIMEOUT_S = 30    # a node waits this long for its turn, the reference this long for a ping
FILE_NAME = "clock_sync.json"

_started = False


def _warn(message):
    sys.stderr.write(f"stepscope: {message}\n")


def _env_int(name):
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


def _plan():
    """(node_rank, node_count) when this process should exchange clocks, else None."""
    if os.environ.get("STEPSCOPE_CLOCK_SYNC", "1") == "0" or not os.environ.get("STEPSCOPE_NODE_DIR"):
        return None
    if _env_int("LOCAL_RANK") != 0 or not os.environ.get("MASTER_ADDR") or _env_int("MASTER_PORT") is None:
        return None
    world, local_world, node_rank = _env_int("WORLD_SIZE"), _env_int("LOCAL_WORLD_SIZE"), _env_int("GROUP_RANK")
    if node_rank is None or not world or not local_world:
        return None
    nodes = _env_int("GROUP_WORLD_SIZE") or world // local_world
    return (node_rank, nodes) if nodes > 1 else None


def _clock_offset_ns(node_dir):
    """Unix time minus CLOCK_MONOTONIC as the node's manifest anchors it: the node's events are
    stamped with this, so its clock is what must be compared (a skewed anchor included)."""
    try:
        with open(os.path.join(node_dir, "manifest.json"), encoding="utf-8") as f:
            clock = json.load(f)["clock"]
        return int(clock["realtime_ns"]) - int(clock["monotonic_ns"])
    except (OSError, ValueError, KeyError, TypeError):
        return time.time_ns() - time.monotonic_ns()


def _write(node_dir, document):
    path = os.path.join(node_dir, FILE_NAME)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(document, f)
        os.replace(temporary, path)
    except OSError as error:
        _warn(f"cannot write {path}: {error}; this node's clock stays unaligned")


class _Exchange:
    def __init__(self, store, prefix, anchor_offset_ns):
        self.store = store
        self.prefix = prefix
        self.anchor_offset_ns = anchor_offset_ns

    def now(self):
        return time.monotonic_ns() + self.anchor_offset_ns

    def key(self, *parts):
        return "/".join([self.prefix, *map(str, parts)])

    def wait(self, key, seconds):
        self.store.wait([key], datetime.timedelta(seconds=seconds))

    def serve_forever(self):
        """The reference: answer every ticket, in order."""
        ticket = 1
        while True:
            try:
                self.wait(self.key("ticket", ticket), TURN_TIMEOUT_S)
            except Exception:  # no one asked yet, or a node took a ticket and died
                if self.store.add(self.key("tickets"), 0) > ticket:
                    ticket += 1
                continue
            self.store.set(self.key("ready", ticket), "1")
            try:
                self.wait(self.key("ping", ticket), TURN_TIMEOUT_S)
                t2 = self.now()
                t3 = self.now()
                self.store.set(self.key("pong", ticket), f"{t2} {t3}")
            except Exception:
                pass
            ticket += 1

    def one_round(self, node_rank):
        ticket = self.store.add(self.key("tickets"), 1)
        self.store.set(self.key("ticket", ticket), str(node_rank))
        self.wait(self.key("ready", ticket), TURN_TIMEOUT_S)
        t1 = self.now()
        self.store.set(self.key("ping", ticket), "1")
        self.wait(self.key("pong", ticket), TURN_TIMEOUT_S)
        t4 = self.now()
        t2, t3 = (int(part) for part in self.store.get(self.key("pong", ticket)).decode().split())
        return {"at_ns": t1, "offset_ns": ((t2 - t1) + (t3 - t4)) // 2, "round_trip_ns": (t4 - t1) - (t3 - t2)}


def _run(node_rank, nodes):
    node_dir = os.environ["STEPSCOPE_NODE_DIR"]
    node = os.environ.get("STEPSCOPE_NODE", "")
    document = {"version": 1, "node": node, "node_rank": node_rank, "nodes": nodes, "reference_node": None,
                "samples": [], "error": ""}
    try:
        from torch.distributed import TCPStore

        store = TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                         timeout=datetime.timedelta(seconds=300))
    except Exception as error:
        document["error"] = f"cannot reach the job's rendezvous store: {type(error).__name__}: {error}"
        _write(node_dir, document)
        return
    prefix = "stepscope/clock/{}/{}".format(os.environ.get("TORCHELASTIC_RUN_ID", "job"),
                                            os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    exchange = _Exchange(store, prefix, _clock_offset_ns(node_dir))
    if node_rank == 0:
        store.set(exchange.key("reference"), node)
        document["reference_node"] = node
        _write(node_dir, document)
        exchange.serve_forever()
        return
    rounds = FIRST_ROUNDS
    while True:
        try:
            if document["reference_node"] is None:
                exchange.wait(exchange.key("reference"), TURN_TIMEOUT_S)
                document["reference_node"] = store.get(exchange.key("reference")).decode()
            best = min((exchange.one_round(node_rank) for _ in range(rounds)), key=lambda s: s["round_trip_ns"])
            document["samples"].append(best)
            if len(document["samples"]) > MAX_SAMPLES:
                del document["samples"][1]
            document["error"] = ""
        except Exception as error:
            document["error"] = f"the clock exchange with the reference node failed: {type(error).__name__}: {error}"
        _write(node_dir, document)
        rounds = LATER_ROUNDS
        time.sleep(PERIOD_S)


def _run_guarded(node_rank, nodes):
    try:
        _run(node_rank, nodes)
    except Exception as error:  # never into the job
        _warn(f"clock alignment stopped on this node: {type(error).__name__}: {error}")


def install():
    """Starts the exchange in this process when it is local rank 0 of a multi-node torchrun job
    under `stepscope run` (once per process)."""
    global _started
    plan = None if _started else _plan()
    if plan is None:
        return
    _started = True
    threading.Thread(target=_run_guarded, args=plan, name="stepscope-clock-sync", daemon=True).start()
