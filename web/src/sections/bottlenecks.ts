// The SageMaker sections backed by one or two rules' Details each: data loading, batch size,
// CPU and I/O bottlenecks, and stepscope's step-time breakdown.

import { boxPlotChart } from "../box_plot";
import { histogramChart, lineChart, pieChart, type XYSeries } from "../charts";
import { histogramOf, isObject, type JsonObject, renderDetails } from "../details";
import { asArray, el, formatNumber, gridPerNode, isNumber, para, section } from "../dom";
import type { DetailsSection, Json, ReportDocument } from "../model";

export function renderDataLoading(doc: ReportDocument): HTMLElement {
  const data = doc.data_loading;
  const shell = section("data_loading", "Dataloading analysis",
    "How many data-loader workers ran and how long batches took to arrive (Dataloader), and whether steps waited for data (DataloaderStarvation).", data);
  if (!shell.available) return shell.root;
  const loader = isObject(data?.dataloader) ? data.dataloader : {};
  shell.body.append(el("h3", { text: "Data loaders" }));
  shell.body.append(para(loaderSentence(loader), "lead"));
  const times = loader["dataloading_time"];
  const histogram = isObject(times) ? histogramOf(times) : null;
  if (isObject(times) && histogram) {
    // SageMaker writes seconds; batches take milliseconds.
    const ms = (seconds: Json | undefined) => (isNumber(seconds) ? `${formatNumber(seconds * 1000, 3)} ms` : "?");
    shell.body.append(para(`Batch loading time: p25 ${ms(times["p25"])} · p50 ${ms(times["p50"])} · p95 ${ms(times["p95"])}`, "stats"));
    histogramChart(shell.body, { title: "Batch loading time", edges: histogram.edges.map((s) => s * 1000), counts: histogram.counts, xLabel: "batch loading time (ms)" });
  } else {
    shell.body.append(para("Dataloader recorded no batch loading times.", "note"));
  }
  shell.body.append(el("h3", { text: "Waiting for data" }));
  const waits = waitSentences(data?.starvation);
  if (waits.length === 0) shell.body.append(para("DataloaderStarvation measured no steps.", "note"));
  for (const text of waits) shell.body.append(para(text));
  return shell.root;
}

// "2 data loaders, num_workers 0 on a host with 8 cores, pin_memory off: batches are loaded in
// the training process." — workers against cores is what the advice turns on.
function loaderSentence(loader: JsonObject): string {
  const count = isNumber(loader["dataloaders"]) ? loader["dataloaders"] : null;
  const workers = isNumber(loader["num_workers"]) ? loader["num_workers"] : null;
  const cores = isNumber(loader["cores"]) ? loader["cores"] : null;
  const parts: string[] = [];
  if (count !== null) parts.push(`${formatNumber(count)} data loader${count === 1 ? "" : "s"}`);
  if (workers !== null) parts.push(`num_workers ${formatNumber(workers)}${cores !== null ? ` on a host with ${formatNumber(cores)} cores` : ""}`);
  else if (cores !== null) parts.push(`a host with ${formatNumber(cores)} cores`);
  const pin = loader["pin_memory"];
  if (pin !== undefined && pin !== null) parts.push(`pin_memory ${pin === true || pin === 1 ? "on" : "off"}`);
  if (parts.length === 0) return "Dataloader saw no data loader starting.";
  let verdict = "";
  if (workers === 0) verdict = ": batches are loaded in the training process, between steps";
  else if (workers !== null && cores !== null && workers > cores) verdict = ": more workers than cores, so they queue for CPU";
  return `${parts.join(", ")}${verdict}.`;
}

// One sentence per node and step phase: DataloaderStarvation's share of step time spent waiting.
function waitSentences(starvation: Json | undefined): string[] {
  const out: string[] = [];
  if (!isObject(starvation)) return out;
  for (const [node, phases] of Object.entries(starvation)) {
    if (!isObject(phases)) continue;
    for (const [phase, facts] of Object.entries(phases)) {
      if (!isObject(facts) || !isNumber(facts["data_wait_share"])) continue;
      const steps = isNumber(facts["steps"]) ? facts["steps"] : 0;
      const wait = isNumber(facts["mean_wait_ns"]) ? ` (${formatNumber(facts["mean_wait_ns"] / 1e6)} ms of ${formatNumber(isNumber(facts["mean_step_ns"]) ? facts["mean_step_ns"] / 1e6 : 0)} ms per step)` : "";
      const left = isNumber(facts["disturbed_steps_left_out"]) && facts["disturbed_steps_left_out"] > 0
        ? `; ${formatNumber(facts["disturbed_steps_left_out"])} steps that stepscope profiled are left out` : "";
      // One decimal, as the verdict and the finding print the same share.
      out.push(`${phase} steps on ${node} waited for data ${(100 * facts["data_wait_share"]).toFixed(1)} % of the time${wait}, over ${formatNumber(steps)} steps${left}.`);
    }
  }
  return out;
}

function detailsSection(doc: ReportDocument, key: "step_time_breakdown", title: string, explanation: string): HTMLElement {
  const data: DetailsSection | undefined = doc[key];
  const shell = section(key, title, explanation, data);
  if (shell.available) renderDetails(shell.body, data?.details, title);
  return shell.root;
}

// A box per series (CPU, each GPU and its memory) of each node, as BatchSize recorded them when
// it last triggered: low boxes on all three say the hardware waits on a small batch.
export function renderBatchSize(doc: ReportDocument): HTMLElement {
  const data = doc.batch_size;
  const shell = section("batch_size", "Batch size",
    "Whether the batch could be larger: low CPU, GPU and GPU memory use at once suggest the hardware waits on a small batch (BatchSize).", data);
  if (!shell.available) return shell.root;
  const boxes = asArray(data?.boxes);
  if (boxes.length === 0) {
    shell.body.append(para("BatchSize recorded no utilization statistics for this run.", "note"));
    return shell.root;
  }
  const when = isNumber(data?.triggered_at_s) ? `, the last time it triggered (${formatNumber(data.triggered_at_s)} s after the start)` : "";
  shell.body.append(para(`The utilization of each node's CPU, GPUs and GPU memory as BatchSize saw them${when}: boxes from p25 to p75 with the median, whiskers to 1.5 × IQR.`, "lead"));
  gridPerNode(shell.body, boxes, (cell, node, onNode) => {
    boxPlotChart(cell, {
      title: `Utilization on node ${node} when BatchSize triggered (%)`, yLabel: "%", yMax: 100,
      boxes: onNode.map((b) => ({
        label: b.label ?? b.series ?? "?", lower: b.lower ?? 0, p25: b.p25 ?? 0, p50: b.p50 ?? 0, p75: b.p75 ?? 0, upper: b.upper ?? 0, ...(isNumber(b.p95) ? { p95: b.p95 } : {}),
      })),
    });
  });
  return shell.root;
}

// The utilization the bottleneck shows in (CPU total or I/O wait per node, and every GPU), with
// the bottleneck snapshots shaded over it.
function utilizationWithBand(doc: ReportDocument, metric: string, band: { bin_edges_s?: number[]; counts?: number[] }): XYSeries[] {
  const host = asArray(doc.system_usage?.timeline).filter((s) => s.metric === metric)
    .map((s) => ({ label: `${s.label ?? metric} (${s.node ?? "?"})`, x: asArray(s.t_s), y: asArray(s.values) }));
  const gpus = asArray(doc.gpu_utilization?.gpus).slice(0, 8)
    .map((g) => ({ label: `${g.node ?? "?"} GPU ${g.gpu ?? "?"}`, x: asArray(g.series?.t_s), y: asArray(g.series?.values) }));
  return asArray(band.counts).length > 0 ? [...host, ...gpus] : [];
}

// A sentence, the utilization with the bottleneck's times shaded over it, and what the framework
// was doing then: the share of each framework phase (SageMaker's pie) and of TRAIN vs EVAL.
function bottleneckSection(doc: ReportDocument, key: "cpu_bottlenecks" | "io_bottlenecks", title: string, explanation: string, what: string, metric: string): HTMLElement {
  const data: DetailsSection | undefined = doc[key];
  const shell = section(key, title, explanation, data);
  if (!shell.available) return shell.root;
  const summary = data?.summary;
  if (!summary) {
    shell.body.append(para(`${title}: the rule left no summary in this document.`, "note"));
    return shell.root;
  }
  shell.body.append(para(summary.sentence ?? "", "lead"));
  const band = summary.band ?? {};
  const series = utilizationWithBand(doc, metric, band);
  if (series.length > 0) {
    lineChart(shell.body, {
      title: `Utilization with the ${what} bottleneck snapshots shaded (%)`, xLabel: "seconds since start", yLabel: "%", yMax: 100,
      series, band: { edges: asArray(band.bin_edges_s), counts: asArray(band.counts) },
    });
  } else if (asArray(band.counts).length > 0) {
    histogramChart(shell.body, { title: `${what} bottleneck snapshots over the job`, edges: asArray(band.bin_edges_s), counts: asArray(band.counts), xLabel: "seconds since start" });
  }
  const causes = asArray(summary.causes);
  const phases = asArray(summary.step_phases);
  if (causes.length > 0 || phases.length > 0) {
    const grid = el("div", { cls: "grid" });
    shell.body.append(grid);
    if (causes.length > 0) {
      pieChart(grid, { title: `Framework phases at the ${what} bottlenecks (% of their time)`, labels: causes.map((c) => c.name ?? "?"), values: causes.map((c) => 100 * (c.share ?? 0)) });
    }
    if (phases.length > 0) {
      pieChart(grid, { title: `TRAIN vs EVAL at the ${what} bottlenecks (% of step time)`, labels: phases.map((p) => p.phase ?? "?"), values: phases.map((p) => 100 * (p.share ?? 0)) });
    }
  } else if ((summary.snapshots ?? 0) > 0) {
    shell.body.append(para("No framework activity was recorded at the bottleneck instants, so there is no cause to split.", "note"));
  }
  return shell.root;
}

export function renderCpuBottlenecks(doc: ReportDocument): HTMLElement {
  return bottleneckSection(doc, "cpu_bottlenecks", "CPU bottlenecks",
    "Times when the CPU was saturated while the GPU sat idle (CPUBottleneck).", "CPU", "cpu/total/util_pct");
}

export function renderIoBottlenecks(doc: ReportDocument): HTMLElement {
  return bottleneckSection(doc, "io_bottlenecks", "I/O bottlenecks",
    "Times when I/O wait was high while the GPU sat idle (IOBottleneck).", "I/O", "cpu/total/iowait_pct");
}

export function renderStepTimeBreakdown(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "step_time_breakdown", "Step time breakdown",
    "Where each step's time went, per node and phase: waiting for data, forward, backward, optimizer and the rest (StepTimeBreakdown).");
}
