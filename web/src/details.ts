// Renders a rule's `Details` object (docs/rules.md), whose shape differs from rule to rule,
// without knowing the rule: flat records become tables, maps of records become one table,
// histograms (bin edges + counts) become charts and category shares become doughnuts. Depth
// and breadth are capped so a huge Details object cannot make a huge page.

import { histogramChart, pieChart } from "./charts";
import { el, formatNumber, isNumber, para, table, type Column } from "./dom";
import type { Json } from "./model";

export type JsonObject = { [key: string]: Json };

const kMaxKeys = 40;
const kMaxDepth = 4;

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isScalar(value: Json | undefined): boolean {
  return value === null || typeof value !== "object";
}

function isFlat(value: Json | undefined): value is JsonObject {
  return isObject(value) && Object.values(value).every(isScalar);
}

function numbers(value: Json | undefined): number[] | null {
  if (!Array.isArray(value)) return null;
  return value.every(isNumber) ? (value as number[]) : null;
}

// SageMaker's histograms: {"binedges": [...], "counts"|"hist"|"probs": [...]} (Dataloader's
// loading times and StepOutlier's step times use "probs", which hold counts).
export function histogramOf(value: JsonObject): { edges: number[]; counts: number[] } | null {
  const edges = numbers(value["binedges"] ?? value["bin_edges"] ?? value["bin_edges_ms"]);
  const counts = numbers(value["counts"] ?? value["hist"] ?? value["histogram"] ?? value["probs"]);
  return edges && counts ? { edges, counts } : null;
}

// {"forward": {"ns": 1, "share": 0.5}, ...}: categories with shares.
function sharesOf(value: JsonObject): { labels: string[]; values: number[] } | null {
  const entries = Object.entries(value);
  if (entries.length < 2) return null;
  const labels: string[] = [];
  const values: number[] = [];
  for (const [key, entry] of entries) {
    if (!isObject(entry) || !isNumber(entry["share"])) return null;
    labels.push(key);
    values.push(entry["share"]);
  }
  return { labels, values };
}

function scalarText(value: Json | undefined): string {
  if (value === undefined) return "";
  if (isScalar(value)) return formatNumber(value, 4);
  if (Array.isArray(value)) {
    if (value.every(isScalar)) {
      const shown = value.slice(0, 20).map((v) => formatNumber(v, 4)).join(", ");
      return value.length > 20 ? `${shown}, … (${value.length} values)` : shown;
    }
    return `${value.length} entries`;
  }
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

function recordsTable(rows: [string, JsonObject][], keyTitle: string): HTMLElement {
  const keys: string[] = [];
  for (const [, row] of rows) for (const key of Object.keys(row)) if (!keys.includes(key) && keys.length < 12) keys.push(key);
  const columns: Column<[string, JsonObject]>[] = [
    { title: keyTitle, value: (r) => r[0], format: (v) => String(v) },
    ...keys.map((key) => ({ title: key, value: (r: [string, JsonObject]) => r[1][key], format: (v: unknown) => scalarText(v as Json), numeric: true })),
  ];
  return table(columns, rows, { limit: kMaxKeys, cls: "data rule-dump" });
}

export function renderDetails(container: HTMLElement, value: Json | undefined, title = "details", depth = 0): void {
  if (value === undefined || value === null || (isObject(value) && Object.keys(value).length === 0)) {
    container.append(para("The rule recorded no details for this run.", "note"));
    return;
  }
  if (depth >= kMaxDepth) {
    container.append(el("pre", { cls: "json", text: JSON.stringify(value, null, 1).slice(0, 2000) }));
    return;
  }
  if (Array.isArray(value)) {
    if (value.every(isObject)) {
      recordsFromArray(container, value as JsonObject[]);
    } else {
      container.append(para(scalarText(value)));
    }
    return;
  }
  if (!isObject(value)) {
    container.append(para(scalarText(value)));
    return;
  }
  const histogram = histogramOf(value);
  if (histogram) {
    // The statistics beside the bins (Dataloader's p25/p50/p95) as one line, then the chart.
    const stats = Object.entries(value).filter(([, v]) => isNumber(v));
    if (stats.length > 0) container.append(para(stats.map(([k, v]) => `${k} ${formatNumber(v, 4)}`).join(" · "), "stats"));
    histogramChart(container, { title, edges: histogram.edges, counts: histogram.counts, xLabel: title });
    return;
  }
  const shares = sharesOf(value);
  if (shares) {
    const box = el("div", { cls: "split" });
    container.append(box);
    pieChart(box, { title, labels: shares.labels, values: shares.values });
    box.append(recordsTable(Object.entries(value).filter((e): e is [string, JsonObject] => isObject(e[1])), "category"));
    return;
  }
  const entries = Object.entries(value).slice(0, kMaxKeys);
  const scalars = entries.filter(([, v]) => !isObject(v) && !(Array.isArray(v) && v.some((x) => !isScalar(x))));
  if (scalars.length > 0) {
    const rows = scalars.map(([k, v]) => el("tr", {}, el("th", { text: k }), el("td", { text: scalarText(v) })));
    container.append(el("table", { cls: "facts" }, el("tbody", {}, ...rows)));
  }
  const nested = entries.filter(([, v]) => isObject(v) || (Array.isArray(v) && v.some((x) => !isScalar(x))));
  // A map whose values are all flat records reads best as one table.
  const records = nested.filter((e): e is [string, JsonObject] => isFlat(e[1]) && Object.keys(e[1]).length > 0 && histogramOf(e[1]) === null);
  if (records.length >= 2 && records.length === nested.length) {
    container.append(recordsTable(records, "key"));
    return;
  }
  for (const [key, child] of nested) {
    const box = el("div", { cls: `details depth-${depth}` }, el(depth === 0 ? "h4" : "h5", { text: key }));
    container.append(box);
    renderDetails(box, child, key, depth + 1);
  }
  if (Object.keys(value).length > kMaxKeys) container.append(para(`Showing ${kMaxKeys} of ${Object.keys(value).length} keys.`, "note"));
}

function recordsFromArray(container: HTMLElement, rows: JsonObject[]): void {
  const keys: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key) && keys.length < 12) keys.push(key);
  const columns: Column<JsonObject>[] = keys.map((key) => ({ title: key, value: (r) => r[key], format: (v) => scalarText(v as Json) }));
  container.append(table(columns, rows, { limit: kMaxKeys, cls: "data rule-dump" }));
}
