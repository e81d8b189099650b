// The compare document (`stepscope compare RUN_A RUN_B`): the two runs and their cost, step
// time distributions with the significance test, and phase, operator and utilization deltas.

import { barChart, histogramChart } from "./charts";
import { asArray, el, formatMs, formatNumber, formatSeconds, formatShare, isNumber, para, section, table } from "./dom";
import type { CompareDocument, CompareRun } from "./model";

function money(value: unknown): string {
  return isNumber(value) ? `$${value.toFixed(2)}` : "–";
}

function signedShare(value: unknown): string {
  return isNumber(value) ? `${value > 0 ? "+" : ""}${formatShare(value)}` : "–";
}

function runLabel(doc: CompareDocument, index: number): string {
  const run = asArray(doc.runs)[index];
  return `${run?.label ?? (index === 0 ? "A" : "B")}: ${run?.job ?? "?"}`;
}

export function renderCompareRuns(doc: CompareDocument): HTMLElement {
  const runs = asArray(doc.runs);
  const shell = section("runs", "Runs compared", "What changed from A to B first, then the two runs, their instances and what they cost at the given prices.", { available: runs.length > 0, why: "The document names no runs." });
  if (!shell.available) return shell.root;
  if (doc.verdict?.sentence) shell.body.append(para(doc.verdict.sentence, "verdict-sentence"));
  shell.body.append(table<CompareRun>([
    { title: "Run", value: (r) => r.label, format: (v) => String(v ?? "?") },
    { title: "Job", value: (r) => r.job, format: (v) => String(v ?? "?") },
    { title: "Path", value: (r) => r.path, format: (v) => String(v ?? "") },
    { title: "Duration", value: (r) => r.duration_s, format: formatSeconds, numeric: true },
    { title: "Instances", value: (r) => (r.instance_type ? `${r.instance_count ?? 1} × ${r.instance_type}` : "unknown"), format: (v) => String(v) },
    { title: "Price per hour", value: (r) => r.price_per_hour, format: money, numeric: true },
    { title: "Cost", value: (r) => r.cost, format: money, numeric: true },
  ], runs));
  return shell.root;
}

export function renderCompareCost(doc: CompareDocument): HTMLElement {
  const cost = doc.cost;
  const shell = section("cost", "Cost", "Which run was cheaper, by how much, from duration × instances × price per hour.", cost);
  if (!shell.available) return shell.root;
  shell.body.append(para(`Run ${cost?.cheaper ?? "?"} was cheaper by ${money(cost?.saving)} (${formatShare(cost?.saving_share)}).`, "lead"));
  const runs = asArray(doc.runs);
  barChart(shell.body, { title: "Cost of each run ($)", labels: runs.map((r, i) => `${r.label ?? i}: ${r.job ?? "?"}`), series: [{ label: "$", values: runs.map((r) => (isNumber(r.cost) ? r.cost : 0)) }], yLabel: "$" });
  return shell.root;
}

export function renderCompareSteps(doc: CompareDocument): HTMLElement {
  const steps = doc.steps;
  const shell = section("steps", "Step durations", "Step time per phase in each run, and whether the difference is significant (Mann-Whitney U test).", steps);
  if (!shell.available) return shell.root;
  const phases = asArray(steps?.phases);
  shell.body.append(table([
    { title: "Phase", value: (p) => p.phase, format: (v) => String(v ?? "?") },
    { title: "A steps", value: (p) => p.a?.count, numeric: true },
    { title: "A p50", value: (p) => p.a?.p50_ms, format: formatMs, numeric: true },
    { title: "B steps", value: (p) => p.b?.count, numeric: true },
    { title: "B p50", value: (p) => p.b?.p50_ms, format: formatMs, numeric: true },
    { title: "Δ p50", value: (p) => p.delta_p50_share, format: signedShare, numeric: true },
    { title: "Test", value: (p) => (p.test ? `${p.test.name ?? "?"}: p = ${formatNumber(p.test.p_value, 3)}${p.test.significant ? " (significant)" : " (not significant)"}` : "–"), format: (v) => String(v) },
  ], phases));
  for (const phase of phases) {
    shell.body.append(el("h3", { text: `Phase ${phase.phase ?? "?"}` }));
    const grid = el("div", { cls: "grid" });
    shell.body.append(grid);
    for (const [index, side] of [[0, phase.a], [1, phase.b]] as const) {
      const cell = el("div");
      grid.append(cell);
      histogramChart(cell, { title: `Step durations, ${runLabel(doc, index)}`, edges: asArray(side?.histogram?.bin_edges_ms), counts: asArray(side?.histogram?.counts), xLabel: "step duration (ms)" });
    }
  }
  return shell.root;
}

function deltaSection(doc: CompareDocument, key: "phases" | "operators", title: string, explanation: string): HTMLElement {
  const data = doc[key];
  const shell = section(key, title, explanation, data);
  if (!shell.available) return shell.root;
  const rows = asArray(data?.rows);
  const top = rows.slice(0, 15);
  barChart(shell.body, {
    title: `${title}: time in each run (ms)`, labels: top.map((r) => r.name ?? "?"), yLabel: "ms", horizontal: key === "operators",
    series: [{ label: runLabel(doc, 0), values: top.map((r) => r.a_ms ?? 0) }, { label: runLabel(doc, 1), values: top.map((r) => r.b_ms ?? 0) }],
  });
  shell.body.append(table([
    { title: "Name", value: (r) => r.name, format: (v) => String(v ?? "?") },
    { title: "A", value: (r) => r.a_ms, format: formatMs, numeric: true },
    { title: "B", value: (r) => r.b_ms, format: formatMs, numeric: true },
    { title: "Δ", value: (r) => r.delta_share, format: signedShare, numeric: true },
  ], rows, { limit: 30 }));
  return shell.root;
}

export function renderComparePhases(doc: CompareDocument): HTMLElement {
  return deltaSection(doc, "phases", "Framework phases", "Time in forward, backward, data loading and the other framework phases, run A against run B.");
}

export function renderCompareOperators(doc: CompareDocument): HTMLElement {
  return deltaSection(doc, "operators", "Operators", "The operators whose time changed most between the runs.");
}

export function renderCompareUtilization(doc: CompareDocument): HTMLElement {
  const data = doc.utilization;
  const shell = section("utilization", "Utilization", "The 95th percentile of each system metric in each run.", data);
  if (!shell.available) return shell.root;
  const rows = asArray(data?.rows);
  barChart(shell.body, {
    title: "95th percentile utilization", labels: rows.map((r) => r.metric ?? "?"), yLabel: "p95",
    series: [{ label: runLabel(doc, 0), values: rows.map((r) => r.a_p95 ?? 0) }, { label: runLabel(doc, 1), values: rows.map((r) => r.b_p95 ?? 0) }],
  });
  shell.body.append(table([
    { title: "Metric", value: (r) => r.metric, format: (v) => String(v ?? "?") },
    { title: "A p95", value: (r) => r.a_p95, numeric: true },
    { title: "B p95", value: (r) => r.b_p95, numeric: true },
  ], rows));
  return shell.root;
}

export function renderCompareFindings(doc: CompareDocument): HTMLElement {
  const findings = doc.findings;
  const shell = section("findings", "Findings", "The rules that found something in one run and not in the other, and those that found something in both.",
    findings ?? { available: false, why: "This compare document has no findings (it was made by an older stepscope)." });
  if (!shell.available || !findings) return shell.root;
  const rows = [
    ...asArray(findings.only_a).map((f) => ({ where: "only in A", rule: f.rule ?? "?", title: asArray(f.titles)[0] ?? "" })),
    ...asArray(findings.only_b).map((f) => ({ where: "only in B", rule: f.rule ?? "?", title: asArray(f.titles)[0] ?? "" })),
    ...asArray(findings.both).map((f) => ({ where: "in both", rule: f.rule ?? "?", title: asArray(f.b)[0] ?? "" })),
  ];
  if (rows.length === 0) {
    shell.body.append(para("No rule found anything in either run.", "lead"));
    return shell.root;
  }
  shell.body.append(table([
    { title: "Triggered", value: (r) => r.where, format: (v) => String(v) },
    { title: "Rule", value: (r) => r.rule, format: (v) => String(v) },
    { title: "Finding", value: (r) => r.title, format: (v) => String(v) },
  ], rows));
  return shell.root;
}

// The compare document's sections in reading order (the report page and the dashboard's compare view).
export const kCompareSections: ((doc: CompareDocument) => HTMLElement)[] = [
  renderCompareRuns, renderCompareCost, renderCompareSteps, renderCompareFindings, renderComparePhases, renderCompareOperators, renderCompareUtilization,
];
