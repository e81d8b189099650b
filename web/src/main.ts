// Entry point: reads the report-model document embedded by src/report/report_html.cc from
// <script type="application/json" id="stepscope-model"> and renders it into #app. No network:
// everything the page shows is in that document.

import { renderCompareCost, renderCompareFindings, renderCompareOperators, renderComparePhases, renderCompareRuns, renderCompareSteps, renderCompareUtilization } from "./compare";
import { el, formatTimestamp, para } from "./dom";
import type { CompareDocument, ReportDocument } from "./model";
import { renderBatchSize, renderCpuBottlenecks, renderDataLoading, renderIoBottlenecks, renderStepTimeBreakdown } from "./sections/bottlenecks";
import { renderFramework, renderJobSummary, renderSystemUsage } from "./sections/overview";
import { renderFindings, renderRules } from "./sections/rules";
import { renderCapabilities, renderOperators, renderOverhead, renderPythonProfile } from "./sections/stepscope";
import { renderGpuMemory, renderGpuUtilization, renderSteps, renderWorkloadBalancing } from "./sections/training";
import { renderVerdict } from "./sections/verdict";

// The verdict first (what is wrong and what to do), then SageMaker's profiling-report order,
// stepscope's own sections after.
const kReportSections: ((doc: ReportDocument) => HTMLElement)[] = [
  renderVerdict, renderJobSummary, renderSystemUsage, renderFramework, renderRules, renderSteps, renderGpuUtilization,
  renderWorkloadBalancing, renderDataLoading, renderBatchSize, renderCpuBottlenecks, renderIoBottlenecks, renderGpuMemory,
  renderFindings, renderStepTimeBreakdown, renderPythonProfile, renderOperators, renderOverhead, renderCapabilities,
];

const kCompareSections: ((doc: CompareDocument) => HTMLElement)[] = [
  renderCompareRuns, renderCompareCost, renderCompareSteps, renderCompareFindings, renderComparePhases, renderCompareOperators, renderCompareUtilization,
];

function readDocument(): ReportDocument | CompareDocument {
  const script = document.getElementById("stepscope-model");
  if (!script || !script.textContent) throw new Error("the page has no report document (#stepscope-model is missing or empty)");
  const parsed: unknown = JSON.parse(script.textContent);
  if (typeof parsed !== "object" || parsed === null || (parsed as { schema?: unknown }).schema !== "stepscope.report") {
    throw new Error("the embedded document is not a stepscope.report document");
  }
  return parsed as ReportDocument | CompareDocument;
}

// A section that fails to render must not take the rest of the report with it.
function safely<D>(render: (doc: D) => HTMLElement, doc: D): HTMLElement {
  try {
    return render(doc);
  } catch (error) {
    console.warn("stepscope report: a section failed to render", error);
    return el("section", { cls: "report-section unavailable" }, para(`This section could not be shown: ${String(error)}`, "why"));
  }
}

function header(title: string, subtitle: string): HTMLElement {
  return el("header", { cls: "page-header" }, el("h1", { text: title }), para(subtitle, "subtitle"));
}

function tableOfContents(sections: HTMLElement[]): HTMLElement {
  const list = el("ol");
  for (const s of sections) {
    const heading = s.querySelector("h2");
    if (!heading || !s.id) continue;
    const link = el("a", { text: heading.textContent ?? "", attrs: { href: `#${s.id}` } });
    list.append(el("li", { cls: s.classList.contains("unavailable") ? "unavailable" : "" }, link));
  }
  return el("nav", { cls: "toc" }, el("h2", { text: "Contents" }), list);
}

function render(app: HTMLElement): void {
  const doc = readDocument();
  let sections: HTMLElement[];
  if (doc.kind === "compare") {
    const runs = doc.runs ?? [];
    app.append(header(`stepscope compare: ${runs[0]?.job ?? "A"} vs ${runs[1]?.job ?? "B"}`, `${doc.generated_by ?? "stepscope"}`));
    sections = kCompareSections.map((s) => safely(s, doc));
  } else {
    const run = doc.run ?? {};
    app.append(header(`stepscope report: ${run.job ?? "unnamed run"}`, `${doc.generated_by ?? "stepscope"} · generated ${formatTimestamp(doc.generated_at_ns)} · ${run.path ?? ""}`));
    sections = [];
    const main = el("main");
    app.append(main);
    // Sections are attached before rendering the next so Chart.js can size canvases to the page.
    for (const s of kReportSections) {
      const node = safely(s, doc);
      main.append(node);
      sections.push(node);
    }
    // The verdict is the first screen; the contents follow it.
    sections[0]?.after(tableOfContents(sections.slice(1)));
    return;
  }
  const main = el("main", {}, ...sections);
  app.append(tableOfContents(sections), main);
}

const app = document.getElementById("app") ?? document.body;
try {
  render(app);
} catch (error) {
  app.append(para(`The report could not be shown: ${error instanceof Error ? error.message : String(error)}`, "why"));
  throw error;
}
