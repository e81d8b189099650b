"""The read-back helpers of stepscope._core used by the tests themselves."""

import pytest

from stepscope import _core


def test_read_run_and_compact_name_a_missing_directory(tmp_path):
    missing = str(tmp_path / "no-such-run")
    with pytest.raises(FileNotFoundError, match="no-such-run"):
        _core.read_run(missing)
    with pytest.raises(FileNotFoundError, match="no-such-run"):
        _core.compact(missing)


def test_compact_folds_rings_into_logs_and_keeps_every_event(record):
    result = record("""
        import os
        import stepscope
        for _ in range(1000):
            stepscope.mark("m")
        os._exit(0)  # like a DataLoader worker: no atexit, the events are only in the ring
    """)
    node_dir = result.job_dir / "node"
    assert any(path.suffix == ".ring" for path in node_dir.iterdir())
    assert len(_core.read_run(str(result.job_dir))["events"]) == 1000  # readable before compacting
    assert _core.compact(str(result.job_dir)) == 1
    assert not any(path.suffix == ".ring" for path in node_dir.iterdir())
    run = _core.read_run(str(node_dir))
    assert len(run["events"]) == 1000
    assert run["problems"] == []
    assert [node["name"] for node in run["nodes"]] == ["node"]
    event = run["events"][0]
    assert set(event) == {"kind", "name", "start_ns", "end_ns", "value", "step", "phase", "unfinished", "node",
                          "stream", "pid", "tid", "args"}
    assert (event["kind"], event["name"], event["phase"], event["args"]) == ("instant", "m", None, {})
