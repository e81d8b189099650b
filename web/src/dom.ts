// Small DOM helpers shared by every section. All text from the document goes in through
// textContent (never innerHTML): names of operators, files and jobs are untrusted.

import type { Availability } from "./model";

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: { cls?: string; text?: string; attrs?: Record<string, string> } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.cls) node.className = options.cls;
  if (options.text !== undefined) node.textContent = options.text;
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

export function para(text: string, cls?: string): HTMLParagraphElement {
  return el("p", cls ? { cls, text } : { text });
}

export function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

// Deterministic, locale-free number formatting: the same document renders the same text on
// every machine, which the browser test relies on.
export function formatNumber(value: unknown, digits = 3): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return value;
  if (!isNumber(value)) return "–";
  if (Number.isInteger(value)) return groupThousands(String(value));
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return groupThousands(value.toFixed(0));
  if (magnitude >= 1) {
    const integerDigits = String(Math.trunc(magnitude)).length;
    return trimZeros(value.toFixed(Math.max(0, digits - integerDigits)));
  }
  if (magnitude === 0) return "0";
  return trimZeros(value.toPrecision(digits));
}

function groupThousands(text: string): string {
  const negative = text.startsWith("-");
  const digits = negative ? text.slice(1) : text;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return negative ? `-${grouped}` : grouped;
}

function trimZeros(text: string): string {
  if (!text.includes(".") || text.includes("e")) return text;
  return text.replace(/\.?0+$/, "");
}

export function formatShare(share: unknown): string {
  return isNumber(share) ? `${formatNumber(share * 100, 3)}%` : "–";
}

export function formatMs(ms: unknown): string {
  return isNumber(ms) ? `${formatNumber(ms, 3)} ms` : "–";
}

export function formatSeconds(seconds: unknown): string {
  if (!isNumber(seconds)) return "–";
  // Round to the unit shown first, then split: 86,398 s is "24 h 0 min", never "23 h 60 min".
  if (seconds >= 3600) {
    const minutes = Math.round(seconds / 60);
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }
  if (seconds >= 120) {
    const whole = Math.round(seconds);
    return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  }
  return `${formatNumber(seconds, 3)} s`;
}

export function formatBytes(bytes: unknown): string {
  if (!isNumber(bytes)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${formatNumber(value, 3)} ${units[unit]}`;
}

// Wall-clock time of an epoch-ns timestamp, in UTC so that a report reads the same everywhere.
export function formatTimestamp(ns: unknown): string {
  if (!isNumber(ns) || ns <= 0) return "–";
  return new Date(ns / 1e6).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

// Seconds since the run started, the x axis of every timeline.
export function formatOffset(ns: unknown, startNs: number | undefined): string {
  if (!isNumber(ns)) return "–";
  if (!isNumber(startNs)) return formatTimestamp(ns);
  return `${formatNumber((ns - startNs) / 1e9, 4)} s`;
}

export interface Column<Row> {
  title: string;
  value: (row: Row) => unknown;
  format?: (value: unknown) => string;
  numeric?: boolean;
  hover?: (value: unknown) => string;  // shown on hover (the full text of a shortened name)
}

// A demangled C++ name cut to what a table can show: template arguments nested deeper than
// `keepDepth` become "<…>" (then the outer ones too while it is longer than `max`), so
// "at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<...>>" stays readable; the
// full name goes in the cell's hover text.
export function shortName(name: string, max = 80): string {
  const collapse = (text: string, keepDepth: number): string => {
    let out = "";
    let depth = 0;
    for (const ch of text) {
      if (ch === "<") {
        depth++;
        if (depth === keepDepth + 1) out += "<…";
        if (depth <= keepDepth) out += ch;
      } else if (ch === ">") {
        if (depth <= keepDepth) out += ch;
        else if (depth === keepDepth + 1) out += ">";
        depth = Math.max(0, depth - 1);
      } else if (depth <= keepDepth) {
        out += ch;
      }
    }
    return out;
  };
  if (name.length <= max) return name;
  for (const keep of [1, 0]) {
    const shorter = collapse(name, keep);
    if (shorter.length <= max || keep === 0) return shorter.length <= max ? shorter : `${shorter.slice(0, max - 1)}…`;
  }
  return name;
}

export function table<Row>(columns: Column<Row>[], rows: Row[], options: { caption?: string; limit?: number; cls?: string } = {}): HTMLElement {
  const limit = options.limit ?? rows.length;
  const head = el("tr", {}, ...columns.map((c) => el("th", { text: c.title, cls: c.numeric ? "num" : "" })));
  const body = el("tbody");
  for (const row of rows.slice(0, limit)) {
    const tr = el("tr");
    for (const column of columns) {
      const value = column.value(row);
      const text = column.format ? column.format(value) : formatNumber(value);
      const attrs: Record<string, string> = column.hover ? { title: column.hover(value) } : {};
      tr.append(el("td", { text, cls: column.numeric ? "num" : "", attrs }));
    }
    body.append(tr);
  }
  const result = el("table", { cls: options.cls ?? "data" }, options.caption ? el("caption", { text: options.caption }) : null, el("thead", {}, head), body);
  const wrapper = el("div", { cls: "table-wrap" }, result);
  if (rows.length > limit) wrapper.append(para(`Showing ${limit} of ${rows.length} rows.`, "note"));
  return wrapper;
}

// A two-column table of facts: [label, value] pairs.
export function factTable(facts: [string, string][]): HTMLElement {
  return el("table", { cls: "facts" }, el("tbody", {}, ...facts.map(([k, v]) => el("tr", {}, el("th", { text: k }), el("td", { text: v })))));
}

export interface SectionShell {
  root: HTMLElement;
  body: HTMLElement;
  available: boolean;
}

// One report section: heading, a short explanation of what it shows, and, when the document
// marks it unavailable, the document's `why` sentence in place of the content.
export function section(key: string, title: string, explanation: string, availability: Availability | undefined | null): SectionShell {
  const root = el("section", { cls: "report-section", attrs: { id: `section-${key}`, "data-section": key } });
  root.append(el("h2", { text: title }), para(explanation, "explain"));
  const body = el("div", { cls: "section-body" });
  root.append(body);
  let available = availability !== undefined && availability !== null && availability.available !== false;
  if (!available) {
    const why = availability?.why ?? "This section is not in the report document (it was made by an older stepscope).";
    body.append(para(why, "why"));
    root.classList.add("unavailable");
  }
  return { root, body, available };
}

export function subheading(text: string, level: "h3" | "h4" = "h3"): HTMLElement {
  return el(level, { text });
}

export function asArray<T>(value: T[] | undefined | null): T[] {
  return Array.isArray(value) ? value : [];
}

// A detail window's [first, last] steps.
export function stepRange(steps: number[] | undefined): string {
  const list = asArray(steps).filter(isNumber);
  const [first, last] = list;
  if (list.length === 2 && first !== undefined && last !== undefined && last >= first) {
    return first === last ? `step ${first}` : `steps ${first}–${last}`;
  }
  return stepList(list);
}

// A finding's evidence steps: a list, shortened when long.
export function stepList(steps: number[] | undefined): string {
  const list = asArray(steps).filter(isNumber);
  if (list.length === 0) return "–";
  if (list.length === 1) return `step ${list[0]}`;
  const shown = list.slice(0, 12).join(", ");
  return list.length > 12 ? `steps ${shown}, … (${list.length} in all)` : `steps ${shown}`;
}

// One grid cell per node of `items` (in first-seen order), drawn by `draw` with that node's
// items: the per-node charts of a section side by side.
export function gridPerNode<T extends { node?: string }>(container: HTMLElement, items: T[], draw: (cell: HTMLElement, node: string, onNode: T[]) => void): void {
  const grid = el("div", { cls: "grid" });
  container.append(grid);
  for (const node of [...new Set(items.map((item) => item.node ?? "?"))]) {
    const cell = el("div");
    grid.append(cell);
    draw(cell, node, items.filter((item) => (item.node ?? "?") === node));
  }
}
