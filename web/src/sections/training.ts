// The training loop (step durations per node and phase, outliers), GPU utilization and memory
// per GPU, and workload balancing across GPUs.

import { barChart, downsampleNote, histogramChart, lineChart } from "../charts";
import { renderDetails } from "../details";
import { asArray, el, formatMs, formatNumber, formatShare, isNumber, para, section, table } from "../dom";
import type { GpuSection, GpuStats, RankStepStats, ReportDocument, StepStats } from "../model";

export function renderSteps(doc: ReportDocument): HTMLElement {
  const steps = doc.steps;
  const shell = section("steps", "Analyzing the training loop",
    "Step durations per node and phase: their distribution, how they changed over the run, and the outliers (StepOutlier).", steps);
  if (!shell.available) return shell.root;
  const rows = asArray(steps?.nodes);
  shell.body.append(table<StepStats>([
    { title: "Node", value: (s) => s.node, format: (v) => String(v ?? "?") },
    { title: "Phase", value: (s) => s.phase, format: (v) => String(v ?? "?") },
    { title: "Steps", value: (s) => s.count, numeric: true },
    ...(["mean_ms", "std_ms", "min_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"] as const).map((key) => ({
      title: key.replace(/_ms$/, ""), value: (s: StepStats) => s[key], format: formatMs, numeric: true,
    })),
    { title: "Outliers", value: (s) => asArray(s.outliers).length, numeric: true },
  ], rows));
  const disturbed = rows.reduce((sum, s) => sum + (isNumber(s.disturbed) ? s.disturbed : 0), 0);
  if (disturbed > 0) {
    shell.body.append(para(`${disturbed} ${disturbed === 1 ? "step" : "steps"} that stepscope's detail windows ran in ${disturbed === 1 ? "is" : "are"} left out of these statistics.`, "note"));
  }
  const ranks = asArray(steps?.ranks);
  if (ranks.length > 0) {
    shell.body.append(el("h3", { text: "Step time per rank" }));
    shell.body.append(para("Nodes that ran several ranks (torchrun --nproc-per-node > 1), rank by rank. DDP ranks wait for each other in backward (the gradient all-reduce), so their step times agree; the rank the others wait for spends the most time outside backward, and the Straggler rule names it.", "note"));
    shell.body.append(table<RankStepStats>([
      { title: "Node", value: (r) => r.node, format: (v) => String(v ?? "?") },
      { title: "Rank", value: (r) => r.rank, numeric: true },
      { title: "Local rank", value: (r) => r.local_rank, format: (v) => (isNumber(v) && v >= 0 ? String(v) : "–"), numeric: true },
      { title: "PID", value: (r) => asArray(r.pids).join(", "), format: (v) => String(v ?? "") },
      { title: "Phase", value: (r) => r.phase, format: (v) => String(v ?? "?") },
      { title: "Steps", value: (r) => r.count, numeric: true },
      ...(["mean_ms", "p50_ms", "p95_ms", "max_ms"] as const).map((key) => ({
        title: key.replace(/_ms$/, ""), value: (r: RankStepStats) => r[key], format: formatMs, numeric: true,
      })),
      { title: "backward p50", value: (r) => r.backward_p50_ms, format: formatMs, numeric: true },
      { title: "outside backward p50", value: (r) => r.outside_backward_p50_ms, format: formatMs, numeric: true },
      { title: "Data wait", value: (r) => r.data_wait_share, format: formatShare, numeric: true },
    ], ranks));
    if (isNumber(steps?.ranks_total) && steps.ranks_total > ranks.length) {
      shell.body.append(para(`Showing ${ranks.length} of ${steps.ranks_total} rank rows.`, "note"));
    }
  }
  for (const stats of rows) {
    const name = `${stats.node ?? "?"} · ${stats.phase ?? "?"}`;
    shell.body.append(el("h3", { text: `Node ${name}` }));
    const grid = el("div", { cls: "grid" });
    shell.body.append(grid);
    const histogramCell = el("div");
    grid.append(histogramCell);
    histogramChart(histogramCell, {
      title: `Step duration histogram (${name})`, edges: asArray(stats.histogram?.bin_edges_ms), counts: asArray(stats.histogram?.counts), xLabel: "step duration (ms)",
    });
    const seriesCell = el("div");
    grid.append(seriesCell);
    const stepNumbers = asArray(stats.series?.step);
    const durations = asArray(stats.series?.duration_ms);
    const outliers = new Set(asArray(stats.outliers));
    const outlierX: number[] = [];
    const outlierY: number[] = [];
    stepNumbers.forEach((step, i) => {
      const duration = durations[i];
      if (outliers.has(step) && isNumber(duration)) {
        outlierX.push(step);
        outlierY.push(duration);
      }
    });
    lineChart(seriesCell, {
      title: `Step durations (${name})`, xLabel: "step", yLabel: "ms",
      series: [{ label: "duration", x: stepNumbers, y: durations }, ...(outlierX.length > 0 ? [{ label: "outlier", x: outlierX, y: outlierY, points: true }] : [])],
    });
    downsampleNote(seriesCell, [{ downsampled: stats.series?.downsampled, original_points: stats.series?.original_points, points: durations.length }], doc.limits?.max_points_per_series);
    const outlierList = asArray(stats.outliers);
    if (outlierList.length > 0) {
      const shown = outlierList.slice(0, 30).join(", ");
      seriesCell.append(el("p", { cls: "note", text: `Outlier steps: ${shown}${outlierList.length > 30 ? `, … (${outlierList.length})` : ""}` }));
    }
  }
  return shell.root;
}

function gpuLabel(gpu: GpuStats): string {
  return `${gpu.node ?? "?"} GPU ${gpu.gpu ?? "?"}`;
}

function renderGpuSection(doc: ReportDocument, key: "gpu_utilization" | "gpu_memory", title: string, explanation: string, what: string): HTMLElement {
  const data: GpuSection | undefined = doc[key];
  const shell = section(key, title, explanation, data);
  if (!shell.available) return shell.root;
  const gpus = asArray(data?.gpus);
  const percentiles = ["min", "p5", "p25", "p50", "p75", "p95", "max"] as const;
  shell.body.append(table<GpuStats>([
    { title: "GPU", value: gpuLabel, format: (v) => String(v) },
    ...percentiles.map((p) => ({ title: p, value: (g: GpuStats) => g[p], format: (v: unknown) => (isNumber(v) ? `${formatNumber(v)}%` : "–"), numeric: true })),
  ], gpus));
  barChart(shell.body, {
    title: `${what} per GPU (%)`, labels: gpus.map(gpuLabel), yLabel: "%",
    series: (["p50", "p95", "max"] as const).map((p) => ({ label: p, values: gpus.map((g) => (isNumber(g[p]) ? g[p] : 0)) })),
  });
  // One timeline per node, one line per GPU.
  const nodes = [...new Set(gpus.map((g) => g.node ?? "?"))];
  const grid = el("div", { cls: "grid" });
  shell.body.append(grid);
  for (const node of nodes) {
    const cell = el("div");
    grid.append(cell);
    const onNode = gpus.filter((g) => (g.node ?? "?") === node);
    lineChart(cell, {
      title: `${what} on node ${node} (%)`, xLabel: "seconds since start", yLabel: "%", yMax: 100,
      series: onNode.map((g) => ({ label: `GPU ${g.gpu ?? "?"}`, x: asArray(g.series?.t_s), y: asArray(g.series?.values) })),
    });
    downsampleNote(cell, onNode.map((g) => ({ downsampled: g.series?.downsampled, original_points: g.series?.original_points, points: asArray(g.series?.values).length })), doc.limits?.max_points_per_series);
  }
  return shell.root;
}

export function renderGpuUtilization(doc: ReportDocument): HTMLElement {
  return renderGpuSection(doc, "gpu_utilization", "GPU utilization analysis",
    "How busy each GPU was over the job: percentiles per GPU and the utilization over time.", "GPU utilization");
}

export function renderGpuMemory(doc: ReportDocument): HTMLElement {
  return renderGpuSection(doc, "gpu_memory", "GPU memory",
    "How much of each GPU's memory was in use: percentiles per GPU and over time (GPUMemoryIncrease, MemoryNearCapacity).", "GPU memory used");
}

export function renderWorkloadBalancing(doc: ReportDocument): HTMLElement {
  const data = doc.workload_balancing;
  const shell = section("workload_balancing", "Workload balancing",
    "Whether the GPUs of each node carried similar loads (LoadBalancing): an imbalance leaves some GPUs waiting for the others.", data);
  if (shell.available) renderDetails(shell.body, data?.details, "workload balancing");
  return shell.root;
}
