// The GPU page's activity sections, drawn as the report model states them (gpu_activity and
// annotations, docs/report-model.md; computed once in src/analysis/gpu_activity.h and
// annotation_durations.h): each GPU's active span split into kernels, copies, memsets,
// synchronization and idle time, its memory operations by kind, its kernels by precision, and the
// duration histogram of the annotation the reader picks. Shared by the report and the dashboard.

import { barChart, destroyCharts, histogramChart } from "../charts";
import { asArray, el, formatBytes, formatMs, formatNumber, para, section, shortName, subheading, table } from "../dom";
import type { AnnotationDurations, GpuActivity, ReportDocument } from "../model";

const kWorkLabels: Record<string, string> = { kernel: "kernels", memcpy: "memcpy", memset: "memset", sync: "synchronization", idle: "idle" };

function gpuLabel(gpu: GpuActivity): string {
  return `${gpu.node} GPU ${gpu.gpu}`;
}

function memoryLabel(kind: string, hostMemory: string): string {
  return hostMemory ? `${kind} (${hostMemory})` : kind;
}

function workMs(gpu: GpuActivity, work: string): number {
  return gpu.split.find((s) => s.work === work)?.ms ?? 0;
}

export function renderGpuActivity(doc: ReportDocument): HTMLElement {
  const data = doc.gpu_activity;
  const shell = section("gpu_activity", "GPU activity",
    "What each GPU did between its first and last device operation: kernels, memory copies, memsets, synchronization, or nothing (idle). Overlapping streams count each instant once, for the first of kernel, memcpy, memset, sync running then.", data);
  if (!shell.available) return shell.root;
  const gpus = asArray(data?.gpus);
  const labels = gpus.map(gpuLabel);
  barChart(shell.body, {
    title: "GPU active vs idle (ms)", labels, horizontal: true, stacked: true, yLabel: "ms", categoryLabel: "GPU",
    series: [
      { label: "active (kernels, memcpy, memset)", values: gpus.map((g) => g.busy_ms) },
      { label: "synchronization", values: gpus.map((g) => workMs(g, "sync")) },
      { label: "idle", values: gpus.map((g) => g.idle_ms) },
    ],
  });
  barChart(shell.body, {
    title: "GPU activity split (% of the active span)", labels, horizontal: true, stacked: true, yLabel: "% of the active span", categoryLabel: "GPU",
    series: Object.entries(kWorkLabels).map(([work, label]) => ({
      label, values: gpus.map((g) => 100 * (g.split.find((s) => s.work === work)?.share ?? 0)),
    })),
  });
  shell.body.append(table([
    { title: "GPU", value: (g: GpuActivity) => gpuLabel(g) },
    { title: "active span", value: (g: GpuActivity) => formatMs(g.span_ms), numeric: true },
    ...Object.entries(kWorkLabels).map(([work, label]) => ({
      title: label, numeric: true,
      value: (g: GpuActivity) => {
        const share = g.split.find((s) => s.work === work);
        return share ? `${formatMs(share.ms)} (${formatNumber(100 * share.share)} %)` : "–";
      },
    })),
  ], gpus));

  shell.body.append(subheading("Memory operations"));
  const kinds = [...new Set(gpus.flatMap((g) => asArray(g.memory_operations).map((m) => memoryLabel(m.kind, m.host_memory))))];
  if (kinds.length === 0) {
    shell.body.append(para("No memory copy or memset ran on the GPUs.", "note"));
  } else {
    const series = (value: (m: GpuActivity["memory_operations"][number]) => number) => gpus.map((g) => ({
      label: gpuLabel(g),
      values: kinds.map((k) => {
        const row = asArray(g.memory_operations).find((m) => memoryLabel(m.kind, m.host_memory) === k);
        return row ? value(row) : 0;
      }),
    }));
    barChart(shell.body, { title: "Memory operations by kind (ms)", labels: kinds, series: series((m) => m.total_ms), yLabel: "ms", categoryLabel: "operation" });
    barChart(shell.body, { title: "Memory operations by kind (count)", labels: kinds, series: series((m) => m.count), yLabel: "operations", categoryLabel: "operation" });
    const rows = gpus.flatMap((g) => asArray(g.memory_operations).map((m) => ({ gpu: gpuLabel(g), ...m })));
    shell.body.append(table([
      { title: "GPU", value: (r: (typeof rows)[number]) => r.gpu },
      { title: "operation", value: (r: (typeof rows)[number]) => memoryLabel(r.kind, r.host_memory) },
      { title: "count", value: (r: (typeof rows)[number]) => formatNumber(r.count), numeric: true },
      { title: "time", value: (r: (typeof rows)[number]) => formatMs(r.total_ms), numeric: true },
      { title: "bytes", value: (r: (typeof rows)[number]) => (r.bytes === null ? "not recorded" : formatBytes(r.bytes)), numeric: true },
    ], rows));
  }

  shell.body.append(subheading("Kernel precision"));
  shell.body.append(para("Inferred from kernel names (cuBLAS/cuDNN type letters such as sgemm and h16816gemm, CUTLASS and xmma operand types such as tf32, f16, bf16, e4m3, and the element types of PyTorch's and NCCL's kernels), else from the name of the operator that launched the kernel. A kernel whose name states no type is counted as unknown.", "note"));
  const precisions = [...new Set(gpus.flatMap((g) => asArray(g.precisions).map((p) => p.precision)))];
  const perPrecision = (value: (p: GpuActivity["precisions"][number]) => number) => gpus.map((g) => ({
    label: gpuLabel(g),
    values: precisions.map((name) => {
      const row = asArray(g.precisions).find((p) => p.precision === name);
      return row ? value(row) : 0;
    }),
  }));
  if (precisions.length === 0) {
    shell.body.append(para("No kernel ran on the GPUs.", "note"));
  } else {
    barChart(shell.body, { title: "Kernel time per precision (ms)", labels: precisions, series: perPrecision((p) => p.total_ms), yLabel: "ms", categoryLabel: "precision" });
    barChart(shell.body, { title: "Kernel launches per precision", labels: precisions, series: perPrecision((p) => p.launches), yLabel: "launches", categoryLabel: "precision" });
    const examples = gpus.flatMap((g) => asArray(g.precisions).flatMap((p) => asArray(p.examples).map((e) => ({ gpu: gpuLabel(g), precision: p.precision, ...e }))));
    shell.body.append(table([
      { title: "GPU", value: (r: (typeof examples)[number]) => r.gpu },
      { title: "precision", value: (r: (typeof examples)[number]) => r.precision },
      { title: "kernel", value: (r: (typeof examples)[number]) => shortName(r.kernel) },
      { title: "decided by", value: (r: (typeof examples)[number]) => (r.pattern ? `${r.from_operator ? "operator name" : "kernel name"}: ${r.pattern}` : "nothing in the name") },
      { title: "time", value: (r: (typeof examples)[number]) => formatMs(r.total_ms), numeric: true },
      { title: "launches", value: (r: (typeof examples)[number]) => formatNumber(r.launches), numeric: true },
    ], examples, { caption: "The kernels that weigh most in each precision" }));
  }
  return shell.root;
}

function annotationLabel(row: AnnotationDurations): string {
  return row.where === "gpu" ? `${row.name} (GPU)` : row.name;
}

export function renderAnnotations(doc: ReportDocument): HTMLElement {
  const data = doc.annotations;
  const shell = section("annotations", "Annotation durations",
    "How long each user annotation took each time it ran (stepscope.annotate, record_function ranges): pick one to see its histogram.", data);
  if (!shell.available) return shell.root;
  const rows = asArray(data?.annotations);
  if (rows.length === 0) {
    shell.body.append(para("No annotation ran.", "note"));
    return shell.root;
  }
  // Option text, never markup: annotation names come from the traced program.
  const picker = el("select", { cls: "annotation-picker", attrs: { "aria-label": "annotation" } });
  rows.forEach((row, i) => picker.append(el("option", { text: `${annotationLabel(row)} · ${formatNumber(row.count)} runs`, attrs: { value: String(i) } })));
  const stats = para("", "annotation-stats");
  const chartBox = el("div", { cls: "annotation-histogram" });
  const draw = () => {
    const row = rows[Number(picker.value)] ?? rows[0];
    if (!row) return;
    destroyCharts(chartBox);
    chartBox.replaceChildren();
    stats.textContent = `${annotationLabel(row)}: ${formatNumber(row.count)} runs, p50 ${formatMs(row.p50_ms)}, p95 ${formatMs(row.p95_ms)}, min ${formatMs(row.min_ms)}, max ${formatMs(row.max_ms)}, ${formatMs(row.total_ms)} in all.`;
    histogramChart(chartBox, { title: `Durations of ${shortName(annotationLabel(row), 60)}`, edges: row.histogram.edges_ms, counts: row.histogram.counts, xLabel: "duration (ms)" });
  };
  picker.addEventListener("change", draw);
  shell.body.append(el("label", { cls: "annotation-pick" }, "Annotation ", picker), stats, chartBox);
  draw();
  if ((data?.names_total ?? 0) > rows.length) {
    shell.body.append(para(`The ${rows.length} annotations that ran most often of ${formatNumber(data?.names_total)}.`, "note"));
  }
  return shell.root;
}
