// The Nodes page (Studio's Nodes tab): per node, CPU per core and network over time, GPU
// utilization and memory per GPU over time, and the job's steps on the same time axis; the
// charts share a cursor and zoom together (synced_charts.ts), and the interval a drag selects
// lists the steps in it. Below: the heatmap of every core and GPU, and the time of the last 30
// steps stacked by phase/annotation. The series come downsampled from the server for the range
// shown (GET /api/runs/{id}/series), so zooming in fetches finer buckets; a live run's charts
// follow SSE "run" events.

import { barChart, destroyCharts, lineChart } from "../charts";
import { asArray, el, formatMs, formatNumber, gridPerNode, isNumber, para, section, table } from "../dom";
import type { ReportDocument } from "../model";
import { renderHeatmaps } from "../sections/overview";
import { type SeriesBuckets, type StepSplit, fetchReport, fetchSeries, fetchSteps, showFailure } from "./api";
import { followRun } from "./events";
import type { PageCleanup, RunFrame } from "./run_page";
import { SyncedChartGroup, type TimeRange } from "./synced_charts";

const kBucketsPerChart = 400;
const kLastSteps = 30;
// The steps drawn on the time axis (the server's most: run_views.h kMaxRecentSteps).
const kStepsOnTimeline = 1000;

// The series the page draws for every node, as the server's key patterns ('*': any run of
// characters): each core, each GPU's utilization and memory, the network.
const kSeriesKeys = ["cpu/cpu*/util_pct", "network/*_bytes_per_s", "gpu/gpu*/util_pct", "gpu/gpu*/memory_used_pct"];

interface ChartSpec {
  title: string;
  unit: string;
  matches: (key: string) => boolean;
  label: (key: string) => string;
}

const kCharts: ChartSpec[] = [
  { title: "CPU utilization per core", unit: "%", matches: (k) => k.startsWith("cpu/") && k.endsWith("/util_pct"), label: (k) => k.split("/")[1] ?? k },
  { title: "Network", unit: "bytes/s", matches: (k) => k.startsWith("network/"), label: (k) => (k.includes("rx") ? "receive" : "transmit") },
  { title: "GPU utilization per GPU", unit: "%", matches: (k) => k.startsWith("gpu/") && k.endsWith("/util_pct"), label: (k) => k.split("/")[1] ?? k },
  { title: "GPU memory used per GPU", unit: "%", matches: (k) => k.startsWith("gpu/") && k.endsWith("/memory_used_pct"), label: (k) => k.split("/")[1] ?? k },
];

function secondsSince(ns: number | undefined, startNs: number): number | null {
  return isNumber(ns) ? (ns - startNs) / 1e9 : null;
}

function stepLabel(step: StepSplit): string {
  return isNumber(step.rank) ? `${step.node ?? "?"} rank ${step.rank}` : step.node ?? "?";
}

function drawSystemCharts(container: HTMLElement, series: SeriesBuckets[], steps: StepSplit[], startNs: number, group: SyncedChartGroup): void {
  const nodes = [...new Set([...series.map((s) => s.node ?? "?"), ...steps.map((s) => s.node ?? "?")])];
  for (const node of nodes) {
    container.append(el("h3", { text: `Node ${node}` }));
    const grid = el("div", { cls: "grid synced-charts" });
    container.append(grid);
    const onNode = series.filter((s) => (s.node ?? "?") === node);
    for (const spec of kCharts) {
      const matching = onNode.filter((s) => spec.matches(s.key ?? ""));
      if (matching.length === 0) continue;
      const cell = el("div");
      grid.append(cell);
      lineChart(cell, {
        title: `${spec.title} (${spec.unit})`, xLabel: "seconds since start", yLabel: spec.unit,
        series: matching.map((s) => ({
          label: s.label ?? spec.label(s.key ?? ""),
          x: asArray(s.t_ns).map((t) => (t - startNs) / 1e9),
          y: asArray(s.mean).map((v) => (isNumber(v) ? v : Number.NaN)),
        })),
        ...(spec.unit === "%" ? { yMax: 100 } : {}),
        ...group.lineOptions(),
      });
    }
    // The framework's side on the same axis: each step at its start, its duration up.
    const nodeSteps = steps.filter((s) => (s.node ?? "?") === node);
    if (nodeSteps.length > 0) {
      const cell = el("div");
      grid.append(cell);
      const byLabel = new Map<string, StepSplit[]>();
      for (const step of nodeSteps) byLabel.set(`${stepLabel(step)} ${step.phase ?? ""}`.trim(), [...(byLabel.get(`${stepLabel(step)} ${step.phase ?? ""}`.trim()) ?? []), step]);
      lineChart(cell, {
        title: "Steps (framework events): duration at start (ms)", xLabel: "seconds since start", yLabel: "ms",
        series: [...byLabel].map(([label, list]) => ({
          label, points: true,
          x: list.map((s) => secondsSince(s.start_ns, startNs) ?? Number.NaN),
          y: list.map((s) => s.duration_ms ?? Number.NaN),
        })),
        ...group.lineOptions(),
      });
    }
  }
  if (nodes.length === 0) container.append(para("The run has no system series and no steps to draw.", "why"));
}

function stepsIn(steps: StepSplit[], range: TimeRange, startNs: number): StepSplit[] {
  return steps.filter((s) => {
    const from = secondsSince(s.start_ns, startNs);
    const to = secondsSince(s.end_ns, startNs) ?? from;
    return from !== null && to !== null && to >= range.from_s && from <= range.to_s;
  });
}

function partsText(step: StepSplit): string {
  return asArray(step.parts).filter((p) => (p.ms ?? 0) > 0).map((p) => `${p.name ?? "?"} ${formatMs(p.ms)}`).join(", ");
}

function renderSelection(container: HTMLElement, range: TimeRange | null, steps: StepSplit[], startNs: number): void {
  container.replaceChildren();
  if (!range) {
    container.append(para("Drag across any chart above to zoom every chart to an interval and list its steps here; double-click a chart to see the whole run again.", "note"));
    return;
  }
  const inside = stepsIn(steps, range, startNs);
  container.append(
    el("h3", { text: `Steps from ${formatNumber(range.from_s)} s to ${formatNumber(range.to_s)} s` }),
    para(`${inside.length} ${inside.length === 1 ? "step" : "steps"} in the interval.`, "lead"),
    table<StepSplit>([
      { title: "Node / rank", value: stepLabel, format: (v) => String(v) },
      { title: "Step", value: (s) => s.step, numeric: true },
      { title: "Phase", value: (s) => s.phase, format: (v) => String(v ?? "–") },
      { title: "Start", value: (s) => secondsSince(s.start_ns, startNs), format: (v) => (isNumber(v) ? `${formatNumber(v)} s` : "–"), numeric: true },
      { title: "Duration", value: (s) => s.duration_ms, format: formatMs, numeric: true },
      { title: "Split", value: partsText, format: (v) => String(v) },
    ], inside, { limit: 200 }),
  );
}

// The last 30 steps of each node/rank, a bar per step stacked by its parts.
function renderLastSteps(steps: StepSplit[]): HTMLElement {
  const shell = section("last_steps", `Time per step, last ${kLastSteps} steps`,
    "Each bar is one step, split into the phases and annotations it spent its time in.",
    steps.length > 0 ? { available: true } : { available: false, why: "The run has recorded no step yet (mark steps with stepscope.step() or the torch integration)." });
  if (!shell.available) return shell.root;
  const keyed = steps.map((s) => ({ ...s, node: stepLabel(s) }));
  gridPerNode(shell.body, keyed, (cell, label, onNode) => {
    const last = onNode.slice(-kLastSteps);
    // Parts no step spent time in stay out of the legend.
    const parts = [...new Set(last.flatMap((s) => asArray(s.parts).filter((p) => (p.ms ?? 0) > 0).map((p) => p.name ?? "?")))];
    barChart(cell, {
      title: `${label}: time per step (ms)`, yLabel: "ms", stacked: true,
      // TRAIN steps by number; other phases' numbers count on their own, so they are named.
      labels: last.map((s) => (s.phase && s.phase !== "TRAIN" ? `${s.phase} ${s.step ?? "?"}` : String(s.step ?? "?"))),
      series: parts.map((name) => ({ label: name, values: last.map((s) => asArray(s.parts).filter((p) => (p.name ?? "?") === name).reduce((sum, p) => sum + (p.ms ?? 0), 0)) })),
    });
  });
  return shell.root;
}

export function renderNodes(body: HTMLElement, run: string, frame: RunFrame): PageCleanup {
  const status = para("Reading the run…", "note");
  const charts = el("div", { cls: "node-charts" });
  const selection = el("div", { cls: "selection" });
  const below = el("div");
  const explain = section("system_vs_framework", "System metrics and framework events",
    "CPU per core, network, GPU utilization and memory per GPU, and the steps, on one time axis: the charts share a cursor and zoom together.", { available: true });
  explain.body.append(charts, selection);
  body.append(status, explain.root, below);

  let doc: ReportDocument | null = null;
  let steps: StepSplit[] = [];
  let alive = true;
  const group = new SyncedChartGroup((range) => {
    if (doc) renderSelection(selection, range, steps, doc.run?.start_ns ?? 0);
    following.refresh();  // finer buckets for the interval zoomed to
  });

  const load = async (): Promise<void> => {
    try {
      const report = await fetchReport(run);
      frame.showReport(report);
      doc = report;
      const startNs = report.run?.start_ns ?? report.job_summary?.start_ns ?? 0;
      // A live run's charts reach as far as the server has read it.
      const endNs = report.live?.following ? report.live.complete_until_ns : report.run?.end_ns ?? report.job_summary?.end_ns;
      group.setExtent(isNumber(endNs) && endNs > startNs ? { from_s: 0, to_s: (endNs - startNs) / 1e9 } : null);
      const range = group.selected;
      const window = range ? { from_ns: Math.round(startNs + range.from_s * 1e9), to_ns: Math.round(startNs + range.to_s * 1e9) } : {};
      const [series, timeline, last] = await Promise.all([
        fetchSeries(run, kSeriesKeys, window, kBucketsPerChart),
        fetchSteps(run, kStepsOnTimeline),
        fetchSteps(run, kLastSteps),
      ]);
      if (!alive) return;
      steps = asArray(timeline.steps);
      const scrollY = globalThis.scrollY;
      destroyCharts(charts);
      charts.replaceChildren();
      drawSystemCharts(charts, asArray(series.series), steps, startNs, group);
      renderSelection(selection, group.selected, steps, startNs);
      destroyCharts(below);
      below.replaceChildren(renderLastSteps(asArray(last.steps)));
      renderHeatmaps(below, report.system_usage?.heatmap ?? null);
      globalThis.scrollTo(0, scrollY);
      status.hidden = true;
    } catch (error) {
      showFailure(status, "the run's data", error);
    }
  };
  const following = followRun(run, load);
  return () => {
    alive = false;
    following.stop();
  };
}
