// The SageMaker sections backed by one or two rules' Details each: data loading, batch size,
// CPU and I/O bottlenecks, and stepscope's step-time breakdown.

import { renderDetails } from "../details";
import { histogramChart } from "../charts";
import { el, para, section } from "../dom";
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

function detailsSection(doc: ReportDocument, key: "batch_size" | "cpu_bottlenecks" | "io_bottlenecks" | "step_time_breakdown", title: string, explanation: string): HTMLElement {
  const data: DetailsSection | undefined = doc[key];
  const shell = section(key, title, explanation, data);
  if (shell.available) renderDetails(shell.body, data?.details, title);
  return shell.root;
}

export function renderBatchSize(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "batch_size", "Batch size",
    "Whether the batch could be larger: low CPU, GPU and GPU memory use at once suggest the hardware waits on a small batch (BatchSize).");
}

// A sentence and a band of when it happened over the job; the rule's per-snapshot entries only
// folded away, for whoever wants them.
function bottleneckSection(doc: ReportDocument, key: "cpu_bottlenecks" | "io_bottlenecks", title: string, explanation: string, what: string): HTMLElement {
  const data: DetailsSection | undefined = doc[key];
  const shell = section(key, title, explanation, data);
  if (!shell.available) return shell.root;
  const summary = data?.summary;
  if (!summary) {
    renderDetails(shell.body, data?.details, title);
    return shell.root;
  }
  shell.body.append(para(summary.sentence ?? "", "lead"));
  const edges = summary.band?.bin_edges_s ?? [];
  const counts = summary.band?.counts ?? [];
  if (edges.length > 1 && counts.length > 0) {
    histogramChart(shell.body, { title: `${what} bottleneck snapshots over the job`, edges, counts, xLabel: "seconds after the start" });
  }
  const raw = el("details", {}, el("summary", { text: "The rule's entries, one per bottleneck snapshot" }));
  renderDetails(raw, data?.details, title);
  shell.body.append(raw);
  return shell.root;
}

export function renderCpuBottlenecks(doc: ReportDocument): HTMLElement {
  return bottleneckSection(doc, "cpu_bottlenecks", "CPU bottlenecks",
    "Times when the CPU was saturated while the GPU sat idle (CPUBottleneck).", "CPU");
}

export function renderIoBottlenecks(doc: ReportDocument): HTMLElement {
  return bottleneckSection(doc, "io_bottlenecks", "I/O bottlenecks",
    "Times when I/O wait was high while the GPU sat idle (IOBottleneck).", "I/O");
}

export function renderStepTimeBreakdown(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "step_time_breakdown", "Step time breakdown",
    "Where each step's time went, per node and phase: waiting for data, forward, backward, optimizer and the rest (StepTimeBreakdown).");
}
