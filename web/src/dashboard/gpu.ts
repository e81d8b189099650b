// The GPU page (SageMaker Profiler's GPU dashboard) from what the report model carries about the
// GPUs: utilization and memory per GPU, balance across GPUs, each GPU's activity (active vs idle,
// the split into kernels, memcpy, memset and sync, memory operations by kind, kernel time and
// launches per precision), the step-time distribution, the GPU kernels the framework ran (CUPTI
// detail windows or imported Kineto traces) by time and by launches, and the duration histogram
// of the annotation the reader picks. A part the run has no data for says why, in the words of the
// document's own availability sentence.

import { barChart } from "../charts";
import { asArray, para, section } from "../dom";
import type { OperatorShare, ReportDocument } from "../model";
import type { ReportSection } from "../report_sections";
import { renderAnnotations, renderGpuActivity } from "../sections/gpu_activity";
import { renderGpuIdle } from "../sections/gpu_idle";
import { renderGpuMemory, renderGpuUtilization, renderSteps, renderWorkloadBalancing } from "../sections/training";
import { renderLiveReport } from "./live_report";
import type { PageCleanup, RunFrame } from "./run_page";

const kTopKernels = 15;

function topBy(rows: OperatorShare[], value: (row: OperatorShare) => number): OperatorShare[] {
  return [...rows].sort((a, b) => value(b) - value(a)).slice(0, kTopKernels);
}

function renderKernels(doc: ReportDocument): HTMLElement {
  const kernels = asArray(doc.framework?.gpu_operators);
  const why = doc.framework?.available === false
    ? doc.framework.why ?? "The run has no framework metrics."
    : "No GPU kernel was recorded: kernels come from CUPTI in a detail window of a stepscope run on a GPU (docs/detail-windows.md) or from imported PyTorch profiler (Kineto) traces.";
  const shell = section("gpu_kernels", "GPU kernels",
    `The ${kTopKernels} kernels and memory operations that took the most GPU time, and the ${kTopKernels} launched most often.`,
    kernels.length > 0 ? { available: true } : { available: false, why });
  if (!shell.available) return shell.root;
  const byTime = topBy(kernels, (k) => k.self_ms ?? k.total_ms ?? 0);
  const byCalls = topBy(kernels, (k) => k.calls ?? 0);
  barChart(shell.body, { title: `Top ${byTime.length} by GPU time (ms)`, labels: byTime.map((k) => k.name ?? "?"), series: [{ label: "ms", values: byTime.map((k) => k.self_ms ?? k.total_ms ?? 0) }], yLabel: "ms", horizontal: true });
  barChart(shell.body, { title: `Top ${byCalls.length} by launches`, labels: byCalls.map((k) => k.name ?? "?"), series: [{ label: "launches", values: byCalls.map((k) => k.calls ?? 0) }], yLabel: "launches", horizontal: true });
  shell.body.append(para(`${kernels.length} kernels and memory operations in all; the Overview's framework section lists each with its share.`, "note"));
  return shell.root;
}

const kGpuSections: ReportSection[] = [
  renderGpuUtilization, renderGpuActivity, renderGpuIdle, renderKernels, renderSteps, renderAnnotations, renderGpuMemory, renderWorkloadBalancing,
];

export function renderGpu(body: HTMLElement, run: string, frame: RunFrame): PageCleanup {
  return renderLiveReport(body, run, frame, kGpuSections);
}
