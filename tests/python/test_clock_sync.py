"""The clock exchange of multi-node jobs (stepscope/torch/_clock_sync.py) against an in-memory
store with TCPStore's semantics (set, get, blocking wait with a timeout, atomic add): the
reference serves tickets in order, the offset of a skewed node is measured within half the
round trip, a node whose turn never comes fails with a reason, and only local rank 0 of a
multi-node torchrun job under `stepscope run` takes part.
"""

import datetime
import json
import threading
import time

import pytest

from stepscope.torch import _clock_sync


class MemoryStore:
    """TCPStore's operations that the exchange uses, in one process."""

    def __init__(self):
        self.values = {}
        self.changed = threading.Condition()

    def set(self, key, value):
        with self.changed:
            self.values[key] = value.encode() if isinstance(value, str) else value
            self.changed.notify_all()

    def get(self, key):
        self.wait([key], datetime.timedelta(seconds=30))
        with self.changed:
            return self.values[key]

    def add(self, key, amount):
        with self.changed:
            value = int(self.values.get(key, b"0")) + amount
            self.values[key] = str(value).encode()
            self.changed.notify_all()
            return value

    def wait(self, keys, timeout):
        deadline = time.monotonic() + timeout.total_seconds()
        with self.changed:
            while not all(key in self.values for key in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"wait timeout for {keys}")
                self.changed.wait(left)


def test_a_skewed_node_measures_its_offset_within_half_the_round_trip():
    store = MemoryStore()
    skew_ns = 2_500_000_000  # the node's clock runs 2.5 s ahead of the reference's
    reference = _clock_sync._Exchange(store, "p", anchor_offset_ns=0)
    node = _clock_sync._Exchange(store, "p", anchor_offset_ns=skew_ns)
    threading.Thread(target=reference.serve_forever, daemon=True).start()
    samples = [node.one_round(node_rank=1) for _ in range(8)]
    for sample in samples:
        assert sample["round_trip_ns"] >= 0
        # One clock underneath: the true offset is exactly -skew.
        assert abs(sample["offset_ns"] + skew_ns) <= sample["round_trip_ns"] // 2 + 1, sample
    # Tickets are served in order, each once.
    assert int(store.values["p/tickets"]) == 8
    assert all(f"p/pong/{ticket}" in store.values for ticket in range(1, 9))


def test_two_nodes_take_turns_and_both_are_answered():
    store = MemoryStore()
    threading.Thread(target=_clock_sync._Exchange(store, "p", 0).serve_forever, daemon=True).start()
    results = {}

    def node(rank, skew):
        exchange = _clock_sync._Exchange(store, "p", skew)
        results[rank] = [exchange.one_round(rank) for _ in range(4)]

    threads = [threading.Thread(target=node, args=(rank, rank * 1_000_000)) for rank in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for rank, samples in results.items():
        best = min(samples, key=lambda s: s["round_trip_ns"])
        assert abs(best["offset_ns"] + rank * 1_000_000) <= best["round_trip_ns"] // 2 + 1, (rank, best)
    assert sorted(results) == [1, 2]


def test_a_node_without_a_reference_fails_its_round(monkeypatch):
    monkeypatch.setattr(_clock_sync, "TURN_TIMEOUT_S", 0.2)
    node = _clock_sync._Exchange(MemoryStore(), "p", 0)
    with pytest.raises(RuntimeError, match="wait timeout"):
        node.one_round(node_rank=1)


@pytest.mark.parametrize("environment, plan", [
    ({"LOCAL_RANK": "0", "GROUP_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}, (1, 2)),
    ({"LOCAL_RANK": "0", "GROUP_RANK": "0", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "GROUP_WORLD_SIZE": "2"}, (0, 2)),
    ({"LOCAL_RANK": "1", "GROUP_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}, None),   # not local rank 0
    ({"LOCAL_RANK": "0", "GROUP_RANK": "0", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "4"}, None),   # one node
    ({"LOCAL_RANK": "0", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}, None),                      # no group rank
    ({"LOCAL_RANK": "0", "GROUP_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "STEPSCOPE_CLOCK_SYNC": "0"}, None),
])
def test_only_local_rank_0_of_a_multi_node_job_exchanges(monkeypatch, tmp_path, environment, plan):
    for name in ("LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE",
                 "STEPSCOPE_CLOCK_SYNC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STEPSCOPE_NODE_DIR", str(tmp_path))
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert _clock_sync._plan() == plan


def test_the_node_clock_is_the_manifests_anchor(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"clock": {"monotonic_ns": 100, "realtime_ns": 5_000_000_100}}))
    assert _clock_sync._clock_offset_ns(str(tmp_path)) == 5_000_000_000
    (tmp_path / "manifest.json").write_text("{damaged")
    assert abs(_clock_sync._clock_offset_ns(str(tmp_path)) - (time.time_ns() - time.monotonic_ns())) < 1_000_000_000
