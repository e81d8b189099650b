"""The dashboard's pages in a real browser against a real `stepscope serve` (issue 14 §2, §4)."""
import json

from conftest import HOSTILE, api, wait_until

PAGES = ["overview", "nodes", "gpu", "timeline", "control"]


def section(page, key):
    found = [s for s in page["sections"] if s["key"] == key]
    assert found, f"no section {key} in {[s['key'] for s in page['sections']]}"
    return found[0]


def charts(page, label_part):
    return [c for c in page["canvases"] if label_part in (c["label"] or "")]


def test_job_list_searches_by_name_and_loads_and_unloads(drive, run_ids):
    cpu = run_ids["cpu-steps"]
    seen = drive("jobs", "cpu-st", cpu, "dashboard-jobs")
    assert sorted(seen["all"]) == sorted(run_ids.values())
    assert seen["found"] == [cpu], "the search by name keeps only the matching run"
    assert seen["found_jobs"] == ["cpu-steps"]
    assert seen["after_load"] == "Unload"
    assert [cpu, True] in seen["listed_after_load"], "the server lists the run loaded after the page loaded it"
    assert seen["after_unload"] == "Load"
    assert [cpu, False] in seen["listed_after_unload"]
    # No job runs while this test does: the status filter keeps none as running, these as completed.
    assert seen["running"] == []
    assert set(run_ids.values()) <= set(seen["completed"])


def test_every_page_of_the_recorded_cpu_run(drive, run_ids):
    pages = drive("pages", run_ids["cpu-steps"], "dashboard-cpu")["pages"]
    overview = pages["overview"]
    assert overview["run_name"] == "cpu-steps"
    keys = [s["key"] for s in overview["sections"]]
    assert keys[:3] == ["verdict", "progress", "job_summary"], "verdict first, then the training progress"
    # The progress timeline draws the job's phases on the time axis.
    progress = charts(overview, "Job phases over time")
    assert len(progress) == 1
    assert progress[0]["axes"]["x"]["title"] == "seconds since start"
    assert {"initialization", "training loop", "finalization"} <= set(progress[0]["axes"]["y"]["ticks"])
    # The resource-utilization table: percentiles per node.
    usage = section(overview, "system_usage")
    assert usage["available"]
    assert "Node n1" in overview["body_text"]

    nodes = pages["nodes"]
    core_charts = charts(nodes, "CPU utilization per core")
    assert len(core_charts) == 1
    cores = [s["label"] for s in core_charts[0]["series"]]
    assert cores and all(label.startswith("cpu") and label != "cpu/total" for label in cores)
    assert all(s["points"] > 0 for s in core_charts[0]["series"])
    assert len(charts(nodes, "Network")) == 1
    steps_chart = charts(nodes, "Steps (framework events)")
    assert len(steps_chart) == 1
    assert sum(s["points"] for s in steps_chart[0]["series"]) == 45, "40 TRAIN and 5 EVAL steps on the time axis"
    # Every synced chart is on the same axis.
    for chart in core_charts + steps_chart:
        assert chart["axes"]["x"]["title"] == "seconds since start"
    last = section(nodes, "last_steps")
    assert last["available"] and last["canvases"] >= 1
    stacked = charts(nodes, "time per step")
    assert stacked and len(stacked[0]["axes"]["x"]["ticks"]) > 0
    assert "Utilization of every core and GPU" in nodes["body_text"]

    gpu = pages["gpu"]
    assert not section(gpu, "gpu_utilization")["available"], "no GPU on this run"
    assert section(gpu, "gpu_utilization")["why"]
    assert not section(gpu, "gpu_kernels")["available"]
    assert "No GPU kernel was recorded" in section(gpu, "gpu_kernels")["why"]

    control = pages["control"]
    assert section(control, "control")["available"]
    assert charts(pages["timeline"], "Timeline"), "the Timeline page draws its canvas"


def test_nodes_charts_zoom_together_to_a_selected_interval_and_list_its_steps(drive, run_ids):
    seen = drive("zoom", run_ids["cpu-steps"], "dashboard-cpu-zoom")
    heading = seen["selection"]["heading"]
    assert heading and heading.startswith("Steps from "), seen["selection"]
    from_s, to_s = (float(x) for x in heading.removeprefix("Steps from ").removesuffix(" s").split(" s to "))
    rows = seen["selection"]["rows"]
    assert 0 < len(rows) < 45, "a part of the run's steps, not none or all"
    for row in rows:
        start = float(row[3].removesuffix(" s"))
        assert start <= to_s, row
    # Every chart on the synced axis shows the selected interval.
    synced = [c for c in seen["page"]["canvases"] if c["axes"].get("x", {}).get("title") == "seconds since start"
              and "Utilization on node" not in (c["label"] or "")]
    assert len(synced) >= 3
    # Its axis runs from the interval's start to its end (tick labels are rounded: 2 % leeway).
    leeway = 0.02 * (to_s - from_s)
    for chart in synced:
        ticks = [float(t.replace(",", "")) for t in chart["axes"]["x"]["ticks"]]
        assert abs(min(ticks) - from_s) <= leeway and abs(max(ticks) - to_s) <= leeway, (chart["label"], ticks, from_s, to_s)


def test_every_page_of_the_imported_gpu_run(drive, run_ids):
    pages = drive("pages", run_ids["alexnet-gpu"], "dashboard-gpu")["pages"]
    assert pages["overview"]["run_name"] == "alexnet-gpu"
    # No steps in the trace: the progress timeline says why instead of drawing.
    progress = section(pages["overview"], "progress")
    assert not progress["available"] and "No training step was recorded" in progress["why"]
    kernels = section(pages["gpu"], "gpu_kernels")
    assert kernels["available"] and kernels["canvases"] == 2
    by_time = charts(pages["gpu"], "by GPU time")[0]
    assert by_time["series"][0]["points"] == 15, "the top 15 kernels by time"
    assert "Memcpy HtoD (Pageable -> Device)" in pages["gpu"]["body_text"] or any(
        "Memcpy HtoD" in t for t in by_time["axes"]["y"]["ticks"])
    # The activity sections (gpu_activity): every chart titled on both axes.
    activity = section(pages["gpu"], "gpu_activity")
    assert activity["available"] and activity["canvases"] == 6
    for title, value_axis, category in [("GPU active vs idle", "ms", "GPU"),
                                        ("GPU activity split", "% of the active span", "GPU"),
                                        ("Memory operations by kind (ms)", "ms", "operation"),
                                        ("Memory operations by kind (count)", "operations", "operation"),
                                        ("Kernel time per precision", "ms", "precision"),
                                        ("Kernel launches per precision", "launches", "precision")]:
        found = charts(pages["gpu"], title)
        assert len(found) == 1, title
        titles = {axis["title"] for axis in found[0]["axes"].values()}
        assert titles == {value_axis, category}, (title, titles)
    active = charts(pages["gpu"], "GPU active vs idle")[0]
    assert [s["label"] for s in active["series"]] == ["active (kernels, memcpy, memset)", "synchronization", "idle"]
    assert active["axes"]["y"]["ticks"] == ["rank-0 GPU 0"]
    assert "HtoD (pageable)" in charts(pages["gpu"], "Memory operations by kind (ms)")[0]["axes"]["x"]["ticks"]
    # AlexNet's kernels: FP32 (sgemm, scudnn, <float>), TF32 (xmma tf32), and some whose names say nothing.
    precisions = charts(pages["gpu"], "Kernel time per precision")[0]["axes"]["x"]["ticks"]
    assert {"FP32", "TF32", "unknown"} <= set(precisions)
    assert section(pages["gpu"], "annotations")["available"]
    # Imported traces carry no system series: the Nodes page says so rather than drawing nothing.
    assert "The run has no system series and no steps to draw." in pages["nodes"]["body_text"]


def test_the_annotation_picker_redraws_the_histogram(drive, run_ids):
    seen = drive("annotations", run_ids["alexnet-gpu"], "dashboard-gpu-annotations")
    assert len(seen["options"]) == 5, "AlexNet's trace names five annotations"
    assert seen["first"]["label"] and seen["picked"]["label"]
    assert seen["first"]["label"] != seen["picked"]["label"], "picking another annotation draws its histogram"
    assert seen["first"]["stats"] != seen["picked"]["stats"]
    for drawn in (seen["first"], seen["picked"]):
        assert drawn["axes"]["x"]["title"] == "duration (ms)"
        assert drawn["axes"]["y"]["title"] == "count"
    assert not seen["page"]["xss"]


def test_hostile_names_are_shown_as_text(drive, run_ids):
    hostile = run_ids[HOSTILE]
    jobs = drive("jobs", "onerror", hostile, "dashboard-hostile-jobs")
    assert jobs["found_jobs"] == [HOSTILE]
    assert jobs["page"]["images"] == 0 and not jobs["page"]["xss"]
    for name, page in drive("pages", hostile, "dashboard-hostile")["pages"].items():
        assert page["images"] == 0, f"an <img> made it into the {name} page"
        assert not page["xss"], f"a handler ran on the {name} page"
    # The annotation's name reaches the pages as text (the step split names it).
    overview = drive("pages", run_ids["cpu-steps"], "dashboard-cpu-again")["pages"]
    assert all(not page["xss"] and page["images"] == 0 for page in overview.values())


def test_compare_shows_the_verdicts_side_by_side(drive, run_ids):
    ids = [run_ids["cpu-steps"], run_ids["alexnet-gpu"]]
    seen = drive("compare", ",".join(ids), "dashboard-compare")
    assert [c["run"] for c in seen["columns"]] == ids
    assert [c["heading"] for c in seen["columns"]] == ["cpu-steps", "alexnet-gpu"]
    assert all(c["sentence"] for c in seen["columns"])
    # Two runs: `stepscope compare`'s document under them (GET /api/compare), sections as the report draws them.
    assert seen["comparison"], "no compare document below the columns"
    assert {"runs", "steps", "findings"} <= set(seen["comparison"]), seen["comparison"]


def test_a_chart_of_a_running_job_updates_live(drive, server, running_job):
    run_id, _ = running_job
    api(server, f"/api/runs/{run_id}/load", method="POST")
    seen = drive("live", run_id)
    assert seen["points_before"] > 0
    assert seen["points_after"] > seen["points_before"], "the Nodes page redrew with the job's new samples"
    assert seen["page"]["live"].startswith("live")


def test_control_schedules_a_detail_window_recorded_in_the_run(drive, running_job):
    run_id, node_dir = running_job
    seen = drive("control", run_id, "900:2", "dashboard-control-accepted")
    assert "refused" not in seen["answer"]["cls"], seen["answer"]["text"]
    assert seen["answer"]["text"].startswith("Accepted")
    control_dir = node_dir / "control"
    files = wait_until(lambda: sorted(control_dir.glob("*.json")) if control_dir.exists() else None,
                       f"a control file in {control_dir}")
    written = json.loads(files[-1].read_text())
    assert any(w.get("kind") == "operators" and w.get("start_step") == 900 and w.get("num_steps") == 2
               for w in written.get("detail", [])), written


def test_control_of_a_finished_job_shows_the_refusal(drive, run_ids):
    seen = drive("control", run_ids["cpu-steps"], "5:1", "dashboard-control-refused", refused_status=409)
    assert "refused" in seen["answer"]["cls"]
    assert seen["answer"]["text"].startswith("Refused (409)")


def test_the_timeline_draws_every_thread_zooms_in_and_to_a_step(drive, run_ids):
    seen = drive("timeline", run_ids["cpu-steps"], "3", "dashboard-cpu-timeline")
    assert seen["whole"]["slices"] > 0 and seen["whole"]["status"] is None, seen["whole"]
    assert "events in view as" in seen["whole"]["info"]
    # A wheel zoom asks the server for the narrower viewport: a new answer with fewer events.
    whole_events = int(seen["whole"]["info"].split(" events")[0].replace(",", ""))
    zoomed_events = int(seen["zoomed"]["info"].split(" events")[0].replace(",", ""))
    assert 0 < zoomed_events < whole_events, (seen["whole"], seen["zoomed"])
    # Zoom to a step: the server's answer for step 3 and what ran around it.
    assert "· step 3" in seen["step"]["info"] and seen["step"]["slices"] > 0, seen["step"]
    assert seen["page"]["images"] == 0 and not seen["page"]["xss"]


def test_the_timeline_of_a_gpu_trace_draws_launch_to_kernel_arrows(drive, run_ids):
    seen = drive("timeline", run_ids["alexnet-gpu"], "0", "dashboard-gpu-timeline", refused_status=404)
    assert seen["whole"]["slices"] > 0 and seen["whole"]["flows"] > 0, seen["whole"]
    # The trace has no steps: zooming to one says so instead of drawing something else.
    assert seen["step"]["status"] and "no steps" in seen["step"]["status"], seen["step"]
