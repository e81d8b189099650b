"""`stepscope serve` end to end: the job list, loading, the report document, the security model,
server-sent events while a real job runs, and ctl through the API (docs/dashboard.md)."""
import json
import shutil
import socket
import subprocess
import time

from conftest import HOSTILE_JOB
from serve_helpers import read_events, request, run_path, wait_until

# A job that keeps stepping until the test creates `stop`, and applies control files at its steps
# as the detail-window engine does (tests/ctl does the same), printing what it applied.
LIVE_JOB = """
import os, time
import stepscope
from stepscope import _config
watcher = _config.ControlWatcher()
step = 0
while step < 20 or not os.path.exists({stop!r}):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("Forward"):
            time.sleep(0.02)
    for control in watcher.poll():
        if "detail" in control:
            _config.record_applied(control, {{"detail": control["detail"]}})
        print("control", control["sequence"], sorted(control), flush=True)
    step += 1
"""


def ids(answer):
    return [run["id"] for run in answer.json()["runs"]]


def without_generated_at(document):
    return {k: v for k, v in document.items() if k not in ("generated_at_ns", "live")}


def test_lists_runs_with_their_problems_and_filters_them(serve, runs_root):
    server = serve(runs_root)
    answer = request(server.port, "GET", "/api/runs")
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("application/json")
    listing = answer.json()
    assert listing["root"] == str(runs_root)
    assert isinstance(listing["listed_ms"], (int, float))
    runs = {run["id"]: run for run in listing["runs"]}
    assert set(runs) == {"finished", HOSTILE_JOB, "corrupt", "holiday-photos"}
    finished = runs["finished"]
    assert finished["status"] == "completed"
    assert finished["nodes"] == ["algo-1"]
    assert finished["path"] == "finished"
    assert finished["loaded"] is False
    assert finished["problems"] == []
    assert finished["end_ns"] > finished["start_ns"] > 0
    assert finished["duration_s"] > 0
    for bad in ("corrupt", "holiday-photos"):
        assert runs[bad]["status"] == "unknown"
        assert runs[bad]["problems"], bad
        assert {"name", "severity", "sentence"} <= set(runs[bad]["problems"][0])

    assert ids(request(server.port, "GET", "/api/runs?q=FINI")) == ["finished"]
    assert set(ids(request(server.port, "GET", "/api/runs?status=completed"))) == {"finished", HOSTILE_JOB}
    assert set(ids(request(server.port, "GET", "/api/runs?status=unknown"))) == {"corrupt", "holiday-photos"}
    assert ids(request(server.port, "GET", "/api/runs?status=running")) == []
    after_all = finished["end_ns"] + 3600 * 10**9
    assert ids(request(server.port, "GET", f"/api/runs?from_ns={after_all}")) == []
    assert "finished" in ids(request(server.port, "GET", f"/api/runs?from_ns={finished['start_ns']}&to_ns={after_all}"))
    bad = request(server.port, "GET", "/api/runs?status=sleeping")
    assert bad.status == 400 and "status" in bad.json()["error"]
    assert request(server.port, "GET", "/api/runs?from_ns=yesterday").status == 400


def test_load_and_unload_a_run(serve, runs_root):
    server = serve(runs_root)
    loaded = request(server.port, "POST", run_path("finished", "/load"))
    assert loaded.status == 200, loaded
    assert loaded.json() == {"id": "finished", "loaded": True}
    listed = {run["id"]: run for run in request(server.port, "GET", "/api/runs").json()["runs"]}
    assert listed["finished"]["loaded"] is True
    assert listed[HOSTILE_JOB]["loaded"] is False
    unloaded = request(server.port, "POST", run_path("finished", "/unload"))
    assert unloaded.json() == {"id": "finished", "loaded": False}
    assert not any(run["loaded"] for run in request(server.port, "GET", "/api/runs").json()["runs"])
    assert request(server.port, "GET", run_path("finished", "/load")).status == 404  # POST only


def test_report_is_the_document_of_stepscope_report_json(serve, runs_root, stepscope):
    server = serve(runs_root)
    answer = request(server.port, "GET", run_path("finished", "/report"))
    assert answer.status == 200, answer
    served = answer.json()
    assert served["live"]["following"] is False
    assert served["live"]["complete_until_ns"] > 0
    cli = stepscope("report", "--json", runs_root / "finished")
    assert cli.returncode == 0, cli.stderr
    assert without_generated_at(served) == without_generated_at(json.loads(cli.stdout))
    # Loaded on demand, and the views of the Nodes page answer from the same model.
    assert {run["id"]: run["loaded"] for run in request(server.port, "GET", "/api/runs").json()["runs"]}["finished"]
    steps = request(server.port, "GET", run_path("finished", "/steps?last=5")).json()["steps"]
    assert [step["step"] for step in steps] == list(range(7, 12))
    parts = {part["name"]: part["ms"] for part in steps[-1]["parts"]}
    assert set(parts) == {"forward", "backward", "optimizer", "data wait", "other"}
    assert parts["forward"] > 0 and parts["backward"] > 0
    series = request(server.port, "GET", run_path("finished", "/series?keys=cpu/total/util_pct,memory/*&points=3")).json()
    assert "cpu/total/util_pct" in series["keys"]
    assert {s["key"] for s in series["series"]} >= {"cpu/total/util_pct", "memory/used_pct"}
    for one in series["series"]:
        assert one["node"] == "algo-1"
        assert 1 <= len(one["t_ns"]) <= 3
        assert len(one["min"]) == len(one["max"]) == len(one["mean"]) == len(one["t_ns"])
    assert request(server.port, "GET", run_path("finished", "/series?points=many")).status == 400


def test_compare_is_the_document_of_stepscope_compare_json(serve, runs_root, stepscope):
    server = serve(runs_root)
    answer = request(server.port, "GET", "/api/compare?a=finished&b=finished")
    assert answer.status == 200, answer
    served = answer.json()
    assert served["kind"] == "compare"
    cli = stepscope("compare", runs_root / "finished", runs_root / "finished", "--json")
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    # The same document but for where each run was named from (the server names the directory).
    for document in (served, expected):
        document.pop("generated_at_ns", None)
        for run in document["runs"]:
            run.pop("path", None)
    assert served == expected
    assert request(server.port, "GET", "/api/compare?a=finished").status == 400
    assert request(server.port, "GET", "/api/compare?a=finished&b=..%2Ffinished").status == 404


def test_timeline_answers_a_viewport_and_zooms_to_a_step(serve, runs_root):
    server = serve(runs_root)
    whole = request(server.port, "GET", run_path("finished", "/timeline?width_px=800"))
    assert whole.status == 200, whole
    answer = whole.json()
    assert answer["width_px"] == 800 and answer["to_ns"] > answer["from_ns"]
    assert 0 < len(answer["slices"]) <= 50_000
    assert "Forward" in answer["names"]
    track_ids = {track["id"] for track in answer["tracks"]}
    for track, depth, start, duration, name, count in answer["slices"]:
        assert track in track_ids and depth >= 0 and duration >= 0 and count >= 1
        assert 0 <= name < len(answer["names"])
    step = request(server.port, "GET", run_path("finished", "/timeline?step=5&width_px=400")).json()
    assert step["step"]["number"] == 5
    assert answer["from_ns"] <= step["from_ns"] < step["to_ns"] <= answer["to_ns"]
    missing = request(server.port, "GET", run_path("finished", "/timeline?step=999"))
    assert missing.status == 404 and "0 to 11" in missing.json()["error"]
    assert request(server.port, "GET", run_path("finished", "/timeline?width_px=0")).status == 400


def test_a_non_loopback_bind_requires_the_token(serve, runs_root):
    server = serve(runs_root, "--host", "0.0.0.0")
    assert server.token and f"?token={server.token}" in server.url
    refused = request(server.port, "GET", "/api/runs")
    assert refused.status == 401
    assert "token" in refused.json()["error"]
    assert request(server.port, "GET", "/").status == 401
    assert request(server.port, "GET", "/assets/dashboard.js").status == 401
    assert request(server.port, "GET", "/api/runs", {"Authorization": "Bearer wrong-token-0123456789"}).status == 401
    assert request(server.port, "GET", "/api/runs", server.auth).status == 200
    assert request(server.port, "POST", run_path("finished", "/load")).status == 401
    # The printed URL: the page sets an HttpOnly, SameSite=Strict cookie and drops the token from
    # the address; the cookie then opens everything.
    opened = request(server.port, "GET", f"/?token={server.token}")
    assert opened.status == 303 and opened.headers["location"] == "/"
    cookie = opened.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jar = {"Cookie": cookie.split(";")[0]}
    page = request(server.port, "GET", "/", jar)
    assert page.status == 200 and 'src="/assets/dashboard.js"' in page.body
    assert request(server.port, "GET", "/assets/dashboard.js", jar).status == 200
    assert request(server.port, "GET", "/assets/dashboard.css", jar).status == 200
    assert request(server.port, "POST", run_path("finished", "/load"), jar).status == 200


def test_a_given_token_is_checked_on_loopback_too(serve, runs_root):
    server = serve(runs_root, "--token", "a-token-of-my-own-1234")
    assert server.token == "a-token-of-my-own-1234"
    assert request(server.port, "GET", "/api/runs").status == 401
    assert request(server.port, "GET", "/api/runs", server.auth).status == 200


def test_paths_and_unknown_ids_are_404(serve, runs_root):
    server = serve(runs_root)
    for path in ("/api/runs/../report", "/api/runs/%2e%2e/report", "/api/runs/..%2F..%2Fetc/report",
                 "/api/runs/finished%2Falgo-1/report", "/api/runs/nope/report", "/api/runs/nope/steps",
                 "/api/runs/%2Fetc%2Fpasswd/series", "/api/../../etc/passwd", "/assets/../../etc/passwd"):
        answer = request(server.port, "GET", path)
        assert answer.status == 404, (path, answer)
        assert "error" in answer.json()
    for action in ("load", "unload", "ctl"):
        assert request(server.port, "POST", f"/api/runs/%2e%2e/{action}", body={}).status == 404
    # A loopback server answers only requests addressed to a loopback name (DNS rebinding).
    assert request(server.port, "GET", "/api/runs", {"Host": f"evil.example:{server.port}"}).status == 403


def test_a_post_from_another_origin_is_forbidden(serve, runs_root):
    server = serve(runs_root)
    foreign = request(server.port, "POST", run_path("finished", "/load"), {"Origin": "http://evil.example"})
    assert foreign.status == 403, foreign
    assert "Origin" in foreign.json()["error"]
    assert request(server.port, "GET", "/api/runs").json()["runs"][0]["loaded"] is False
    own = request(server.port, "POST", run_path("finished", "/load"), {"Origin": f"http://127.0.0.1:{server.port}"})
    assert own.status == 200


def test_a_hostile_job_name_comes_back_as_json_text(serve, runs_root):
    server = serve(runs_root)
    answer = request(server.port, "GET", "/api/runs?q=onerror")
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.headers["x-content-type-options"] == "nosniff"
    csp = answer.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    (run,) = answer.json()["runs"]
    assert run["id"] == run["job"] == HOSTILE_JOB
    report = request(server.port, "GET", run_path(HOSTILE_JOB, "/report"))
    assert report.status == 200
    assert report.headers["content-type"].startswith("application/json")
    assert report.json()["run"]["job"] == HOSTILE_JOB
    page = request(server.port, "GET", "/")
    assert "<script>" not in page.body and "onerror" not in page.body  # the shell holds no data


def test_bad_and_vanishing_runs_never_take_the_server_down(serve, copy_run):
    root = copy_run("finished")
    (root / "corrupt" / "algo-1").mkdir(parents=True)
    (root / "corrupt" / "algo-1" / "manifest.json").write_text("not json")
    server = serve(root)
    broken = request(server.port, "GET", run_path("corrupt", "/report"))
    assert 400 <= broken.status < 600 and broken.json()["error"]
    assert "\n" not in broken.json()["error"]
    assert request(server.port, "GET", run_path("finished", "/report")).status == 200
    # Deleted under the server: the loaded run keeps its last model and says what happened.
    shutil.rmtree(root / "finished")
    assert request(server.port, "GET", run_path("finished", "/steps")).status == 200
    wait_until(lambda: "problem" in request(server.port, "GET", run_path("finished", "/report")).json()["live"],
               "the report saying the run is gone")
    (listed,) = [run for run in request(server.port, "GET", "/api/runs").json()["runs"] if run["id"] == "finished"]
    assert listed["loaded"] is True and listed["problems"][0]["name"] == "run_vanished"
    # Rewritten under the server: garbage where the run was.
    (root / "finished").mkdir()
    (root / "finished" / "manifest.json").write_text("\x00\x01garbage")
    assert request(server.port, "GET", "/api/runs").status == 200
    assert request(server.port, "POST", run_path("finished", "/unload")).status == 200
    assert request(server.port, "GET", run_path("finished", "/report")).status >= 400
    assert request(server.port, "GET", run_path("corrupt", "/series?keys=*")).status >= 400
    assert server.proc.poll() is None


def test_events_follow_a_running_job_and_ctl_changes_it(serve, start_job, tmp_path):
    root = tmp_path / "runs"
    stop = tmp_path / "stop"
    job = start_job(["--out", root, "--job", "live", "--node", "n", "--interval", "1s"],
                    LIVE_JOB.format(stop=str(stop)))
    node_dir = root / "live" / "n"
    wait_until(lambda: (node_dir / "manifest.json").exists(), "the job's manifest")
    server = serve(root)
    wait_until(lambda: [r["status"] for r in request(server.port, "GET", "/api/runs").json()["runs"]] == ["running"],
               "the job listed as running")
    report = request(server.port, "GET", run_path("live", "/report")).json()
    assert report["live"]["following"] is True
    first_until = report["live"]["complete_until_ns"]

    name, event, seconds = read_events(server.port, {}, lambda name, data: name == "run" and data["id"] == "live")
    print(f"first 'run' event {seconds:.3f} s after the stream opened")
    assert event["new_events"] + event["new_samples"] > 0
    assert event["complete_until_ns"] >= first_until
    wait_until(lambda: request(server.port, "GET", run_path("live", "/report")).json()["live"]["complete_until_ns"]
               > first_until, "the report following the job")

    bad = request(server.port, "POST", run_path("live", "/ctl"), body={"interval": "1ns"})
    assert bad.status == 400 and "interval" in bad.json()["error"]
    assert request(server.port, "POST", run_path("live", "/ctl"), body={"interval": 5}).status == 400
    assert request(server.port, "POST", run_path("live", "/ctl"), body={"colour": "red"}).status == 400
    assert request(server.port, "POST", run_path("live", "/ctl"), body={"node": "n" * 100_000}).status == 413
    assert request(server.port, "POST", run_path("live", "/ctl"), body={"node": "m", "interval": "2s"}).status == 404
    changed = request(server.port, "POST", run_path("live", "/ctl"),
                      {"Origin": f"http://127.0.0.1:{server.port}"},
                      {"interval": "100ms", "python_steps": "100000:1"})
    assert changed.status == 200, changed
    assert changed.json()["written"] == [{"node": "n", "sequence": 1, "file": "control/1.json"}]
    assert (node_dir / "control" / "1.json").exists()
    # The job's processes apply it at their next step, the launcher within about a second.
    wait_until(lambda: "control 1" in job.stdout.readline(), "the job applying control 1")
    wait_until(lambda: json.loads((node_dir / "manifest.json").read_text()).get("control"),
               "the launcher recording control 1")
    (entry,) = json.loads((node_dir / "manifest.json").read_text())["control"]
    assert entry["changes"]["interval_ns"] == 100_000_000

    stop.touch()
    assert job.wait(timeout=120) == 0, job.stderr.read()
    wait_until(lambda: request(server.port, "GET", "/api/runs").json()["runs"][0]["status"] == "completed",
               "the listing seeing the job end")
    ended = request(server.port, "POST", run_path("live", "/ctl"), body={"interval": "2s"})
    assert ended.status == 409, ended
    assert "ended" in ended.json()["error"]


def test_startup_errors_are_one_line(cli, tmp_path):
    def serve_fails(*args):
        result = subprocess.run([cli, "serve", *map(str, args)], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode != 0
        assert result.stderr.count("\n") == 1, result.stderr
        return result.stderr

    assert "does not exist" in serve_fails(tmp_path / "nowhere")
    (tmp_path / "runs").mkdir()
    assert "--host" in serve_fails(tmp_path / "runs", "--host", "not-a-host.invalid")
    assert "--token" in serve_fails(tmp_path / "runs", "--token", "short")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        message = serve_fails(tmp_path / "runs", "--port", taken.getsockname()[1])
        assert str(taken.getsockname()[1]) in message and "--port" in message
