// The job list (issue 14 §2): every run under the server's root, filtered by name, time range and
// status, with load/unload and a choice of runs to compare. The filter is sent to the server
// (GET /api/runs?q=&status=&from_ns=&to_ns=), which owns the listing; the page only draws it.

import { asArray, el, formatSeconds, formatTimestamp, para } from "../dom";
import { type RunFilter, type RunListing, listRuns, setLoaded } from "./api";
import { onRunsChanged } from "./events";
import { type Route, routeHref } from "./routes";
import type { PageCleanup } from "./run_page";

const kStatuses = ["running", "completed", "failed", "killed", "unknown"];

// datetime-local inputs carry no zone; the page reads and writes them in UTC like every
// timestamp it shows (formatTimestamp), so a range means the same on every machine.
function inputToNs(value: string): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(`${value}Z`);
  return Number.isFinite(ms) ? ms * 1e6 : undefined;
}

export interface JobListState {
  filter: RunFilter;
  selected: Set<string>;  // runs picked for comparison, kept while the user filters
}

export function newJobListState(): JobListState {
  return { filter: {}, selected: new Set() };
}

function statusBadge(status: string | undefined): HTMLElement {
  const known = kStatuses.includes(status ?? "") ? status ?? "unknown" : "unknown";
  return el("span", { cls: `status status-${known}`, text: known });
}

function problemsCell(run: RunListing): HTMLElement {
  const cell = el("td", { cls: "problems" });
  for (const problem of asArray(run.problems)) {
    cell.append(el("div", { cls: `problem ${problem.severity ?? "info"}`, text: problem.sentence ?? problem.name ?? "" }));
  }
  return cell;
}

export function renderJobList(root: HTMLElement, state: JobListState, navigate: (route: Route) => void): PageCleanup {
  const search = el("input", { attrs: { type: "search", name: "q", placeholder: "job name", "aria-label": "Search by job name" } });
  search.value = state.filter.q ?? "";
  const status = el("select", { attrs: { name: "status", "aria-label": "Status" } },
    el("option", { text: "any status", attrs: { value: "" } }), ...kStatuses.map((s) => el("option", { text: s, attrs: { value: s } })));
  status.value = state.filter.status ?? "";
  const from = el("input", { attrs: { type: "datetime-local", name: "from", "aria-label": "Started after (UTC)" } });
  const to = el("input", { attrs: { type: "datetime-local", name: "to", "aria-label": "Started before (UTC)" } });
  const form = el("form", { cls: "filters", attrs: { role: "search" } },
    el("label", {}, "Name ", search), el("label", {}, "Status ", status),
    el("label", {}, "From (UTC) ", from), el("label", {}, "To (UTC) ", to),
    el("button", { text: "Search", attrs: { type: "submit" } }));
  const summary = para("", "note list-summary");
  const compare = el("button", { text: "Compare selected", attrs: { type: "button", name: "compare", disabled: "" } });
  const body = el("tbody");
  const listing = el("table", { cls: "data runs" },
    el("thead", {}, el("tr", {}, ...["", "Job", "Status", "Started", "Duration", "Nodes", "Source", "Problems", ""].map((t) => el("th", { text: t })))),
    body);
  root.append(el("h1", { text: "Jobs" }), form, el("div", { cls: "toolbar" }, compare, summary), el("div", { cls: "table-wrap" }, listing));

  const updateCompare = (): void => {
    compare.toggleAttribute("disabled", state.selected.size < 2);
    compare.textContent = state.selected.size >= 2 ? `Compare ${state.selected.size} selected` : "Compare selected (pick two or more)";
  };
  compare.addEventListener("click", () => navigate({ page: "compare", runs: [...state.selected] }));

  const row = (run: RunListing): HTMLElement => {
    const pick = el("input", { attrs: { type: "checkbox", "aria-label": `Compare ${run.job ?? run.id}` } });
    pick.checked = state.selected.has(run.id);
    pick.addEventListener("change", () => {
      if (pick.checked) state.selected.add(run.id);
      else state.selected.delete(run.id);
      updateCompare();
    });
    const open = el("a", { text: run.job ?? run.id, attrs: { href: routeHref({ page: "overview", run: run.id }) } });
    const toggle = el("button", { cls: "load", text: run.loaded ? "Unload" : "Load", attrs: { type: "button" } });
    toggle.addEventListener("click", () => {
      toggle.disabled = true;
      setLoaded(run.id, !run.loaded).then((loaded) => {
        run.loaded = loaded;
        toggle.textContent = loaded ? "Unload" : "Load";
        tr.classList.toggle("loaded", loaded);
      }).catch((error: unknown) => {
        tr.after(el("tr", { cls: "error-row" }, el("td", { text: `Could not ${run.loaded ? "unload" : "load"} ${run.job ?? run.id}: ${String(error instanceof Error ? error.message : error)}`, attrs: { colspan: "9" } })));
      }).finally(() => { toggle.disabled = false; });
    });
    const tr = el("tr", { cls: run.loaded ? "loaded" : "", attrs: { "data-run": run.id } },
      el("td", {}, pick), el("td", {}, open, el("div", { cls: "path note", text: run.path ?? "" })), el("td", {}, statusBadge(run.status)),
      el("td", { text: formatTimestamp(run.start_ns) }), el("td", { text: formatSeconds(run.duration_s), cls: "num" }),
      el("td", { text: asArray(run.nodes).join(", ") }), el("td", { text: run.source ?? "" }), problemsCell(run), el("td", {}, toggle));
    return tr;
  };

  const refresh = (): void => {
    summary.textContent = "Listing…";
    listRuns(state.filter).then((list) => {
      const runs = asArray(list.runs);
      body.replaceChildren(...runs.map(row));
      summary.textContent = `${runs.length} ${runs.length === 1 ? "run" : "runs"} under ${list.root ?? "the root"}`;
      if (runs.length === 0) body.append(el("tr", {}, el("td", { text: "No run matches.", attrs: { colspan: "9" } })));
    }).catch((error: unknown) => {
      summary.textContent = `The server did not list the runs: ${String(error instanceof Error ? error.message : error)}`;
    });
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next: RunFilter = {};
    if (search.value.trim()) next.q = search.value.trim();
    if (status.value) next.status = status.value;
    const fromNs = inputToNs(from.value);
    const toNs = inputToNs(to.value);
    if (fromNs !== undefined) next.from_ns = fromNs;
    if (toNs !== undefined) next.to_ns = toNs;
    state.filter = next;
    refresh();
  });
  updateCompare();
  refresh();
  // A run that starts, ends or disappears under the root shows without a reload.
  return onRunsChanged(refresh);
}
