// Several runs side by side (the job list's "Compare selected"): each run's verdict and job
// summary in its own column, fetched from the server, so what holds each back reads across.
// Two runs are also compared as `stepscope compare A B` does (GET /api/compare, drawn by the
// report's compare sections, compare.ts): step times with the significance test, cost, phases,
// operators, utilization and the findings diff, below the columns.

import { destroyCharts } from "../charts";
import { el, para } from "../dom";
import { renderSections } from "../report_sections";
import { renderJobSummary } from "../sections/overview";
import { renderVerdict } from "../sections/verdict";
import { kCompareSections } from "../compare";
import { fetchCompare, fetchReport } from "./api";
import { type Route, routeHref } from "./routes";
import type { PageCleanup } from "./run_page";

export function renderCompareView(root: HTMLElement, runs: string[]): PageCleanup {
  const columns = el("div", { cls: "side-by-side" });
  root.append(el("h1", { text: `Comparing ${runs.length} runs` }), columns);
  let alive = true;
  for (const run of runs) {
    const column = el("div", { cls: "compare-column", attrs: { "data-run": run } });
    const heading = el("a", { text: run, attrs: { href: routeHref({ page: "overview", run } satisfies Route) } });
    column.append(el("h2", {}, heading));
    columns.append(column);
    fetchReport(run).then((report) => {
      if (!alive) return;
      heading.textContent = report.run?.job ?? run;
      renderSections(column, [renderVerdict, renderJobSummary], report);
    }).catch((error: unknown) => {
      column.append(para(`The server did not give this run's report: ${error instanceof Error ? error.message : String(error)}`, "why"));
    });
  }
  const comparison = el("div", { cls: "comparison" });
  root.append(comparison);
  const [a, b] = runs;
  if (runs.length === 2 && a !== undefined && b !== undefined) {
    fetchCompare(a, b).then((document) => {
      if (!alive) return;
      comparison.append(el("h2", { text: "A against B" }));
      for (const render of kCompareSections) comparison.append(render(document));
    }).catch((error: unknown) => {
      comparison.append(para(`The server did not compare the two runs: ${error instanceof Error ? error.message : String(error)}`, "why"));
    });
  }
  return () => {
    alive = false;
    destroyCharts(columns);
    destroyCharts(comparison);
  };
}
