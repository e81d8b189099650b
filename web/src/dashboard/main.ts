// Entry point of the live dashboard (`stepscope serve`, issue 14 §2): a single-page application
// in the page shell's <div id="stepscope-dashboard">, its pages chosen by the hash route
// (routes.ts) and its data read from the server's JSON API (api.ts). The report's sections and
// charts are the same modules as the static report's (web/src/sections, charts.ts).

import { el } from "../dom";
import { renderCompareView } from "./compare_view";
import { renderControl } from "./control";
import { renderGpu } from "./gpu";
import { newJobListState, renderJobList } from "./job_list";
import { renderNodes } from "./nodes";
import { renderOverview } from "./overview";
import { type Route, type RunPage, parseRoute, routeHref } from "./routes";
import { type PageCleanup, type RunPageRenderer, renderRunFrame } from "./run_page";
import { renderTimeline } from "./timeline";

const kRunPageRenderers: Record<RunPage, RunPageRenderer> = {
  overview: renderOverview, nodes: renderNodes, gpu: renderGpu, timeline: renderTimeline, control: renderControl,
};

const root = document.getElementById("stepscope-dashboard") ?? document.body;
const jobList = newJobListState();
let cleanup: PageCleanup = () => {};

function navigate(route: Route): void {
  window.location.hash = routeHref(route);
}

function show(route: Route): void {
  cleanup();
  const page = el("main", { cls: "dashboard-page", attrs: { "data-page": route.page } });
  root.replaceChildren(el("nav", { cls: "dashboard-nav" }, el("a", { text: "stepscope · jobs", attrs: { href: routeHref({ page: "jobs" }) } })), page);
  window.scrollTo(0, 0);
  switch (route.page) {
    case "jobs":
      cleanup = renderJobList(page, jobList, navigate);
      break;
    case "compare":
      cleanup = renderCompareView(page, route.runs);
      break;
    default:
      cleanup = renderRunFrame(page, route.run, route.page, kRunPageRenderers[route.page]);
  }
}

window.addEventListener("hashchange", () => show(parseRoute(window.location.hash)));
show(parseRoute(window.location.hash));
