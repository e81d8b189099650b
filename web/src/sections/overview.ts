// The first SageMaker sections: training job summary, system usage statistics and the
// framework metrics summary.

import { barChart, downsampleNote, lineChart, pieChart } from "../charts";
import {
  asArray, el, factTable, shortName, formatBytes, formatNumber, formatSeconds, formatShare, formatTimestamp, isNumber, para, section, table,
} from "../dom";
import { heatmapChart } from "../heatmap";
import type { CpuCounters, OperatorShare, ReportDocument, TimelineSeries, UsageMetric, UtilizationHeatmap } from "../model";

function formatUsage(value: unknown, unit: string | undefined): string {
  if (!isNumber(value)) return "–";
  return unit === "bytes/s" ? `${formatBytes(value)}/s` : `${formatNumber(value)}${unit === "%" ? "%" : ""}`;
}

export function renderJobSummary(doc: ReportDocument): HTMLElement {
  const summary = doc.job_summary;
  const shell = section("job_summary", "Training job summary",
    "When the job ran, how it ended, and how its time splits into initialization, the training loop and finalization.", summary);
  const run = doc.run ?? {};
  const instance = run.instance_type ? `${run.instance_count ?? 1} × ${run.instance_type}` : "unknown (pass --instance/--count to stepscope run)";
  shell.body.append(factTable([
    ["Job", run.job ?? "–"],
    ["Source", run.source ?? "–"],
    ["Command", asArray(run.command).join(" ") || "–"],
    ["Started", formatTimestamp(summary?.start_ns ?? run.start_ns)],
    ["Ended", formatTimestamp(summary?.end_ns ?? run.end_ns)],
    ["Duration", formatSeconds(run.duration_s)],
    ["How it ended", run.ended?.description ?? "–"],
    ["Nodes", asArray(run.nodes).join(", ") || "–"],
    ["Instances", instance],
    ["Dropped events", formatNumber(run.dropped_events ?? 0)],
  ]));
  const clocks = asArray(run.node_clocks);
  if (clocks.length > 0) {
    shell.body.append(el("h3", { text: "Node clocks" }), el("ul", { cls: "node-clocks" },
      ...clocks.map((c) => el("li", { text: `${c.node ?? "?"}: ${c.description || c.state || "–"}` }))));
  }
  const problems = asArray(run.problems);
  if (problems.length > 0) {
    shell.body.append(el("h3", { text: "Problems while recording or loading" }), el("ul", { cls: "problems" }, ...problems.map((p) => el("li", { text: p }))));
  }
  if (!shell.available) return shell.root;
  const phases = asArray(summary?.phases);
  if (phases.length > 0) {
    const box = el("div", { cls: "split" });
    shell.body.append(box);
    box.append(table([
      { title: "Phase", value: (p) => p.name, format: (v) => String(v ?? "–") },
      { title: "Start", value: (p) => p.start_ns, format: formatTimestamp },
      { title: "Duration", value: (p) => p.duration_s, format: formatSeconds, numeric: true },
      { title: "Share", value: (p) => p.share, format: formatShare, numeric: true },
    ], phases));
    pieChart(box, { title: "Job phases (seconds)", labels: phases.map((p) => p.name ?? "?"), values: phases.map((p) => p.duration_s ?? 0) });
  }
  return shell.root;
}

function usageTable(metrics: UsageMetric[]): HTMLElement {
  const percentiles = (["max", "p99", "p95", "p90", "p50", "min"] as const).filter((key) => metrics.some((m) => isNumber(m[key])));
  return table<UsageMetric>([
    { title: "Metric", value: (m) => m.metric, format: (v) => String(v ?? "–") },
    ...percentiles.map((key) => ({ title: key, numeric: true, value: (m: UsageMetric) => formatUsage(m[key], m.unit), format: (v: unknown) => String(v) })),
  ], metrics);
}

// A node's CPU performance counters: their percentiles and IPC per CPU, or why none were counted.
function cpuCounters(counters: CpuCounters): HTMLElement[] {
  const where = counters.scope === "job" ? " (the job's processes)" : counters.scope === "per_cpu" ? " (all CPUs)" : "";
  const parts: HTMLElement[] = [el("h4", { text: `CPU performance counters${where}` })];
  if (counters.why) parts.push(para(counters.why, "note"));
  // The unit beside the name: rates and IPC have no symbol of their own in the cells.
  const metrics = asArray(counters.metrics).map((m) => (m.unit && m.unit !== "%" ? { ...m, metric: `${m.metric ?? "?"} (${m.unit})` } : m));
  if (metrics.length > 0) parts.push(usageTable(metrics));
  const perCpu = asArray(counters.per_cpu);
  if (perCpu.length > 0) {
    parts.push(table([
      { title: "CPU", value: (c) => c.cpu, format: (v) => String(v ?? "–") },
      { title: "IPC over the job", value: (c) => c.ipc, format: (v) => (isNumber(v) ? formatNumber(v) : "–"), numeric: true },
    ], perCpu));
  }
  if (counters.summary && !counters.why) parts.push(para(`Counted: ${counters.summary}.`, "note"));
  return parts;
}

export function renderSystemUsage(doc: ReportDocument): HTMLElement {
  const usage = doc.system_usage;
  const shell = section("system_usage", "System usage statistics",
    "Utilization of CPU, GPU, memory, I/O and network on each node: percentiles over the whole job, then over time.", usage);
  if (!shell.available) return shell.root;
  for (const node of asArray(usage?.nodes)) {
    shell.body.append(el("h3", { text: `Node ${node.node ?? "?"}` }));
    for (const sentence of asArray(node.sentences)) shell.body.append(para(sentence));
    // The percentiles the document carries (SageMaker's table has p90, stepscope's model p95).
    shell.body.append(usageTable(asArray(node.metrics)));
    if (node.cpu_counters) shell.body.append(...cpuCounters(node.cpu_counters));
  }
  // One chart per metric, one line per node, so nodes can be compared at a glance.
  const byLabel = new Map<string, TimelineSeries[]>();
  for (const series of asArray(usage?.timeline)) {
    const label = series.label ?? series.metric ?? "?";
    byLabel.set(label, [...(byLabel.get(label) ?? []), series]);
  }
  if (byLabel.size > 0) shell.body.append(el("h3", { text: "Over time" }));
  const grid = el("div", { cls: "grid" });
  shell.body.append(grid);
  for (const [label, group] of byLabel) {
    const cell = el("div");
    grid.append(cell);
    const unit = group[0]?.unit ?? "";
    lineChart(cell, {
      title: `${label} (${unit})`, xLabel: "seconds since start", yLabel: unit,
      series: group.map((s) => ({ label: s.node ?? "?", x: asArray(s.t_s), y: asArray(s.values) })),
      ...(unit === "%" ? { yMax: 100 } : {}),
    });
    downsampleNote(cell, group.map((s) => ({ downsampled: s.downsampled, original_points: s.original_points, points: asArray(s.values).length })), doc.limits?.max_points_per_series);
  }
  renderHeatmaps(shell.body, usage?.heatmap ?? null);
  return shell.root;
}

// SageMaker's utilization heatmap: one per node, a row per core and GPU, a column per time bucket
// (the report's system usage section and the dashboard's Nodes page).
export function renderHeatmaps(container: HTMLElement, heatmap: UtilizationHeatmap | null): void {
  const rows = asArray(heatmap?.rows);
  if (rows.length === 0 || !isNumber(heatmap?.bucket_s)) return;
  container.append(el("h3", { text: "Utilization of every core and GPU" }));
  container.append(para(`Each row is a CPU core or a GPU, each column ${formatNumber(heatmap.bucket_s)} s of the job; the colour is the mean utilization in it. Hover a cell for its value.`, "note"));
  const nodes = [...new Set(rows.map((r) => r.node ?? "?"))];
  for (const node of nodes) {
    heatmapChart(container, {
      title: `Utilization on node ${node} (%)`, bucketS: heatmap.bucket_s, xLabel: "seconds since start", yLabel: "core / GPU",
      rows: rows.filter((r) => (r.node ?? "?") === node).map((r) => ({ label: r.device ?? "?", values: asArray(r.values) })),
    });
  }
  if (isNumber(heatmap.rows_total) && heatmap.rows_total > rows.length) {
    container.append(para(`Showing ${rows.length} of ${heatmap.rows_total} cores and GPUs.`, "note"));
  }
}

function operatorTable(rows: OperatorShare[]): HTMLElement {
  return table([
    { title: "Operator", value: (r) => r.name, format: (v) => shortName(String(v ?? "–")), hover: (v) => String(v ?? "") },
    { title: "Self", value: (r) => r.self_ms, format: (v) => (isNumber(v) ? `${formatNumber(v)} ms` : "–"), numeric: true },
    { title: "Share of self time", value: (r) => r.share, format: formatShare, numeric: true },
    { title: "Total (with nested)", value: (r) => r.total_ms, format: (v) => (isNumber(v) ? `${formatNumber(v)} ms` : "–"), numeric: true },
    { title: "Calls", value: (r) => r.calls, numeric: true },
  ], rows, { limit: 30 });
}

export function renderFramework(doc: ReportDocument): HTMLElement {
  const framework = doc.framework;
  const shell = section("framework", "Framework metrics summary",
    "Where the framework spent its time: training and evaluation phases, forward/backward/data loading, and the most expensive operators on CPU and GPU.", framework);
  if (!shell.available) return shell.root;
  const grid = el("div", { cls: "grid" });
  shell.body.append(grid);
  const phases = Object.entries(framework?.phases ?? {}).filter(([, v]) => isNumber(v));
  if (phases.length > 0) {
    pieChart(grid, { title: "Training and evaluation phases (seconds)", labels: phases.map(([k]) => k.replace(/_s$/, "")), values: phases.map(([, v]) => v) });
  }
  const general = Object.entries(framework?.general ?? {}).filter(([, v]) => isNumber(v));
  if (general.length > 0) {
    barChart(grid, { title: "Framework time (seconds)", labels: general.map(([k]) => k), series: [{ label: "seconds", values: general.map(([, v]) => v) }], yLabel: "seconds" });
  }
  const workers = framework?.workers;
  if (isNumber(workers?.processes) && workers.processes > 0) {
    const count = workers.processes;
    shell.body.append(para(`${formatNumber(count)} DataLoader worker ${count === 1 ? "process was" : "processes were"} busy ${formatSeconds(workers.busy_s)} in all, in parallel with the training loop: that time overlaps the phases above and is not added to them.`, "note"));
  }
  for (const [key, title] of [["cpu_operators", "CPU operators"], ["gpu_operators", "GPU operators"]] as const) {
    const rows = asArray(framework?.[key]);
    shell.body.append(el("h3", { text: title }));
    if (rows.length === 0) {
      shell.body.append(para(key === "gpu_operators" ? "No GPU operator was recorded." : "No CPU operator was recorded.", "why"));
      continue;
    }
    const top = rows.slice(0, 15);
    barChart(shell.body, { title: `Top ${top.length} ${title} by self time (ms)`, labels: top.map((r) => r.name ?? "?"), series: [{ label: "ms", values: top.map((r) => r.self_ms ?? r.total_ms ?? 0) }], yLabel: "ms", horizontal: true });
    shell.body.append(operatorTable(rows));
  }
  return shell.root;
}
