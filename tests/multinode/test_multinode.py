"""A multi-node torchrun job is one run (docs/multi-node.md; issue 16 §1): two nodes' launchers
write one job directory without touching each other's files; the last to finish writes the
job's rules and report; node1's skewed clock is aligned from the offset measured through the
rendezvous store, within the uncertainty recorded; Straggler names the slowed rank and its node
across the nodes; a node killed mid-run is a problem that says which and since when, and the
other node's data is complete.
"""

import json
import os
import statistics

from conftest import (CLOCK_SKEW_NS, NODES, RANKS_PER_NODE, SLOW_RANK, STEPS_PER_RANK, STRAGGLER_THRESHOLD_PCT)


def test_each_node_writes_its_own_files_and_the_last_writes_the_jobs(job):
    for node in NODES:
        files = set(os.listdir(os.path.join(job.dir, node)))
        assert {"manifest.json", "report.html", "rules", "clock_sync.json", "system.log"} <= files, (node, files)
        manifest = job.read(node, "manifest.json")
        assert (manifest["node"], manifest["status"]) == (node, "exited"), manifest
        assert (manifest["nodes_expected"], manifest["node_rank"]) == (2, NODES.index(node)), manifest
        # Each node's own rules saw only its own ranks.
        straggler = next(r for r in job.read(node, "rules", "rules.json")["rules"] if r["Rule"] == "Straggler")
        assert list(straggler["Details"]) in ([], [node]), straggler["Details"]
    assert os.path.exists(os.path.join(job.dir, "report.html")), job.describe()
    # One node wrote the job's outputs: the one that found the other finished.
    said = [node for node, (_, _, err) in job.outputs.items() if "written by its last node" in err]
    assert len(said) <= 1, job.describe()
    document = job.cli_json("report", job.dir, "--json")
    assert document["run"]["nodes"] == list(NODES)


def test_the_skewed_clock_is_aligned_within_its_measured_uncertainty(job):
    info = job.cli_json("info", job.dir, "--json")
    clocks = {node["name"]: node["clock"] for node in info["nodes"]}
    assert clocks["node0"]["state"] == "reference", clocks
    aligned = clocks["node1"]
    assert aligned["state"] == "aligned" and aligned["reference_node"] == "node0", clocks
    # Both nodes share this machine's clock: the true offset is exactly the injected skew.
    error_ns = abs(aligned["offset_ns"] + CLOCK_SKEW_NS)
    print(f"\nclock alignment ({job.topology.kind}): offset {aligned['offset_ns']} ns, error {error_ns} ns, "
          f"uncertainty {aligned['uncertainty_ns']} ns over {aligned['samples']} exchange bursts")
    assert error_ns <= aligned["uncertainty_ns"], aligned
    assert aligned["uncertainty_ns"] < 50_000_000, aligned
    assert not [p for p in info["problems"] if p["name"] == "node_clock_unaligned"], info["problems"]
    # The report says the same, node by node.
    report_clocks = {c["node"]: c for c in job.cli_json("report", job.dir, "--json")["run"]["node_clocks"]}
    assert report_clocks["node1"]["state"] == "aligned", report_clocks
    assert report_clocks["node1"]["description"].startswith("aligned to node 'node0': -2"), report_clocks
    assert report_clocks["node0"]["state"] == "reference", report_clocks


def test_synchronous_steps_end_together_across_nodes_once_aligned(job):
    from stepscope import _core

    data = _core.read_run(job.dir)
    stream_rank = {}
    for index, stream in enumerate(data["streams"]):
        meta = json.loads(stream["meta"]) if stream["meta"] else {}
        if "RANK" in meta.get("ranks", {}):
            stream_rank[index] = int(meta["ranks"]["RANK"])
    ends = {}
    for event in data["events"]:
        rank = stream_rank.get(event["stream"])
        if event["kind"] == "step" and rank is not None and event["name"] == "Step:ModeKeys.TRAIN":
            ends.setdefault(rank, {})[event["step"]] = event["end_ns"]
    assert sorted(ends) == list(range(2 * RANKS_PER_NODE)), sorted(ends)
    assert all(len(steps) == STEPS_PER_RANK for steps in ends.values()), {r: len(s) for r, s in ends.items()}
    # DDP all-reduces in every step: rank 0 (node0) and rank 2 (node1) end each step together.
    gaps = [abs(ends[0][step] - ends[2][step]) for step in ends[0]]
    assert statistics.median(gaps) < 250_000_000, sorted(gaps)[:5]


def test_straggler_names_the_slowed_rank_and_its_node_across_nodes(job):
    rules = job.read("rules", "rules.json")
    straggler = next(r for r in rules["rules"] if r["Rule"] == "Straggler")
    assert straggler["RuleParameters"] == f"threshold_pct:{STRAGGLER_THRESHOLD_PCT}\npatience:3"
    ids = [finding["id"] for finding in straggler["findings"]]
    assert ids == [f"Straggler/node1/rank-{SLOW_RANK}/TRAIN"], straggler["findings"]
    finding = straggler["findings"][0]
    assert f"rank {SLOW_RANK} on node1" in finding["title"], finding["title"]
    evidence = finding["evidence"][0]
    assert "node1's CPU" in evidence["what"] and "on the other nodes" in evidence["what"], evidence["what"]
    # Every rank of both nodes was compared.
    assert sorted(straggler["Details"]["node0"]["ranks"]) == ["0", "1"]
    assert sorted(straggler["Details"]["node1"]["ranks"]) == ["2", "3"]
    report = job.cli_json("report", job.dir, "--json")
    ranks = {row["rank"]: row["node"] for row in report["steps"]["ranks"]}
    assert ranks == {0: "node0", 1: "node0", 2: "node1", 3: "node1"}, report["steps"]["ranks"]


def test_a_node_killed_mid_run_is_a_problem_and_the_other_nodes_data_is_complete(lost_node_job):
    run = lost_node_job
    info = run.cli_json("info", run.dir, "--json")
    lost = [p for p in info["problems"] if p["name"] == "node_stopped_early"]
    assert len(lost) == 1, (info["problems"], run.describe())
    assert lost[0]["sentence"].startswith("node 'node1' stopped recording at "), lost[0]
    assert lost[0]["severity"] == "data_loss"
    statuses = {node["name"]: node["status"] for node in info["nodes"]}
    assert statuses["node0"] != "running" and statuses["node1"] == "running", statuses
    # node0's launcher finished its node: manifest final, its report and rules written.
    assert os.path.exists(os.path.join(run.dir, "node0", "report.html"))
    assert os.path.exists(os.path.join(run.dir, "node0", "rules", "rules.json"))
    # The job is readable: the report names the lost node and both nodes' data is there.
    document = run.cli_json("report", run.dir, "--json")
    assert document["run"]["nodes"] == list(NODES)
    assert lost[0]["sentence"] in document["run"]["problems"], document["run"]["problems"]
    counts = {row["node"]: row["count"] for row in document["steps"]["nodes"]}
    assert counts.get("node0", 0) > 0 and counts.get("node1", 0) > 0, counts
