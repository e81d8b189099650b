// The Overview page: the report's verdict-first sections for the run, with the training-progress
// timeline after the verdict; the resource-utilization table (percentiles per node) is the
// system usage section's. Live like every report page (live_report.ts).

import { kReportSections } from "../report_sections";
import { renderVerdict } from "../sections/verdict";
import { renderLiveReport } from "./live_report";
import { renderProgressTimeline } from "./progress_timeline";
import type { PageCleanup, RunFrame } from "./run_page";

const kOverviewSections = [renderVerdict, renderProgressTimeline, ...kReportSections.filter((s) => s !== renderVerdict)];

export function renderOverview(body: HTMLElement, run: string, frame: RunFrame): PageCleanup {
  return renderLiveReport(body, run, frame, kOverviewSections);
}
