// A page made of report sections of one run, kept live: an SSE "run" event for the run
// re-fetches its report (GET /api/runs/{id}/report) at most once a second and redraws the
// sections where the reader is (scroll position kept). The Overview and GPU pages are this with
// their own sections.

import { destroyCharts } from "../charts";
import { el, para } from "../dom";
import { type ReportSection, renderSections } from "../report_sections";
import { fetchReport, showFailure } from "./api";
import { followRun } from "./events";
import type { PageCleanup, RunFrame } from "./run_page";

// The first sections a page shows are painted before the rest are built: on a day-long run the
// whole page takes a second or more to build, and the verdict is what the reader came for.
const kFirstPaintSections = 2;

const nextFrame = (): Promise<void> => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

export function renderLiveReport(body: HTMLElement, run: string, frame: RunFrame, sectionList: ReportSection[]): PageCleanup {
  const status = para("Reading the run's report…", "note");
  let sections = el("div", { cls: "report-sections" });
  body.append(status, sections);
  let alive = true;
  let painted = false;
  const load = async (): Promise<void> => {
    try {
      const report = await fetchReport(run);
      if (!alive) return;
      frame.showReport(report);
      // The new sections take the old ones' place, and the page scrolls back to where it was.
      const scrollY = globalThis.scrollY;
      destroyCharts(sections);
      const fresh = el("div", { cls: "report-sections" });
      sections.replaceWith(fresh);
      sections = fresh;
      status.hidden = true;
      if (!painted) {
        // First load: the verdict paints, then the rest is built (nothing to keep in place yet).
        // data-painting marks a page whose sections are still being built (tests and
        // benchmarks wait for it to go, instead of guessing from what is drawn).
        painted = true;
        fresh.dataset.painting = "true";
        renderSections(fresh, sectionList.slice(0, kFirstPaintSections), report);
        await nextFrame();
        if (!alive || sections !== fresh) return;
        renderSections(fresh, sectionList.slice(kFirstPaintSections), report);
        delete fresh.dataset.painting;
        return;
      }
      renderSections(fresh, sectionList, report);
      globalThis.scrollTo(0, scrollY);
    } catch (error) {
      showFailure(status, "the run's report", error);
    }
  };
  const following = followRun(run, load);
  return () => {
    alive = false;
    following.stop();
  };
}
