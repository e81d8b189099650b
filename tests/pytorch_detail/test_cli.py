"""`stepscope pyprof` and the detail windows in `stepscope info`."""

import json
import os
import re

from conftest import PYTHON, script

NUMBER = r"\d+\.\d{6}"


def pyprof_tables(stepscope, run_dir, top):
    result = stepscope("pyprof", run_dir, "--top", str(top))
    assert result.returncode == 0, result.stderr
    tables = result.stdout.split("\n\n")
    assert tables[-1] == ""
    return [text.splitlines() for text in tables[:-1]]


def test_pyprof_prints_one_table_per_step_and_timer(default_run, stepscope):
    tables = pyprof_tables(stepscope, default_run.dir, 3)
    pid = default_run.main_pid
    expected = [(9, "total_time"), (10, "cpu_time"), (11, "off_cpu_time")]
    assert len(tables) == len(expected)
    for lines, (step, timer) in zip(tables, expected):
        assert re.fullmatch(rf"python profile: node n, pid {pid}, window 2, TRAIN step {step}, cprofile, "
                            rf"timer {timer}, \d+\.\d{{3}} s, \d+ functions", lines[0]), lines[0]
        assert lines[1] == "        self s        cum s     calls  function"
        assert len(lines) == 2 + 3
        for row in lines[2:]:
            assert re.fullmatch(rf"  +{NUMBER} +{NUMBER} +\d+  \S.*", row), row
    # Every function, sorted by self time: --top 3 is its head. Which functions come first
    # depends on the machine's load; the 50 ms sleep inside train_step lasts at least 50 ms.
    everything = pyprof_tables(stepscope, default_run.dir, 100_000)
    for head, lines in zip(tables, everything):
        assert lines[2:5] == head[2:]
        self_s = [float(row.split()[0]) for row in lines[2:]]
        assert self_s == sorted(self_s, reverse=True)
    (sleep,) = [row for row in everything[0][2:] if row.endswith("  <built-in method time.sleep>")]
    assert re.fullmatch(rf" +{NUMBER} +{NUMBER} +1  <built-in method time.sleep>", sleep)
    assert float(sleep.split()[0]) >= 0.05


def test_pyprof_json_sorts_by_the_requested_time(default_run, stepscope):
    for sort, key in (("self", "self_s"), ("cumulative", "cumulative_s")):
        result = stepscope("pyprof", default_run.dir, "--top", "5", "--sort", sort, "--json")
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert (out["schema_version"], out["sort"]) == (1, sort)
        assert [(t["window"], t["steps"], t["timer"], t["profiler"]) for t in out["tables"]] == [
            (2, [9, 9], "total_time", "cprofile"), (2, [10, 10], "cpu_time", "cprofile"),
            (2, [11, 11], "off_cpu_time", "cprofile")]
        for table in out["tables"]:
            values = [f[key] for f in table["functions"]]
            assert len(values) == 5 and values == sorted(values, reverse=True)
    # The total_time profile of step 9 in full: train_step holds the 50 ms sleep, so its
    # cumulative time is at least the sleep's. (Which functions make the top 5 depends on load.)
    result = stepscope("pyprof", default_run.dir, "--top", "100000", "--sort", "cumulative", "--json")
    assert result.returncode == 0, result.stderr
    total = json.loads(result.stdout)["tables"][0]["functions"]
    (train_step,) = [f for f in total if f["name"] == "train_step"]
    (sleep,) = [f for f in total if f["name"] == "<built-in method time.sleep>"]
    assert (train_step["file"], train_step["calls"]) == (script("train_loop.py"), 1)
    assert train_step["cumulative_s"] >= sleep["cumulative_s"] >= 0.05


def test_pyprof_without_python_windows_fails_with_one_line(cli, stepscope, tmp_path):
    result = stepscope("run", "--out", tmp_path, "--job", "plain", "--node", "n", "--no-detail", "--", PYTHON,
                       "-c", "pass")
    assert result.returncode == 0, result.stderr
    result = stepscope("pyprof", tmp_path / "plain")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"stepscope pyprof: '{tmp_path / 'plain'}' holds no Python profile; python detail "
                             "windows write <node>/detail/python-<pid>-<window>.json.zst (default: TRAIN steps "
                             "9-11, see docs/detail-windows.md)\n")
    result = stepscope("pyprof", tmp_path / "plain", "--sort", "total")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1


def test_pyprof_names_a_corrupt_profile_instead_of_saying_none_was_captured(cli, stepscope, tmp_path):
    result = stepscope("run", "--out", tmp_path, "--job", "plain", "--node", "n", "--no-detail", "--", PYTHON,
                       "-c", "pass")
    assert result.returncode == 0, result.stderr
    detail = tmp_path / "plain" / "n" / "detail"
    detail.mkdir()
    (detail / "python-4242-0.json.zst").write_bytes(b"not zstd at all")
    result = stepscope("pyprof", tmp_path / "plain")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"stepscope pyprof: Python profile 'n/detail/python-4242-0.json.zst' is corrupt and was skipped: "
        f"'{detail / 'python-4242-0.json.zst'}' is not a zstd file: Unknown frame descriptor",
        f"stepscope pyprof: '{tmp_path / 'plain'}' holds no readable Python profile; the 1 above could not be read "
        "(copy the run again, or capture new python windows)"]
    # The report says so too, instead of skipping the window without a word.
    result = stepscope("report", tmp_path / "plain", "--out", tmp_path / "report.html")
    assert result.returncode == 0, result.stderr
    assert (f"stepscope report: Python profile 'n/detail/python-4242-0.json.zst' is corrupt and was skipped: "
            f"'{detail / 'python-4242-0.json.zst'}' is not a zstd file: Unknown frame descriptor") in result.stderr.splitlines()


def test_info_json_lists_every_window_file(default_run, stepscope):
    result = stepscope("info", default_run.dir, "--json")
    assert result.returncode == 0, result.stderr
    windows = json.loads(result.stdout)["detail_windows"]
    pid = default_run.main_pid
    listed = [{k: w[k] for k in ("node", "kind", "pid", "window", "steps", "step_phase", "complete", "file")}
              for w in windows]
    assert listed == [
        {"node": "n", "kind": "dataloader", "pid": pid, "window": 1, "steps": [7, 7], "step_phase": "TRAIN",
         "complete": True, "file": f"n/detail/dataloader-{pid}-1.json.zst"},
        {"node": "n", "kind": "operators", "pid": pid, "window": 0, "steps": [5, 5], "step_phase": "TRAIN",
         "complete": True, "file": f"n/detail/operators-{pid}-0.json.zst"},
        {"node": "n", "kind": "python", "pid": pid, "window": 2, "steps": [9, 11], "step_phase": "TRAIN",
         "complete": True, "file": f"n/detail/python-{pid}-2.json.zst"},
    ]
    for window in windows:
        doc = default_run.doc(window["kind"])
        assert window["bytes"] == os.path.getsize(default_run.dir / window["file"])
        assert (window["start_ns"], window["end_ns"]) == (doc["start_ns"], doc["end_ns"])
    assert windows[0]["summary"] == {"batches": 1, "workers": 1}
    assert windows[1]["summary"] == {"profiler": default_run.doc("operators")["profiler"],
                                     "events": default_run.doc("operators")["events_total"], "events_capped": False,
                                     "device_events": 0, "operators": len(default_run.doc("operators")["operators"])}
    assert windows[2]["summary"] == {"profiler": "cprofile", "profiles": 3,
                                     "timers": ["total_time", "cpu_time", "off_cpu_time"]}


def test_info_text_has_a_line_per_window(default_run, stepscope):
    result = stepscope("info", default_run.dir)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("detail ")]
    pid = default_run.main_pid
    size = r"\d+(\.\d)? (B|KiB|MiB)"
    patterns = [rf"detail     dataloader pid {pid} window 1, TRAIN steps 7-7, \d+\.\d{{3}} s, {size}  "
                rf"n/detail/dataloader-{pid}-1\.json\.zst",
                rf"detail     operators pid {pid} window 0, TRAIN steps 5-5, \d+\.\d{{3}} s, {size}  "
                rf"n/detail/operators-{pid}-0\.json\.zst",
                rf"detail     python pid {pid} window 2, TRAIN steps 9-11, \d+\.\d{{3}} s, {size}  "
                rf"n/detail/python-{pid}-2\.json\.zst"]
    assert len(lines) == 3
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), line


def test_info_lists_a_damaged_file_with_its_error(default_run, stepscope, tmp_path):
    import shutil
    copy = tmp_path / "copy"
    shutil.copytree(default_run.dir, copy)
    damaged = copy / "n" / "detail" / f"python-{default_run.main_pid}-2.json.zst"
    damaged.write_bytes(damaged.read_bytes()[:100])
    result = stepscope("info", copy, "--json")
    assert result.returncode == 0, result.stderr
    (entry,) = [w for w in json.loads(result.stdout)["detail_windows"] if w["kind"] == "python"]
    assert entry["error"] == f"'{damaged}' ends inside its zstd frame (truncated)"
    assert entry["steps"] is None and entry["window"] == 2 and entry["bytes"] == 100


def test_a_detail_directory_that_is_a_link_is_refused_and_reported(cli, stepscope, tmp_path):
    # Regression: `<node>/detail` as a symbolic link was followed, so a run copied from elsewhere
    # could make stepscope read any directory. It is refused and reported like a bad file.
    from stepscope import _core
    from stepscope.torch import _detail_store

    result = stepscope("run", "--out", tmp_path, "--job", "plain", "--node", "n", "--no-detail", "--", PYTHON,
                       "-c", "pass")
    assert result.returncode == 0, result.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    profile = {"format_version": 1, "kind": "python", "pid": 4242, "window": {"index": 0}, "profiler": "cprofile",
               "profiles": [{"timer": "total_time", "functions": [{"name": "f", "calls": 1, "self_s": 0.1}]}]}
    _core.write_zstd_file(str(elsewhere / "python-4242-0.json.zst"), json.dumps(profile).encode())
    detail = tmp_path / "plain" / "n" / "detail"
    detail.symlink_to(elsewhere, target_is_directory=True)
    refused = (f"'{detail}' is a symbolic link, which stepscope does not follow (a run is read only through its own "
               "files); its detail windows are not read: replace the link with the directory itself")

    result = stepscope("pyprof", tmp_path / "plain")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"stepscope pyprof: data loss: {refused} [detail_directory_unreadable]",
        f"stepscope pyprof: '{tmp_path / 'plain'}' holds no Python profile; python detail windows write "
        "<node>/detail/python-<pid>-<window>.json.zst (default: TRAIN steps 9-11, see docs/detail-windows.md)"]

    result = stepscope("info", tmp_path / "plain", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert [{k: w[k] for k in ("node", "kind", "file", "steps", "error")} for w in info["detail_windows"]] == [
        {"node": "n", "kind": "", "file": "n/detail", "steps": None, "error": refused}]
    assert [p["sentence"] for p in info["problems"] if p["name"] == "detail_directory_unreadable"] == [refused]

    try:
        _detail_store.list_windows(tmp_path / "plain" / "n")
        raise AssertionError("list_windows followed the link")
    except ValueError as error:
        assert str(error) == refused


def test_the_python_writers_files_are_the_ones_the_readers_list(tmp_path, monkeypatch):
    # The writer (_detail_store) and the C++ reader (src/analysis/detail_window_files.h) agree on
    # names: whatever the writer writes is listed, and nothing else that lies beside it.
    from stepscope import _core, _session
    from stepscope.torch import _detail_store

    node = tmp_path / "n"
    monkeypatch.setattr(_session, "_node_dir", None, raising=False)
    monkeypatch.setenv("STEPSCOPE_NODE_DIR", str(node))
    written = [_detail_store.write_window({"kind": kind, "pid": 4242, "window": {"index": index}})[0]
               for kind, index in (("python", 10), ("operators", 0), ("python", 2), ("dataloader", 1))]
    for name in ("python-4242-3.json.zst.tmp-4242", "operators-4242-4.json.zst.tmp.4242",
                 ".dataloader-4242-1-4300.jsonl", "dataloader-4242.active",
                 _detail_store.trace_file_name("operators", 4242, 0)):
        (node / "detail" / name).write_bytes(b"not a window")
    listed = _core.detail_window_files(str(node))
    assert [(e["kind"], e["pid"], e["window"], e["file"]) for e in listed] == [
        ("dataloader", 4242, 1, "n/detail/dataloader-4242-1.json.zst"),
        ("operators", 4242, 0, "n/detail/operators-4242-0.json.zst"),
        ("python", 4242, 2, "n/detail/python-4242-2.json.zst"),
        ("python", 4242, 10, "n/detail/python-4242-10.json.zst")]
    assert sorted(e["path"] for e in listed) == sorted(written)
    assert all(e["bytes"] == os.path.getsize(e["path"]) for e in listed)
    documents = _detail_store.list_windows(node)
    assert [(d["kind"], d["window"]["index"], d["format_version"]) for d in documents] == [
        ("dataloader", 1, 1), ("operators", 0, 1), ("python", 2, 1), ("python", 10, 1)]
    assert _detail_store.FORMAT_VERSION == _core.DETAIL_FORMAT_VERSION == 1
    assert _core.detail_window_files(str(tmp_path / "no-such-node")) == []
