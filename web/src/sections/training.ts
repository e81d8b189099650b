// The training loop (step durations per node and phase, outliers), GPU utilization and memory
// per GPU, and workload balancing across GPUs.

import { barChart, downsampleNote, histogramChart, kOutlierColor, lineChart } from "../charts";
import { asArray, el, formatBytes, formatMs, formatNumber, formatShare, gridPerNode, isNumber, para, section, table } from "../dom";
import type { GpuHealth, GpuSection, GpuStats, RankStepStats, ReportDocument, StepStats } from "../model";

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
  renderStepCharts(shell.body, doc, rows);
  return shell.root;
}

// SageMaker's step-duration chart: one histogram on shared bins with a series per node (per rank
// where a node ran several; a legend click hides one), and every node's step durations over the
// run with StepOutlier's outliers marked in red (the tooltip names the step).
function renderStepCharts(container: HTMLElement, doc: ReportDocument, rows: StepStats[]): void {
  const grid = el("div", { cls: "grid" });
  container.append(grid);
  const histogramCell = el("div");
  grid.append(histogramCell);
  const histogram = doc.steps?.histogram;
  const series = asArray(histogram?.series);
  histogramChart(histogramCell, {
    title: "Step duration histogram", edges: asArray(histogram?.bin_edges_ms), counts: asArray(series[0]?.counts), xLabel: "step duration (ms)",
    series: series.map((s) => ({ label: s.label ?? "?", counts: asArray(s.counts) })),
  });
  const seriesCell = el("div");
  grid.append(seriesCell);
  const outlierX: number[] = [];
  const outlierY: number[] = [];
  for (const stats of rows) {
    asArray(stats.outlier_points?.step).forEach((step, i) => {
      const duration = asArray(stats.outlier_points?.duration_ms)[i];
      if (isNumber(step) && isNumber(duration)) {
        outlierX.push(step);
        outlierY.push(duration);
      }
    });
  }
  lineChart(seriesCell, {
    title: "Step durations", xLabel: "step", yLabel: "ms",
    series: [
      ...rows.map((stats) => ({ label: `${stats.node ?? "?"} · ${stats.phase ?? "?"}`, x: asArray(stats.series?.step), y: asArray(stats.series?.duration_ms) })),
      ...(outlierX.length > 0 ? [{ label: "StepOutlier outlier", x: outlierX, y: outlierY, points: true, color: kOutlierColor }] : []),
    ],
  });
  downsampleNote(seriesCell, rows.map((stats) => ({ downsampled: stats.series?.downsampled, original_points: stats.series?.original_points, points: asArray(stats.series?.duration_ms).length })), doc.limits?.max_points_per_series);
  for (const stats of rows) {
    const outliers = asArray(stats.outliers);
    if (outliers.length === 0) continue;
    const shown = outliers.slice(0, 30).join(", ");
    const total = isNumber(stats.outliers_total) ? stats.outliers_total : outliers.length;
    seriesCell.append(el("p", { cls: "note", text: `Outlier steps (${stats.node ?? "?"} · ${stats.phase ?? "?"}): ${shown}${total > 30 ? `, … (${total})` : ""}` }));
  }
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
  if (key === "gpu_utilization") renderGpuHealth(shell.body, gpus);
  // One timeline per node, one line per GPU.
  gridPerNode(shell.body, gpus, (cell, node, onNode) => {
    lineChart(cell, {
      title: `${what} on node ${node} (%)`, xLabel: "seconds since start", yLabel: "%", yMax: 100,
      series: onNode.map((g) => ({ label: `GPU ${g.gpu ?? "?"}`, x: asArray(g.series?.t_s), y: asArray(g.series?.values) })),
    });
    downsampleNote(cell, onNode.map((g) => ({ downsampled: g.series?.downsampled, original_points: g.series?.original_points, points: asArray(g.series?.values).length })), doc.limits?.max_points_per_series);
  });
  return shell.root;
}

const kThrottleLabels: Record<string, string> = {
  power_cap: "power cap", hw_slowdown: "HW slowdown", sw_thermal: "SW thermal", hw_thermal: "HW thermal",
  hw_power_brake: "power brake", sync_boost: "sync boost", idle: "idle", app_clocks: "app clocks",
};

// "power cap 40%, HW thermal 5%": the reasons other than idle that were ever active, largest first.
function throttleReasons(health: GpuHealth | undefined): string {
  const reasons = Object.entries(health?.throttle?.reasons ?? {})
    .filter(([reason, share]) => reason !== "idle" && isNumber(share) && share > 0)
    .sort((a, b) => b[1] - a[1]);
  return reasons.length ? reasons.map(([reason, share]) => `${kThrottleLabels[reason] ?? reason} ${formatShare(share)}`).join(", ") : "none";
}

function bytesPerSecond(value: unknown): string {
  return isNumber(value) ? `${formatBytes(value)}/s` : "–";
}

// What NVML recorded beyond utilization (PCIe, throttling, ECC and Xid errors, GPM activity, the
// job's processes), for the GPUs where it did; nothing for runs without it.
function renderGpuHealth(body: HTMLElement, gpus: GpuStats[]): void {
  const withHealth = gpus.filter((g) => g.health !== undefined);
  if (!withHealth.length) return;
  body.append(el("h3", { text: "GPU health" }),
    para("Clock throttling (share of samples a reason other than idle held the clocks down; GPUThrottling), PCIe traffic, ECC and Xid errors during the run (GPUErrors) and GPM activity, where the driver reports them.", "note"));
  body.append(table<GpuStats>([
    { title: "GPU", value: gpuLabel, format: (v) => String(v) },
    { title: "throttled", value: (g) => g.health?.throttle?.throttled_share, format: formatShare, numeric: true },
    { title: "throttle reasons", value: (g) => throttleReasons(g.health), format: (v) => String(v) },
    { title: "PCIe TX (mean)", value: (g) => g.health?.pcie_tx_bytes_per_s?.mean, format: bytesPerSecond, numeric: true },
    { title: "PCIe RX (mean)", value: (g) => g.health?.pcie_rx_bytes_per_s?.mean, format: bytesPerSecond, numeric: true },
    { title: "ECC corrected", value: (g) => g.health?.ecc_corrected_errors, numeric: true },
    { title: "ECC uncorrected", value: (g) => g.health?.ecc_uncorrected_errors, numeric: true },
    { title: "Xid", value: (g) => (g.health?.xid_count ? `${g.health.xid_count} (${[...new Set(asArray(g.health.xid).map((x) => x.code))].join(", ")})` : "none"), format: (v) => String(v) },
    { title: "SM activity", value: (g) => g.health?.sm_activity_pct?.mean, format: (v) => (isNumber(v) ? `${formatNumber(v)}%` : "–"), numeric: true },
    { title: "tensor activity", value: (g) => g.health?.tensor_activity_pct?.mean, format: (v) => (isNumber(v) ? `${formatNumber(v)}%` : "–"), numeric: true },
  ], withHealth));
  type ProcessRow = { gpu: string; pid?: number; sm?: number; smMax?: number; memory?: number };
  const processes: ProcessRow[] = withHealth.flatMap((g) => asArray(g.health?.processes).map((p) => ({
    gpu: gpuLabel(g), pid: p.pid, sm: p.sm_util_pct?.mean, smMax: p.sm_util_pct?.max, memory: p.memory_used_bytes?.max,
  })));
  if (processes.length) {
    body.append(table<ProcessRow>([
      { title: "GPU", value: (r) => r.gpu, format: (v) => String(v) },
      { title: "pid", value: (r) => r.pid, format: (v) => (isNumber(v) ? String(v) : "–"), numeric: true },
      { title: "SM util (mean)", value: (r) => r.sm, format: (v) => (isNumber(v) ? `${formatNumber(v)}%` : "–"), numeric: true },
      { title: "SM util (max)", value: (r) => r.smMax, format: (v) => (isNumber(v) ? `${formatNumber(v)}%` : "–"), numeric: true },
      { title: "GPU memory (peak)", value: (r) => r.memory, format: formatBytes, numeric: true },
    ], processes, { caption: "The job's processes on each GPU", limit: 32 }));
  }
}

export function renderGpuUtilization(doc: ReportDocument): HTMLElement {
  return renderGpuSection(doc, "gpu_utilization", "GPU utilization analysis",
    "How busy each GPU was over the job: percentiles per GPU and the utilization over time.", "GPU utilization");
}

export function renderGpuMemory(doc: ReportDocument): HTMLElement {
  return renderGpuSection(doc, "gpu_memory", "GPU memory",
    "How much of each GPU's memory was in use: percentiles per GPU and over time (GPUMemoryIncrease, MemoryNearCapacity).", "GPU memory used");
}

// LoadBalancing's per-GPU utilization histograms overlaid, one chart per node: GPUs that share
// the work evenly draw the same curve; a GPU whose mass sits lower idles while the others work.
export function renderWorkloadBalancing(doc: ReportDocument): HTMLElement {
  const data = doc.workload_balancing;
  const shell = section("workload_balancing", "Workload balancing",
    "Whether the GPUs of each node carried similar loads (LoadBalancing): an imbalance leaves some GPUs waiting for the others.", data);
  if (!shell.available) return shell.root;
  const edges = asArray(data?.histograms?.bin_edges_pct);
  const gpus = asArray(data?.histograms?.gpus);
  if (edges.length < 2 || gpus.length === 0) {
    shell.body.append(para("LoadBalancing recorded no utilization histogram for this run.", "note"));
    return shell.root;
  }
  const centres = edges.slice(0, -1).map((edge, i) => (edge + (edges[i + 1] ?? edge)) / 2);
  gridPerNode(shell.body, gpus, (cell, node, onNode) => {
    lineChart(cell, {
      title: `GPU utilization histograms on node ${node}`, xLabel: "GPU utilization (%)", yLabel: "samples",
      series: onNode.map((g) => ({ label: g.gpu ?? "?", x: centres, y: asArray(g.counts) })),
    });
  });
  const distances = asArray(data?.histograms?.distances);
  if (distances.length > 0) {
    shell.body.append(para("GPU pairs whose histograms differ by more than LoadBalancing's threshold (square root of the Jensen-Shannon divergence):", "note"));
    shell.body.append(table([
      { title: "Node", value: (d) => d.node, format: (v) => String(v ?? "?") },
      { title: "GPUs", value: (d) => `${d.a ?? "?"} – ${d.b ?? "?"}`, format: (v) => String(v) },
      { title: "Distance", value: (d) => d.distance, format: (v) => formatNumber(v), numeric: true },
    ], distances, { limit: 30 }));
  }
  return shell.root;
}
