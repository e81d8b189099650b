// The SageMaker sections backed by one or two rules' Details each: data loading, batch size,
// CPU and I/O bottlenecks, and stepscope's step-time breakdown.

import { boxPlotChart } from "../box_plot";
import { histogramChart, lineChart, pieChart, type XYSeries } from "../charts";
import { renderDetails } from "../details";
import { asArray, el, formatNumber, gridPerNode, isNumber, para, section } from "../dom";
import type { DetailsSection, ReportDocument } from "../model";

export function renderDataLoading(doc: ReportDocument): HTMLElement {
  const data = doc.data_loading;
  const shell = section("data_loading", "Dataloading analysis",
    "How many data-loader workers ran and how long batches took to arrive (Dataloader), and whether steps waited for data (DataloaderStarvation).", data);
  if (!shell.available) return shell.root;
  shell.body.append(el("h3", { text: "Data loaders" }));
  renderDetails(shell.body, data?.dataloader, "data loading time");
  shell.body.append(el("h3", { text: "Waiting for data" }));
  renderDetails(shell.body, data?.starvation, "waiting for data");
  return shell.root;
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
