// The GPU page's per-step section, drawn as the report model states it (gpu_idle,
// docs/report-model.md; computed once in src/analysis/gpu_idle_attribution.h): for each GPU of a
// rank, what its steps spent on the GPU and why it idled. One sentence names the largest cause of
// idle time, because that decides what to change; the charts show the split over all steps and
// step by step. Shared by the report and the dashboard.

import { barChart } from "../charts";
import { asArray, formatMs, formatNumber, para, section, subheading, table } from "../dom";
import type { GpuIdleGpu, GpuIdleParts, ReportDocument } from "../model";

type PartKey = "compute_ms" | "communication_ms" | "memcpy_ms" | "memset_ms" | "data_wait_ms" | "sync_ms" | "other_ms" | "host_bound_ms";

// In the model's order: busy parts first, then the causes of idle time.
const kParts: { key: PartKey; label: string; idle: boolean }[] = [
  { key: "compute_ms", label: "compute", idle: false },
  { key: "communication_ms", label: "communication (NCCL)", idle: false },
  { key: "memcpy_ms", label: "memcpy", idle: false },
  { key: "memset_ms", label: "memset", idle: false },
  { key: "data_wait_ms", label: "idle: data wait", idle: true },
  { key: "sync_ms", label: "idle: synchronization", idle: true },
  { key: "other_ms", label: "idle: waiting on queued work", idle: true },
  { key: "host_bound_ms", label: "idle: host-bound", idle: true },
];

// What to look at for each cause of idle time.
const kAdvice: Record<string, string> = {
  data_wait_ms: "the input pipeline: more DataLoader workers, pinned memory, prefetching",
  sync_ms: "synchronizing calls in the loop (.item(), .cpu(), torch.cuda.synchronize, blocking copies)",
  other_ms: "dependencies between streams and events that hold queued work back",
  host_bound_ms: "the CPU side of the step: launch overhead, small kernels (torch.compile or CUDA graphs batch them)",
};

function gpuLabel(gpu: GpuIdleGpu): string {
  const rank = gpu.rank === null || gpu.rank === undefined ? "" : ` rank ${gpu.rank}`;
  return `${gpu.node} GPU ${gpu.gpu}${rank} ${gpu.phase}`;
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${formatNumber((100 * part) / whole)} %` : "–";
}

// "On node GPU 0 rank 0 TRAIN the GPU idled 78 % of its 12 steps' time; most of it host-bound
// (60 % of the step time): look at ..."
function sentence(gpu: GpuIdleGpu): string {
  const total = gpu.total;
  const steps = `${formatNumber(gpu.steps_total)} step${gpu.steps_total === 1 ? "" : "s"}`;
  const idle = kParts.filter((p) => p.idle).map((p) => ({ ...p, ms: total[p.key] ?? 0 })).sort((a, b) => b.ms - a.ms);
  const head = `On ${gpuLabel(gpu)} the GPU idled ${percent(total.idle_ms, total.step_ms)} of its ${steps}' time (${formatMs(total.idle_ms)} of ${formatMs(total.step_ms)})`;
  const largest = idle[0];
  if (!largest || largest.ms <= 0) return `${head}.`;
  return `${head}; most of it ${largest.label.replace("idle: ", "")} (${percent(largest.ms, total.step_ms)} of the step time): look at ${kAdvice[largest.key]}.`;
}

function partsSeries(rows: GpuIdleParts[]): { label: string; values: number[] }[] {
  return kParts.map((p) => ({ label: p.label, values: rows.map((r) => r[p.key] ?? 0) }));
}

export function renderGpuIdle(doc: ReportDocument): HTMLElement {
  const data = doc.gpu_idle;
  const shell = section("gpu_idle", "GPU time per step",
    "Each step's time on each GPU of its rank: compute, communication, copies and memsets while the GPU worked, and why it idled otherwise — waiting for data, for a synchronizing call, for queued work held back, or for the CPU to launch anything (host-bound). Each instant counts once; the parts add up to the step time.",
    data);
  if (!shell.available) return shell.root;
  const gpus = asArray(data?.gpus);
  for (const gpu of gpus) shell.body.append(para(sentence(gpu)));
  barChart(shell.body, {
    title: "Step time on each GPU, all steps (ms)", labels: gpus.map(gpuLabel), horizontal: true, stacked: true,
    yLabel: "ms", categoryLabel: "GPU", series: partsSeries(gpus.map((g) => g.total)),
  });
  for (const gpu of gpus) {
    const steps = asArray(gpu.steps);
    if (steps.length === 0) continue;
    shell.body.append(subheading(gpuLabel(gpu), "h4"));
    const shown = steps.length < gpu.steps_total ? `the ${steps.length} steps it idled most in, of ${formatNumber(gpu.steps_total)}` : "each step";
    barChart(shell.body, {
      title: `${gpuLabel(gpu)}: ${shown} (ms)`, labels: steps.map((s) => `step ${s.step}${s.disturbed ? " *" : ""}`), stacked: true,
      yLabel: "ms", categoryLabel: "step", series: partsSeries(steps),
    });
    if (steps.some((s) => s.disturbed)) shell.body.append(para("* a disturbed step (an epoch's first step, a detail window, evaluation).", "note"));
  }
  shell.body.append(table([
    { title: "GPU", value: (g: GpuIdleGpu) => gpuLabel(g) },
    { title: "steps", value: (g: GpuIdleGpu) => formatNumber(g.steps_total), numeric: true },
    { title: "step time", value: (g: GpuIdleGpu) => formatMs(g.total.step_ms), numeric: true },
    ...kParts.map((p) => ({ title: p.label, numeric: true, value: (g: GpuIdleGpu) => percent(g.total[p.key] ?? 0, g.total.step_ms) })),
    { title: "kernels (in CUDA graphs)", value: (g: GpuIdleGpu) => `${formatNumber(g.total.kernels)} (${formatNumber(g.total.graph_kernels)})`, numeric: true },
  ], gpus));
  return shell.root;
}
