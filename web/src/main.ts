// Entry point: reads the report-model document embedded by src/report/report_html.cc from
// <script type="application/json" id="stepscope-model"> and renders it into #app. No network:
// everything the page shows is in that document.

import { kCompareSections } from "./compare";
import { el, formatTimestamp, para } from "./dom";
import type { CompareDocument, ReportDocument } from "./model";
import { kReportSections, renderSections, safely } from "./report_sections";

function readDocument(): ReportDocument | CompareDocument {
  const script = document.getElementById("stepscope-model");
  if (!script || !script.textContent) throw new Error("the page has no report document (#stepscope-model is missing or empty)");
  const parsed: unknown = JSON.parse(script.textContent);
  if (typeof parsed !== "object" || parsed === null || (parsed as { schema?: unknown }).schema !== "stepscope.report") {
    throw new Error("the embedded document is not a stepscope.report document");
  }
  return parsed as ReportDocument | CompareDocument;
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
    const main = el("main");
    app.append(main);
    sections = renderSections(main, kReportSections, doc);
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
