// The SageMaker sections backed by one or two rules' Details each: data loading, batch size,
// CPU and I/O bottlenecks, and stepscope's step-time breakdown.

import { renderDetails } from "../details";
import { el, section } from "../dom";
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

export function renderCpuBottlenecks(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "cpu_bottlenecks", "CPU bottlenecks",
    "Times when the CPU was saturated while the GPU sat idle (CPUBottleneck).");
}

export function renderIoBottlenecks(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "io_bottlenecks", "I/O bottlenecks",
    "Times when I/O wait was high while the GPU sat idle (IOBottleneck).");
}

export function renderStepTimeBreakdown(doc: ReportDocument): HTMLElement {
  return detailsSection(doc, "step_time_breakdown", "Step time breakdown",
    "Where each step's time went, per node and phase: waiting for data, forward, backward, optimizer and the rest (StepTimeBreakdown).");
}
