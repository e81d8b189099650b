// Entry point of the live dashboard (`stepscope serve`, issue 14 §2): a single-page application
// in the page shell's <div id="stepscope-dashboard">, its pages chosen by the hash route
// (routes.ts) and its data read from the server's JSON API (api.ts). The report's sections and
// charts are the same modules as the static report's (web/src/sections, charts.ts).

import { el, para } from "../dom";
import { newJobListState, renderJobList } from "./job_list";
import { type Route, parseRoute, routeHref } from "./routes";

const root = document.getElementById("stepscope-dashboard") ?? document.body;
const jobList = newJobListState();

function navigate(route: Route): void {
  window.location.hash = routeHref(route);
}

function show(route: Route): void {
  const page = el("main", { cls: "dashboard-page", attrs: { "data-page": route.page } });
  root.replaceChildren(el("nav", { cls: "dashboard-nav" }, el("a", { text: "stepscope · jobs", attrs: { href: routeHref({ page: "jobs" }) } })), page);
  if (route.page === "jobs") {
    renderJobList(page, jobList, navigate);
  } else {
    page.append(para("This page is not built yet.", "why"));
  }
}

window.addEventListener("hashchange", () => show(parseRoute(window.location.hash)));
show(parseRoute(window.location.hash));
