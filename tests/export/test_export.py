"""`stepscope export` on a real recorded run and an imported Kineto trace: the Chrome trace is
well-formed, nests per track and pairs its flows; SQLite and CSV hold what `stepscope info`
counts; errors are one line and leave no file behind."""
import csv
import json
import os
import subprocess
import sys
from decimal import Decimal

import pytest


def sqlite(database, sql):
    """The rows of `sql` from the sqlite3 command, as lists of strings."""
    result = subprocess.run(["sqlite3", "-batch", "-separator", "\t", str(database), sql],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [line.split("\t") for line in result.stdout.splitlines()]


def sqlite_int(database, sql):
    return int(sqlite(database, sql)[0][0])


def load_trace(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)  # exact: ts and dur carry nanoseconds


def ns(value):
    """µs with three decimals (a Decimal) -> integer ns."""
    scaled = Decimal(value) * 1000
    assert scaled == scaled.to_integral_value(), value
    return int(scaled)


def assert_slices_nest(trace):
    """Per (pid, tid), sorted by (start, -end), every slice lies inside the open one or after it."""
    tracks = {}
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            start = ns(event["ts"])
            tracks.setdefault((event["pid"], event["tid"]), []).append((start, -(start + ns(event["dur"]))))
    for key, slices in tracks.items():
        open_ends = []
        for start, negative_end in sorted(slices):
            end = -negative_end
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], f"track {key}: slice [{start}, {end}] overlaps its sibling"
            open_ends.append(end)
    return tracks


def assert_flows_paired(trace):
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    finishes = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert len(starts) == sum(1 for e in trace["traceEvents"] if e["ph"] == "s"), "flow ids repeat"
    assert set(starts) == set(finishes)
    assert all(e.get("bp") == "e" for e in finishes.values())
    return starts, finishes


# --- a recorded run -------------------------------------------------------------------------

def test_chrome_trace_of_a_recorded_run(stepscope, recorded_run, tmp_path):
    run_dir, info = recorded_run
    out = tmp_path / "tiny.trace.json"
    result = stepscope("export", run_dir, "--format", "chrome", "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == str(out)
    assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]

    trace = load_trace(out)
    assert next(iter(trace)) == "displayTimeUnit"
    events = trace["traceEvents"]
    counts = info["counts"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == counts["spans"] + sum(counts["steps"].values())
    assert sum(1 for e in events if e["ph"] == "i") == counts["instants"]
    # Framework counters and system samples are both C events.
    assert sum(1 for e in events if e["ph"] == "C") == counts["counters"] + counts["system_samples"]
    assert sum(1 for e in slices if e["name"] == "matmul") == 6
    steps = sorted(e["args"]["step"] for e in slices if e["name"] == "Step:ModeKeys.TRAIN")
    assert steps == list(range(6))

    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    # Every process is named after its node, pid and program; system metrics have their own.
    training = [name for (pid, tid), name in names.items() if tid == 0 and "· pid " in name]
    assert len(training) == 1 and training[0].startswith("n1 · pid ") and "python" in training[0], names
    assert "n1 · system metrics" in names.values()
    tracks = assert_slices_nest(trace)
    # The worker thread's prefetch spans are on their own thread, not an overlap track.
    prefetch_tracks = {(e["pid"], e["tid"]) for e in slices if e["name"] == "prefetch"}
    matmul_tracks = {(e["pid"], e["tid"]) for e in slices if e["name"] == "matmul"}
    assert len(prefetch_tracks) == 1 and prefetch_tracks != matmul_tracks
    assert all(key in names for key in tracks)
    assert all("overlap" not in names[key] for key in prefetch_tracks | matmul_tracks)
    assert {names[key] for key in matmul_tracks} == {"main thread"}
    assert all(names[key].startswith("thread ") for key in prefetch_tracks)
    # Each step links to what ran in it on the other thread: the prefetch spans it overlapped.
    starts, finishes = assert_flows_paired(trace)
    step_slices = {(e["pid"], e["tid"], e["ts"]) for e in slices if e["name"] == "Step:ModeKeys.TRAIN"}
    step_flow_ids = [i for i, e in starts.items() if e["cat"] == "step_contents"]
    assert step_flow_ids, "no step -> contents flows"
    for flow_id in step_flow_ids:
        assert (starts[flow_id]["pid"], starts[flow_id]["tid"], starts[flow_id]["ts"]) in step_slices
    assert {(finishes[i]["pid"], finishes[i]["tid"]) for i in step_flow_ids} <= prefetch_tracks
    assert "step flows" in result.stdout
    cpu_counters = {e["name"] for e in events if e["ph"] == "C" and e["name"].startswith("cpu/")}
    assert "cpu/cpu/CPUUtilization" in cpu_counters or any(n.startswith("cpu/cpu0/") for n in cpu_counters), cpu_counters


def test_sqlite_counts_equal_what_info_reports(stepscope, recorded_run, tmp_path):
    run_dir, info = recorded_run
    db = tmp_path / "tiny.sqlite"
    result = stepscope("export", run_dir, "--format", "sqlite", "-o", db)
    assert result.returncode == 0, result.stderr
    counts = info["counts"]
    assert sqlite_int(db, "SELECT count(*) FROM spans WHERE kind = 'span' AND step IS NULL") == counts["spans"]
    assert sqlite_int(db, "SELECT count(*) FROM spans WHERE kind = 'instant'") == counts["instants"]
    assert sqlite_int(db, "SELECT count(*) FROM spans WHERE kind = 'counter'") == counts["counters"]
    assert sqlite_int(db, "SELECT count(*) FROM steps") == sum(counts["steps"].values())
    for phase, expected in counts["steps"].items():
        assert sqlite_int(db, f"SELECT count(*) FROM steps WHERE phase = '{phase}'") == expected
    assert sqlite_int(db, "SELECT count(*) FROM samples") == counts["system_samples"]
    assert sqlite_int(db, "SELECT sum(samples) FROM metrics") == counts["system_samples"]
    assert sqlite(db, "SELECT group_concat(step, ',') FROM (SELECT step FROM steps WHERE phase = 'TRAIN' ORDER BY step)") \
        == [["0,1,2,3,4,5"]]
    assert sqlite(db, "SELECT job, source, findings_origin FROM runs") == [["tiny", "stepscope", "rules.json"]]
    assert sqlite(db, "SELECT name FROM nodes") == [["n1"]]
    assert sqlite_int(db, "SELECT count(*) FROM spans_named WHERE name = 'matmul' AND phase != ''") == 6

    with open(run_dir / "rules" / "rules.json", encoding="utf-8") as f:
        rules = json.load(f)
    assert sqlite_int(db, "SELECT count(*) FROM rules") == len(rules["rules"])
    assert sqlite_int(db, "SELECT count(*) FROM findings") == sum(len(r["findings"]) for r in rules["rules"])


def test_csv_tables_match_the_database(stepscope, recorded_run, tmp_path):
    run_dir, info = recorded_run
    out = tmp_path / "csv"
    result = stepscope("export", run_dir, "--format", "csv", "-o", out)
    assert result.returncode == 0, result.stderr
    expected_tables = {"runs", "nodes", "processes", "threads", "strings", "spans", "steps", "metrics",
                       "samples", "flows", "rules", "findings"}
    assert {name[:-4] for name in os.listdir(out)} == expected_tables

    def rows(table):
        with open(out / f"{table}.csv", newline="", encoding="utf-8") as f:
            return list(csv.reader(f))

    steps = rows("steps")
    assert steps[0] == ["step_id", "span_id", "node_id", "phase", "step", "start_ns", "end_ns", "duration_ns"]
    assert len(steps) - 1 == sum(info["counts"]["steps"].values())
    assert len(rows("samples")) - 1 == info["counts"]["system_samples"]
    spans = rows("spans")
    kind = spans[0].index("kind")
    assert sum(1 for row in spans[1:] if row[kind] == "instant") == info["counts"]["instants"]
    for row in steps[1:]:
        assert int(row[6]) - int(row[5]) == int(row[7])


def test_default_paths_are_under_the_run(stepscope, recorded_run):
    run_dir, _ = recorded_run
    for fmt, path in (("chrome", "export/tiny.trace.json"), ("sqlite", "export/tiny.sqlite"), ("csv", "export/csv")):
        result = stepscope("export", run_dir, "--format", fmt)
        assert result.returncode == 0, result.stderr
        assert os.path.exists(run_dir / path), path
        assert result.stdout.splitlines()[0] == str(run_dir / path)
    assert os.path.isfile(run_dir / "export" / "csv" / "spans.csv")


def test_a_step_range_exports_those_steps_and_what_ran_during_them(stepscope, recorded_run, tmp_path):
    run_dir, _ = recorded_run
    result = stepscope("export", run_dir, "--format", "chrome", "--steps", "2:3")
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()[0]
    assert out.endswith(".steps-2-3.trace.json"), out  # the slice never replaces the whole export
    assert "TRAIN steps 2 to 3:" in result.stdout
    trace = load_trace(out)
    assert trace["otherData"]["range"] == "TRAIN steps 2 to 3"
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    steps = sorted(e["args"]["step"] for e in slices if e["name"] == "Step:ModeKeys.TRAIN")
    assert steps == [2, 3]
    assert sum(1 for e in slices if e["name"] == "matmul") == 2
    origin = trace["otherData"]["time_origin_unix_ns"]
    start = trace["otherData"]["range_start_unix_ns"] - origin
    end = trace["otherData"]["range_end_unix_ns"] - origin
    for event in slices:  # whole events, each overlapping the range
        assert ns(event["ts"]) <= end and ns(event["ts"]) + ns(event["dur"]) >= start, event
    assert_slices_nest(trace)
    assert_flows_paired(trace)

    timed = stepscope("export", run_dir, "--format", "chrome", "--from", "0s", "--to", "1s", "-o", tmp_path / "t.json")
    assert timed.returncode == 0, timed.stderr
    assert "from 0s to 1s:" in timed.stdout


@pytest.mark.parametrize("args, message", [
    (["--format", "chrome", "--steps", "900:901"], "no TRAIN steps numbered 900 to 901; the run's TRAIN steps are numbered 0 to 5"),
    (["--format", "chrome", "--steps", "3"], "is not A:B"),
    (["--format", "chrome", "--from", "tomorrow"], "--from 'tomorrow' is not a time since the run's start"),
    (["--format", "chrome", "--from", "5s", "--to", "1s"], "swap them"),
    (["--format", "sqlite", "--steps", "1:2"], "sqlite and csv export the whole run"),
])
def test_a_bad_range_is_one_line_and_writes_nothing(stepscope, recorded_run, tmp_path, args, message):
    run_dir, _ = recorded_run
    out = tmp_path / "slice.out"
    result = stepscope("export", run_dir, *args, "-o", out)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("stepscope export: ") and message in lines[0], result.stderr
    assert not out.exists()


# --- an imported Kineto trace with flows ---------------------------------------------------------

def test_kineto_flows_are_paired_and_gpu_streams_are_threads(stepscope, kineto_run, tmp_path):
    out = tmp_path / "alexnet.trace.json"
    result = stepscope("export", kineto_run, "--format", "chrome", "-o", out)
    assert result.returncode == 0, result.stderr
    trace = load_trace(out)
    assert_slices_nest(trace)
    starts, finishes = assert_flows_paired(trace)
    assert len(starts) > 0
    thread_names = [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    assert any(name.startswith("stream ") for name in thread_names), thread_names
    process_names = [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
    assert process_names and all(name.startswith("rank-0 · ") for name in process_names), process_names
    assert "rank-0 · GPU 0" in process_names
    assert not [name for name in thread_names + process_names if "-" in name.split(" ")[-1]], \
        "a track is named by a synthetic negative id instead of its text"
    # GPU work sits in the GPU's process, host work in host processes.
    gpu_pid = next(e["pid"] for e in trace["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "rank-0 · GPU 0")
    assert {e["cat"] for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == gpu_pid} <= \
        {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
    # Each flow end lies on a track and at a time where a slice starts (its binding slice).
    slice_starts = {(e["pid"], e["tid"], e["ts"]) for e in trace["traceEvents"] if e["ph"] == "X"}
    for event in list(starts.values()) + list(finishes.values()):
        assert (event["pid"], event["tid"], event["ts"]) in slice_starts, event

    db = tmp_path / "alexnet.sqlite"
    result = stepscope("export", kineto_run, "--format", "sqlite", "-o", db)
    assert result.returncode == 0, result.stderr
    assert sqlite_int(db, "SELECT count(*) FROM flows f JOIN spans a ON a.span_id = f.from_span_id "
                          "JOIN spans b ON b.span_id = f.to_span_id WHERE a.kind = 'span' AND b.kind = 'span'") \
        == len(starts)
    assert sqlite(db, "SELECT source, findings_origin FROM runs") == [["kineto", "evaluated"]]
    assert sqlite_int(db, "SELECT count(*) FROM threads WHERE device IS NOT NULL") > 0


# --- errors --------------------------------------------------------------------------------------

def test_a_missing_run_is_one_line_naming_it(stepscope, tmp_path):
    missing = tmp_path / "no-such-run"
    result = stepscope("export", missing, "--format", "chrome")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("stepscope export: ") and str(missing) in result.stderr


def test_an_unwritable_output_leaves_nothing(stepscope, recorded_run, tmp_path):
    run_dir, _ = recorded_run
    blocker = tmp_path / "a-file"  # a directory cannot be made under a file, even by root
    blocker.write_text("keep")
    for fmt in ("chrome", "sqlite", "csv"):
        target = blocker / ("out" if fmt == "csv" else f"out.{fmt}")
        result = stepscope("export", run_dir, "--format", fmt, "-o", target)
        assert result.returncode == 1, (fmt, result.stdout)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert str(blocker) in result.stderr and "-o" in result.stderr, result.stderr
        assert sorted(os.listdir(tmp_path)) == ["a-file"]
        assert blocker.read_text() == "keep"


def test_an_existing_output_is_replaced_whole(stepscope, recorded_run, tmp_path):
    run_dir, info = recorded_run
    db = tmp_path / "old.sqlite"
    db.write_text("not a database")
    result = stepscope("export", run_dir, "--format", "sqlite", "-o", db)
    assert result.returncode == 0, result.stderr
    assert sqlite_int(db, "SELECT count(*) FROM samples") == info["counts"]["system_samples"]
    assert sorted(os.listdir(tmp_path)) == ["old.sqlite"]


def test_an_unknown_format_is_a_usage_error(stepscope, recorded_run):
    run_dir, _ = recorded_run
    result = stepscope("export", run_dir, "--format", "parquet")
    assert result.returncode == 2
    assert "parquet" in result.stderr or "format" in result.stderr


# Span names a spreadsheet would run as formulas (OWASP's CSV injection), and two that are data.
HOSTILE_NAMES = ['=HYPERLINK("http://example.invalid","x")', "+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3",
                 "\tTAB=1", "=a,b\r\nnext", "-12", "+3.5e-2"]


def test_csv_of_hostile_names_parses_and_never_starts_a_formula(stepscope, tmp_path):
    script = "import stepscope\nfor name in %r:\n    with stepscope.annotate(name):\n        pass\n" % HOSTILE_NAMES
    result = stepscope("run", "--out", tmp_path, "--job", "hostile", "--node", "n1", "--no-detail", "--",
                       sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "csv"
    result = stepscope("export", tmp_path / "hostile", "--format", "csv", "-o", out)
    assert result.returncode == 0, result.stderr
    for table in os.listdir(out):
        # Strict UTF-8 and RFC 4180 as Python reads them; no cell may start a formula.
        with open(out / table, newline="", encoding="utf-8", errors="strict") as f:
            rows = list(csv.reader(f, strict=True))
        assert rows, table
        for row in rows:
            for cell in row:
                if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                    assert cell in ("-12", "+3.5e-2"), (table, cell)
    with open(out / "strings.csv", newline="", encoding="utf-8") as f:
        names = {row[1] for row in csv.reader(f)}
    for name in HOSTILE_NAMES:
        assert (name if name in ("-12", "+3.5e-2") else "'" + name) in names, name
