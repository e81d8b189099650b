// The report's sections in reading order, shared by the static report (main.ts) and the live
// dashboard's pages (dashboard/*.ts), so both show a run the same way from the same components.

import { el, para } from "./dom";
import type { ReportDocument } from "./model";
import { renderBatchSize, renderCpuBottlenecks, renderDataLoading, renderIoBottlenecks, renderStepTimeBreakdown } from "./sections/bottlenecks";
import { renderAnnotations, renderGpuActivity } from "./sections/gpu_activity";
import { renderGpuIdle } from "./sections/gpu_idle";
import { renderFramework, renderJobSummary, renderSystemUsage } from "./sections/overview";
import { renderFindings, renderRules } from "./sections/rules";
import { renderCapabilities, renderOperators, renderOverhead, renderPythonProfile } from "./sections/stepscope";
import { renderGpuMemory, renderGpuUtilization, renderSteps, renderWorkloadBalancing } from "./sections/training";
import { renderVerdict } from "./sections/verdict";

export type ReportSection = (doc: ReportDocument) => HTMLElement;

// The verdict first (what is wrong and what to do), then SageMaker's profiling-report order,
// stepscope's own sections after.
export const kReportSections: ReportSection[] = [
  renderVerdict, renderJobSummary, renderSystemUsage, renderFramework, renderRules, renderSteps, renderGpuUtilization, renderGpuActivity, renderGpuIdle,
  renderWorkloadBalancing, renderDataLoading, renderBatchSize, renderCpuBottlenecks, renderIoBottlenecks, renderGpuMemory,
  renderFindings, renderStepTimeBreakdown, renderAnnotations, renderPythonProfile, renderOperators, renderOverhead, renderCapabilities,
];

// A section that fails to render must not take the rest of the page with it.
export function safely<D>(render: (doc: D) => HTMLElement, doc: D): HTMLElement {
  try {
    return render(doc);
  } catch (error) {
    console.warn("stepscope: a section failed to render", error);
    return el("section", { cls: "report-section unavailable" }, para(`This section could not be shown: ${String(error)}`, "why"));
  }
}

// Renders `sections` into `container` one by one: each is attached before the next renders so
// Chart.js sizes its canvases to the page.
export function renderSections(container: HTMLElement, sections: ReportSection[], doc: ReportDocument): HTMLElement[] {
  const rendered: HTMLElement[] = [];
  for (const render of sections) {
    const node = safely(render, doc);
    container.append(node);
    rendered.push(node);
  }
  return rendered;
}
