"""torchrun on one node (docs/pytorch.md, "torchrun"): each rank's stream carries its rank, local
rank and world size; step counts per rank are exact; the summary and the report show per-rank
step times; the Straggler rule names the rank that is slowed on purpose and stays quiet when none
is. The torchrun agent, a Python process instrumented like the workers, has no rank and no steps.
"""

import json

from conftest import NODE, RANKS, SLOW_RANK, STEPS_PER_RANK, STRAGGLER_THRESHOLD_PCT


def test_each_worker_stream_carries_its_rank_local_rank_and_world_size(any_run):
    ranked = any_run.rank_streams()
    assert sorted(ranked) == list(range(RANKS)), any_run.streams
    agents = [s for s in any_run.streams if "ranks" not in s["meta"]]
    assert len(agents) == 1, any_run.streams
    agent = agents[0]
    # stepscope started torchrun (its agent); the agent started the workers.
    assert agent["pid"] == any_run.manifest["pids"]["job"]
    for rank, stream in ranked.items():
        assert stream["meta"]["ranks"] == {"RANK": str(rank), "LOCAL_RANK": str(rank),
                                           "WORLD_SIZE": str(RANKS), "GROUP_RANK": "0"}
        assert stream["meta"]["ppid"] == agent["pid"]
        assert stream["pid"] != agent["pid"]
    assert not any_run.problems, any_run.problems


def test_step_counts_per_rank_are_exact(any_run):
    printed = any_run.printed_iterations()
    assert printed == {rank: STEPS_PER_RANK for rank in range(RANKS)}, any_run.describe()
    for rank, stream in any_run.rank_streams().items():
        steps = any_run.steps(stream["pid"])
        assert [s["step"] for s in steps] == list(range(printed[rank])), rank
        assert not any(s["unfinished"] for s in steps)
        assert not [e for e in any_run.events if e["kind"] == "step" and e["pid"] == stream["pid"]
                    and e["name"] != "Step:ModeKeys.TRAIN"]
    agent = next(s for s in any_run.streams if "ranks" not in s["meta"])
    assert not [e for e in any_run.events if e["kind"] == "step" and e["pid"] == agent["pid"]]


def test_the_analysis_model_knows_every_process_and_its_rank(any_run):
    from stepscope.analysis import open_run

    processes = {p["pid"]: p for p in open_run(any_run.dir).processes}
    for rank, stream in any_run.rank_streams().items():
        process = processes[stream["pid"]]
        assert (process["node"], process["rank"], process["local_rank"], process["world_size"],
                process["group_rank"]) == (NODE, rank, rank, RANKS, 0)
    agent = next(s for s in any_run.streams if "ranks" not in s["meta"])
    assert processes[agent["pid"]]["rank"] == -1
    assert processes[agent["pid"]]["world_size"] == -1


def rank_rows(run):
    """steps.ranks of `stepscope report RUN --json`, by rank."""
    document = json.loads(run.cli_output("report", run.dir, "--json"))
    steps = document["steps"]
    assert steps["available"], steps
    # The node's own row pools both ranks' steps.
    assert [(r["node"], r["phase"], r["count"]) for r in steps["nodes"]] == [(NODE, "TRAIN", RANKS * STEPS_PER_RANK)]
    rows = {row["rank"]: row for row in steps["ranks"]}
    assert sorted(rows) == list(range(RANKS)), steps["ranks"]
    return rows


def test_the_report_shows_per_rank_step_times(any_run):
    rows = rank_rows(any_run)
    streams = any_run.rank_streams()
    for rank, row in rows.items():
        assert (row["node"], row["phase"], row["count"]) == (NODE, "TRAIN", STEPS_PER_RANK)
        assert (row["local_rank"], row["world_size"]) == (rank, RANKS)
        assert row["pid"] == streams[rank]["pid"] and row["pids"] == [streams[rank]["pid"]]
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"]
        assert row["backward_p50_ms"] + row["outside_backward_p50_ms"] > 0


def test_the_slowed_rank_works_outside_backward_while_the_others_wait_in_it(slowed_run):
    rows = rank_rows(slowed_run)
    slow, other = rows[SLOW_RANK], rows[1 - SLOW_RANK]
    # The sleep is outside backward on the slowed rank; the other rank waits for it in backward
    # (DDP's all-reduce). Both margins are many times what the tiny model's step takes.
    assert slow["outside_backward_p50_ms"] > 3 * other["outside_backward_p50_ms"], rows
    assert other["backward_p50_ms"] > 3 * slow["backward_p50_ms"], rows


def test_the_summary_shows_per_rank_step_times(any_run):
    text = any_run.cli_output("summary", any_run.dir)
    assert "Step time per rank (ms)" in text, text
    lines = text[text.index("Step time per rank (ms)"):].splitlines()
    streams = any_run.rank_streams()
    for rank in range(RANKS):
        row = next((line.split() for line in lines
                    if line.split()[:4] == [NODE, str(rank), str(streams[rank]["pid"]), "TRAIN"]), None)
        assert row is not None, text
        assert int(row[4]) == STEPS_PER_RANK, text
    # The end of `stepscope run` printed the same summary.
    assert "Step time per rank (ms)" in any_run.stdout + any_run.stderr


def test_straggler_names_the_slowed_rank(slowed_run):
    rule = slowed_run.rule("Straggler")
    assert rule["RuleParameters"] == f"threshold_pct:{STRAGGLER_THRESHOLD_PCT}\npatience:3"
    assert rule["RuleTriggered"] == 1, json.dumps(rule, indent=1)
    assert len(rule["findings"]) == 1, rule["findings"]
    finding = rule["findings"][0]
    slow_pid = slowed_run.rank_streams()[SLOW_RANK]["pid"]
    assert finding["id"] == f"Straggler/{NODE}/rank-{SLOW_RANK}/TRAIN"
    assert f"rank {SLOW_RANK} on {NODE} (pid {slow_pid})" in finding["title"]
    assert finding["evidence"], finding
    for evidence in finding["evidence"]:
        assert (evidence["node"], evidence["rank"], evidence["pid"]) == (NODE, SLOW_RANK, slow_pid)
        assert evidence["steps"], evidence
    ranks = rule["Details"][NODE]["ranks"]
    assert ranks[str(1 - SLOW_RANK)]["TRAIN"]["windows_slow"] == 0, ranks
    # The summary at the end of the run and the report carry it too.
    assert f"Straggler: rank {SLOW_RANK} on {NODE}" in slowed_run.stdout + slowed_run.stderr
    document = json.loads(slowed_run.cli_output("report", slowed_run.dir, "--json"))
    assert [f["id"] for f in document["findings"] if f["rule"] == "Straggler"] == [finding["id"]]


def test_straggler_is_quiet_when_no_rank_is_slowed(even_run):
    rule = even_run.rule("Straggler")
    assert rule["RuleParameters"] == f"threshold_pct:{STRAGGLER_THRESHOLD_PCT}\npatience:3"
    assert rule["RuleTriggered"] == 0, json.dumps(rule, indent=1)
    assert rule["findings"] == []
    # Both ranks were compared, and neither was slow.
    ranks = rule["Details"][NODE]["ranks"]
    assert sorted(ranks) == [str(rank) for rank in range(RANKS)], ranks
    for entry in ranks.values():
        assert entry["TRAIN"]["windows_compared"] >= 1
        assert entry["TRAIN"]["windows_slow"] == 0
