// Several runs side by side (the job list's "Compare selected"): each run's verdict and job
// summary in its own column, fetched from the server, so what holds each back reads across.
// Two runs compared statistically is `stepscope compare`'s document (compare.ts renders it in
// the report); the server has no endpoint for it yet, so the view shows the verdicts.

import { destroyCharts } from "../charts";
import { el, para } from "../dom";
import { renderSections } from "../report_sections";
import { renderJobSummary } from "../sections/overview";
import { renderVerdict } from "../sections/verdict";
import { fetchReport } from "./api";
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
  return () => {
    alive = false;
    destroyCharts(columns);
  };
}
