"""Every report section and chart shows in a real browser, offline, without errors."""

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO

# docs/report-model.md's sections, in the order the page shows them: SageMaker's profiling
# report first, stepscope's own after.
REPORT_SECTIONS = [
    ("verdict", "What holds this job back"),
    ("job_summary", "Training job summary"),
    ("system_usage", "System usage statistics"),
    ("framework", "Framework metrics summary"),
    ("rules", "Rules summary"),
    ("steps", "Analyzing the training loop"),
    ("gpu_utilization", "GPU utilization analysis"),
    ("gpu_activity", "GPU activity"),
    ("gpu_idle", "GPU time per step"),
    ("workload_balancing", "Workload balancing"),
    ("data_loading", "Dataloading analysis"),
    ("batch_size", "Batch size"),
    ("cpu_bottlenecks", "CPU bottlenecks"),
    ("io_bottlenecks", "I/O bottlenecks"),
    ("gpu_memory", "GPU memory"),
    ("findings", "Findings"),
    ("step_time_breakdown", "Step time breakdown"),
    ("annotations", "Annotation durations"),
    ("python_profile", "Python profile"),
    ("operators", "Operators"),
    ("overhead", "Profiler overhead"),
    ("capabilities", "Capabilities"),
]
COMPARE_SECTIONS = [
    ("runs", "Runs compared"),
    ("cost", "Cost"),
    ("steps", "Step durations"),
    ("findings", "Findings"),
    ("phases", "Framework phases"),
    ("operators", "Operators"),
    ("utilization", "Utilization"),
]
EVIL = '<img src=x onerror="window.__stepscope_xss=1"></script>'
MAX_HTML_BYTES = 5 * 1024 * 1024


def assert_clean(page):
    assert page["console_errors"] == []
    assert page["page_errors"] == []
    assert page["blocked_requests"] == [], "the report must not reach the network"


def assert_sections(page, expected):
    assert [(s["key"], s["title"]) for s in page["sections"]] == expected


def assert_charts_drawn(page, minimum):
    canvases = page["canvases"]
    assert len(canvases) >= minimum
    for canvas in canvases:
        assert canvas["width"] > 0 and canvas["height"] > 0, canvas
        # Axes and labels alone are a few thousand pixels; every chart here has data.
        assert canvas["drawn_pixels"] > 2000, f"chart {canvas['label']!r} looks blank: {canvas}"


def assert_axes_readable(page):
    """Issue 13: every chart with axes titles them, and byte rates tick at round values of one
    binary unit (0, 200, 400 MiB/s), not at decimal counts printed as 1.46 KiB/s. Returns how
    many byte-rate axes were checked."""
    byte_axes = 0
    for canvas in page["canvases"]:
        for axis, info in canvas["axes"].items():
            if info["type"] != "linear" or not info["ticks"]:
                continue  # doughnuts have no axes; a category axis names its bars
            assert info["title"], f"chart {canvas['label']!r} has an untitled {axis} axis"
            assert info["title"] != "bytes/s", f"chart {canvas['label']!r} ticks raw bytes: {info['ticks']}"
            if info["title"].endswith("iB/s") or info["title"] == "B/s":
                byte_axes += 1
                for tick in info["ticks"]:
                    value = float(tick.replace(",", ""))
                    assert abs(value - round(value)) < 1e-9 or abs(value * 10 - round(value * 10)) < 1e-9, (canvas["label"], tick)
    return byte_axes


def assert_names_are_text(page):
    assert page["images"] == 0, "an untrusted name was parsed as HTML"
    assert page["xss"] is False
    assert EVIL in page["body_text"]


def canvas(page, label):
    (found,) = [c for c in page["canvases"] if c["label"] == label]
    return found


def assert_charts_not_dumps(page, keys):
    """Issue 13: these sections chart what their rule measured; none prints the rule's raw
    Details as keys and values (details.ts's tables, nested boxes or JSON)."""
    for key in keys:
        assert section(page, key)["dumps"] == 0, f"section {key} dumps raw Details"


def section(page, key):
    return next(s for s in page["sections"] if s["key"] == key)


def text_of_section(page, key):
    return section(page, key)["text"]


def assert_verdict_on_first_screen(page, sentence, top_title):
    """Issue 13: at 1280x800 the page opens on what is wrong and what to do next."""
    first = page["first_screen"]
    assert first["sentence"] == sentence
    assert first["top_card_title"] == top_title
    assert first["sentence_bottom"] is not None and first["sentence_bottom"] <= first["height"], first
    assert first["top_card_next_step_bottom"] is not None, "the top cause shows its next step"
    assert first["top_card_next_step_bottom"] <= first["height"], first


def test_one_node_without_gpu(render_html, open_page):
    html = render_html(os.path.join(FIXTURES, "report_one_node_no_gpu.json"), "one_node_no_gpu")
    assert os.path.getsize(html) < MAX_HTML_BYTES
    page = open_page(html, "one_node_no_gpu")
    assert_clean(page)
    assert page["title"] == "stepscope report: one-node-no-gpu"
    assert_sections(page, REPORT_SECTIONS)
    # The GPU sections say why they are empty, with the document's sentence.
    for key in ("gpu_utilization", "gpu_memory"):
        assert section(page, key)["available"] is False
        assert section(page, key)["why"] == "No GPU was seen on any node: NVML found no driver."
        assert section(page, key)["canvases"] == 0
    assert section(page, "workload_balancing")["why"] == "Workload balancing compares GPUs, and no GPU was seen."
    unavailable = [s["key"] for s in page["sections"] if not s["available"]]
    assert unavailable == ["gpu_utilization", "gpu_activity", "gpu_idle", "workload_balancing", "gpu_memory"]
    assert section(page, "gpu_activity")["why"].startswith("No GPU kernel was recorded")
    assert section(page, "gpu_idle")["why"].startswith("No step ran GPU work that the run recorded")
    # The verdict first: the costliest cause, its next step on the first screen.
    assert_verdict_on_first_screen(
        page, "rank 1 on vm (pid 4243) is a straggler: the other ranks wait for it in backward; fixing it could "
        "save about 68 % of step time.", "rank 1 on vm (pid 4243) is a straggler: the other ranks wait for it in backward")
    assert page["first_screen"]["figures"][:4] == [
        "step_time_TRAIN_p50", "step_time_TRAIN_p95", "train_steps_per_s", "data_wait_pct"]
    # job phases, 2 timelines + the utilization heatmap, 2 framework charts + CPU operators, one
    # step-duration histogram and one per-step line for both phases, the data-loading histogram,
    # the step-time breakdown doughnut.
    assert [s["canvases"] for s in page["sections"]][:6] == [0, 1, 3, 3, 0, 2]
    assert_charts_drawn(page, 11)
    # One histogram on shared bins, a series per node and phase (the legend toggles them), and
    # the per-step line with StepOutlier's outliers as their own, differently coloured series.
    histogram = canvas(page, "Step duration histogram")
    assert [s["label"] for s in histogram["series"]] == ["vm · TRAIN", "vm · EVAL"]
    assert histogram["axes"]["x"]["title"] == "step duration (ms)" and histogram["axes"]["y"]["title"] == "count"
    durations = canvas(page, "Step durations")
    assert durations["series"] == [{"label": "vm · TRAIN", "points": 40}, {"label": "vm · EVAL", "points": 40},
                                   {"label": "StepOutlier outlier", "points": 4}]
    assert durations["axes"]["x"]["title"] == "step" and durations["axes"]["y"]["title"] == "ms"
    # Every core over time, a row each, on a titled time axis.
    heatmap = canvas(page, "Utilization on node vm (%)")
    assert heatmap["axes"]["x"]["title"] == "seconds since start"
    assert heatmap["axes"]["y"]["title"] == "core / GPU"
    assert heatmap["axes"]["y"]["ticks"] == ["cpu0", "cpu1", "cpu2", "cpu3"]
    assert "utilization: 0 %" in text_of_section(page, "system_usage")
    # DataLoader workers' busy time is said apart, never added to the framework's phases.
    assert "2 DataLoader worker processes were busy" in text_of_section(page, "framework")
    assert_charts_not_dumps(page, ["cpu_bottlenecks", "io_bottlenecks", "batch_size", "data_loading"])
    assert_axes_readable(page)
    assert_names_are_text(page)
    # Rules: triggered first, with the count of triggered rules.
    assert "2 of 11 rules triggered." in page["body_text"]
    assert ("The rules looked at 1 window of 60 s: windows from the run's first timestamp floored to the scan "
            "interval (UTC); the last, partial window is evaluated too") in page["body_text"]
    assert page["body_text"].index("DataloaderStarvation") < page["body_text"].index("CPUBottleneck")
    # The data-loading histogram is drawn with its percentiles, not printed as bins and counts.
    data_loading = text_of_section(page, "data_loading")
    assert "Batch loading time: p25 2.1 ms · p50 3.2 ms · p95 7.1 ms" in data_loading, data_loading
    assert "binedges" not in data_loading and "probs" not in data_loading
    # Workers against cores in one sentence, and the wait per node and phase, not key/values.
    assert "2 data loaders, num_workers 0 on a host with 8 cores" in data_loading, data_loading
    assert "batches are loaded in the training process" in data_loading
    assert "TRAIN steps on vm waited for data" in data_loading
    # Findings show their evidence.
    assert "node vm · TRAIN · steps 12, 13, 14 · 10 s – 12 s after start" in page["body_text"]
    assert "Recommendation: Raise DataLoader num_workers to 4." in page["body_text"]
    # Two ranks on the node: the per-rank table, and evidence that names the rank and its pid.
    assert "Step time per rank" in page["body_text"]
    assert "vm\t1\t1\t4243\tTRAIN\t20\t31.4 ms\t30.1 ms\t33.2 ms\t72.9 ms\t4 ms\t26.1 ms\t4%" in page["body_text"]
    assert "node vm · rank 1 · pid 4243 · TRAIN · steps 0, 1, 2 · 10 s – 12 s after start" in page["body_text"]


def test_many_nodes_with_gpus(render_html, open_page):
    html = render_html(os.path.join(FIXTURES, "report_many_nodes_gpu.json"), "many_nodes_gpu")
    page = open_page(html, "many_nodes_gpu")
    assert_clean(page)
    assert page["title"] == "stepscope report: many-nodes-" + EVIL
    assert_sections(page, REPORT_SECTIONS)
    assert all(s["available"] for s in page["sections"])
    # Per GPU: a bar chart of all 8 GPUs and one timeline per node.
    assert section(page, "gpu_utilization")["canvases"] == 3
    assert section(page, "gpu_memory")["canvases"] == 3
    # GPU time per step (the two-rank NCCL trace's section): all steps per GPU, then each GPU's
    # steps; a sentence per GPU names the largest cause of idle time and what to look at.
    assert section(page, "gpu_idle")["canvases"] == 3
    idle_text = text_of_section(page, "gpu_idle")
    assert "On rank-0 GPU 0 rank 0 TRAIN the GPU idled 55.5 % of its 2 steps' time" in idle_text, idle_text
    assert "most of it waiting on queued work (32.4 % of the step time): look at dependencies" in idle_text, idle_text
    labels = [c["label"] for c in page["canvases"]]
    assert "GPU utilization on node algo-1 (%)" in labels and "GPU utilization on node algo-2 (%)" in labels
    # 3 step series (algo-1 TRAIN and EVAL, algo-2 TRAIN) in one histogram and one line chart.
    assert section(page, "steps")["canvases"] == 2
    assert [s["label"] for s in canvas(page, "Step duration histogram")["series"]] == [
        "algo-1 · TRAIN", "algo-1 · EVAL", "algo-2 · TRAIN"]
    # 3 timelines (CPU total, host memory, network receive) and a heatmap per node: 8 cores and
    # 4 GPUs each.
    assert section(page, "system_usage")["canvases"] == 3 + 2
    heatmap = canvas(page, "Utilization on node algo-2 (%)")
    assert heatmap["axes"]["y"]["title"] == "core / GPU" and heatmap["axes"]["x"]["title"] == "seconds since start"
    assert heatmap["axes"]["y"]["ticks"][0] == "cpu0" and heatmap["axes"]["y"]["ticks"][-1] == "gpu3"
    # Workload balancing: per node, the GPUs' utilization histograms overlaid, and the pairs
    # over the threshold; never the rule's raw Details.
    assert section(page, "workload_balancing")["canvases"] == 2
    balancing = canvas(page, "GPU utilization histograms on node algo-1")
    assert [s["label"] for s in balancing["series"]] == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert balancing["axes"]["x"]["title"] == "GPU utilization (%)" and balancing["axes"]["y"]["title"] == "samples"
    assert "algo-1\tgpu0 – gpu3\t0.61" in text_of_section(page, "workload_balancing")
    # Batch size: a box plot per node of CPU, GPU and GPU memory utilization at the trigger.
    assert section(page, "batch_size")["canvases"] == 2
    boxes = canvas(page, "Utilization on node algo-1 when BatchSize triggered (%)")
    assert boxes["axes"]["x"]["ticks"][:3] == ["CPU", "GPU 0", "GPU 0 memory"]
    assert boxes["axes"]["y"]["title"] == "%"
    # CPU bottlenecks: the utilization with the bottleneck times shaded over it, and the cause
    # split (framework phases, TRAIN vs EVAL) as doughnuts.
    assert section(page, "cpu_bottlenecks")["canvases"] == 3
    band = canvas(page, "Utilization with the CPU bottleneck snapshots shaded (%)")
    assert [s["label"] for s in band["series"]][:2] == ["CPU total (algo-1)", "CPU total (algo-2)"]
    assert canvas(page, "Framework phases at the CPU bottlenecks (% of their time)")["series"][0]["points"] == 3
    assert canvas(page, "TRAIN vs EVAL at the CPU bottlenecks (% of step time)")["series"][0]["points"] == 2
    assert section(page, "io_bottlenecks")["canvases"] == 0
    assert "No I/O bottleneck in 400 system snapshots." in text_of_section(page, "io_bottlenecks")
    assert_charts_not_dumps(page, ["cpu_bottlenecks", "io_bottlenecks", "workload_balancing", "batch_size"])
    # Downsampled series carry the note under their chart.
    assert section(page, "gpu_utilization")["notes"] == [
        "Downsampled: 120 of 9,000 points shown (at most 2,000 points a series), keeping each interval's minimum and maximum.",
    ] * 2
    assert len(section(page, "system_usage")["notes"]) == 1
    assert_charts_drawn(page, 20)
    assert assert_axes_readable(page) >= 1, "the network and I/O charts are byte rates"
    # A demangled kernel name is shortened in its cell (nested template arguments folded) and
    # whole on hover.
    (kernel,) = [c for c in page["hover_cells"] if c["title"].startswith("void at::native::elementwise_kernel<128, 4,")]
    assert len(kernel["text"]) <= 80 and "<…>" in kernel["text"], kernel
    assert kernel["text"].startswith("void at::native::elementwise_kernel<…>(int, at::native::gpu_kernel_impl<…>"), kernel
    assert_names_are_text(page)


def test_compare(render_html, open_page):
    html = render_html(os.path.join(FIXTURES, "compare.json"), "compare")
    page = open_page(html, "compare")
    assert_clean(page)
    assert page["title"] == "stepscope compare: baseline vs " + EVIL
    assert_sections(page, COMPARE_SECTIONS)
    assert section(page, "operators")["available"] is False
    assert section(page, "operators")["why"].startswith("Neither run recorded operators")
    assert "Run B was cheaper by $5.09 (82.6%)." in page["body_text"]
    # The verdict leads the page; the findings diff names what triggered in one run only.
    text = page["body_text"]
    assert text.index("Runs compared") < text.index("B no longer triggers DataloaderStarvation.") < text.index("Run\tJob")
    assert "only in A\tDataloaderStarvation\tTRAIN steps on vm wait for data 31 % of the time" in page["body_text"]
    assert [s["canvases"] for s in page["sections"]] == [0, 1, 2, 0, 1, 0, 1]
    assert_charts_drawn(page, 5)
    assert_names_are_text(page)


def _has_report_command(cli):
    finished = subprocess.run([cli, "report", "--help"], capture_output=True, text=True, timeout=30)
    return finished.returncode == 0


def record_and_report(cli, out_dir, tmp_path, job, name, example):
    """Runs examples/pytorch/<example...> under `stepscope run` as node n1 of `job`, then writes
    its report to <out_dir>/<name>.html; returns that path."""
    runs = tmp_path / "runs"
    finished = subprocess.run(
        [cli, "run", "--out", str(runs), "--job", job, "--node", "n1", "--",
         sys.executable, os.path.join(REPO, "examples", "pytorch", example[0]), *example[1:]],
        capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    html = os.path.join(out_dir, name + ".html")
    finished = subprocess.run([cli, "report", str(runs / job), "-o", html], capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    return html


def test_real_run(cli, out_dir, open_page, tmp_path):
    """A short real PyTorch run under `stepscope run`, then `stepscope report`."""
    pytest.importorskip("torch", reason="the example needs Debian's python3-torch")
    if not _has_report_command(cli):
        pytest.skip("`stepscope report` is not built yet; the fixtures above cover the page")
    html = record_and_report(cli, out_dir, tmp_path, "browser", "real_run", ["plain_loop.py", "--epochs", "2"])
    assert os.path.getsize(html) < MAX_HTML_BYTES
    page = open_page(html, "real_run")
    assert_clean(page)
    assert page["title"] == "stepscope report: browser"
    assert_sections(page, REPORT_SECTIONS)
    # The verdict is computed by the real report: a sentence and the step-time figures.
    assert page["first_screen"]["sentence"] and page["first_screen"]["sentence_bottom"] <= 800
    assert "step_time_TRAIN_p50" in page["first_screen"]["figures"]
    # No GPU on this machine: the GPU sections say why; the training loop has charts.
    assert section(page, "gpu_utilization")["available"] is False
    assert section(page, "gpu_utilization")["why"]
    assert section(page, "steps")["available"] is True
    assert section(page, "steps")["canvases"] >= 2
    assert_charts_drawn(page, 3)


def test_real_starved_run_opens_on_its_cause_and_the_fix(cli, out_dir, open_page, tmp_path):
    """Issue 13 §5: a real run with a planted data-loader starvation (the slow-data example loads
    every sample in the training process) opens, at 1280x800 and unscrolled, on the sentence that
    names the wait and on the DataloaderStarvation card with its next step."""
    pytest.importorskip("torch", reason="the example needs torch")
    if not _has_report_command(cli):
        pytest.skip("`stepscope report` is not built yet; the fixtures above cover the page")
    html = record_and_report(cli, out_dir, tmp_path, "starved", "real_starved_run",
                             ["slow_data.py", "--num-workers", "0"])
    page = open_page(html, "real_starved_run")
    assert_clean(page)
    first = page["first_screen"]
    assert "wait for data" in first["sentence"], first
    assert first["sentence_bottom"] <= first["height"], first
    assert first["top_card_rule"] == "DataloaderStarvation", first
    assert "wait for data" in first["top_card_title"], first
    assert first["top_card_next_step_bottom"] is not None and first["top_card_next_step_bottom"] <= first["height"], first
    # The fix that fits the host as it was: workers while cores are free; on a host that other
    # processes fill (a loaded CI machine), what to do about them first (rules/cpu_headroom.h).
    next_step = first["top_card_next_step"]
    assert "num_workers" in next_step or "Find what else runs on n1" in next_step \
        or "python detail window" in next_step, first
    assert "data_wait_pct" in first["figures"]
    assert_charts_drawn(page, 3)
