// The frame around a run's pages: the run's name, the tabs of its pages and a line saying how
// live the data is. Each page is a function that fills the page body and returns what to undo
// when the route changes (unsubscribe from events, destroy charts).

import { destroyCharts } from "../charts";
import { el, formatTimestamp } from "../dom";
import type { LiveReport } from "./api";
import { type RunPage, routeHref } from "./routes";

export type PageCleanup = () => void;
export type RunPageRenderer = (body: HTMLElement, run: string, frame: RunFrame) => PageCleanup;

const kTabs: [RunPage, string][] = [["overview", "Overview"], ["nodes", "Nodes"], ["gpu", "GPU"], ["timeline", "Timeline"], ["control", "Control"]];

export interface RunFrame {
  // Names the run in the header from its report (the id until one has been read).
  showReport(report: LiveReport): void;
}

export function renderRunFrame(root: HTMLElement, run: string, page: RunPage, render: RunPageRenderer): PageCleanup {
  const name = el("span", { cls: "run-name", text: run });
  const tabs = kTabs.map(([key, title]) => el("a", { cls: key === page ? "current" : "", text: title, attrs: { href: routeHref({ page: key, run }) } }));
  const live = el("span", { cls: "live-state" });
  const body = el("div", { cls: "run-page-body" });
  root.append(el("nav", { cls: "dashboard-nav run-tabs" }, name, ...tabs, live), body);
  const frame: RunFrame = {
    showReport(report) {
      name.textContent = report.run?.job ?? run;
      const state = report.live;
      if (state?.following) {
        live.textContent = `live · complete until ${formatTimestamp(state.complete_until_ns)} · refreshed ${formatTimestamp(state.refreshed_at_ns)}`;
      } else {
        live.textContent = state ? "finished (not following)" : "";
      }
      live.dataset["following"] = state?.following ? "true" : "false";
    },
  };
  const cleanup = render(body, run, frame);
  return () => {
    cleanup();
    destroyCharts(body);
  };
}
