// The rules summary (SageMaker's table, most-triggered first) and stepscope's findings with
// their evidence: which node, which steps and time range, and what was running then.

import { renderDetails } from "../details";
import {
  asArray, el, formatNumber, formatOffset, formatShare, isNumber, para, section, stepList, table,
} from "../dom";
import type { Finding, Json, ReportDocument, RuleRow } from "../model";

function parametersText(parameters: Record<string, Json> | undefined): string {
  const entries = Object.entries(parameters ?? {});
  return entries.length === 0 ? "–" : entries.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");
}

export function sortRules(rules: RuleRow[]): RuleRow[] {
  // Stable: ties keep the document's order (RULES.md order).
  return rules.map((rule, index) => ({ rule, index }))
    .sort((a, b) => (b.rule.triggered ?? 0) - (a.rule.triggered ?? 0) || a.index - b.index)
    .map((e) => e.rule);
}

export function renderRules(doc: ReportDocument): HTMLElement {
  const rules = asArray(doc.rules);
  const shell = section("rules", "Rules summary",
    "Each rule checked the run for one kind of problem. Rules that triggered come first; the recommendation says what to try.",
    Array.isArray(doc.rules) ? { available: true } : { available: false, why: "The document has no rules: they were not evaluated for this run (run `stepscope rules RUN`)." });
  if (!shell.available) return shell.root;
  const sorted = sortRules(rules);
  const triggered = sorted.filter((r) => (r.triggered ?? 0) > 0).length;
  shell.body.append(para(`${triggered} of ${sorted.length} rules triggered.`, "lead"));
  const evaluation = doc.run?.rules;
  if (evaluation?.window_grid) {
    const count = evaluation.windows_evaluated;
    const windows = isNumber(count) ? `${count} ${count === 1 ? "window" : "windows"}` : "windows";
    const length = isNumber(evaluation.scan_interval_us) ? ` of ${formatNumber(evaluation.scan_interval_us / 1e6)} s` : "";
    shell.body.append(para(`The rules looked at ${windows}${length}: ${evaluation.window_grid}.`));
  }
  const wrap = table<RuleRow>([
    { title: "Rule", value: (r) => r.rule, format: (v) => String(v ?? "?") },
    { title: "Description", value: (r) => r.description, format: (v) => String(v ?? "") },
    { title: "Recommendation", value: (r) => r.recommendation, format: (v) => String(v ?? "") },
    { title: "Triggered", value: (r) => r.triggered, numeric: true },
    { title: "Violations", value: (r) => r.violations, numeric: true },
    { title: "Datapoints", value: (r) => r.datapoints, numeric: true },
    { title: "Parameters", value: (r) => parametersText(r.parameters), format: (v) => String(v) },
  ], sorted, { cls: "data rules" });
  const rows = wrap.querySelectorAll("tbody tr");
  sorted.forEach((rule, i) => {
    if ((rule.triggered ?? 0) > 0) rows[i]?.classList.add("triggered");
  });
  shell.body.append(wrap);
  // Every rule's raw Details, folded: the dedicated sections below show the important ones.
  const folded = el("details", { cls: "rule-details" }, el("summary", { text: "Details of every rule" }));
  for (const rule of sorted) {
    const box = el("div", { cls: "details" }, el("h4", { text: rule.rule ?? "?" }));
    renderDetails(box, rule.details, rule.rule ?? "details", 1);
    folded.append(box);
  }
  shell.body.append(folded);
  return shell.root;
}

function renderFinding(finding: Finding, startNs: number | undefined): HTMLElement {
  const severity = ["critical", "warning", "info"].includes(finding.severity ?? "") ? finding.severity ?? "info" : "info";
  const card = el("article", { cls: `finding ${severity}` });
  const header = el("header", {},
    el("span", { cls: `badge ${severity}`, text: severity }),
    el("h3", { text: finding.title ?? finding.rule ?? "Finding" }));
  card.append(header);
  const meta: string[] = [`rule ${finding.rule ?? "?"}`];
  if (isNumber(finding.estimated_saving)) meta.push(`estimated saving ${formatShare(finding.estimated_saving)} of step time`);
  card.append(para(meta.join(" · "), "meta"));
  if (finding.recommendation) card.append(el("p", { cls: "recommendation" }, el("strong", { text: "Recommendation: " }), finding.recommendation));
  if (finding.next_step) card.append(el("p", { cls: "next-step" }, el("strong", { text: "Next step: " }), finding.next_step));
  const evidence = asArray(finding.evidence);
  if (evidence.length > 0) {
    const list = el("ol", { cls: "evidence" });
    for (const item of evidence.slice(0, 20)) {
      const where = [
        item.node ? `node ${item.node}` : null,
        isNumber(item.rank) ? `rank ${item.rank}` : null,
        isNumber(item.pid) ? `pid ${item.pid}` : null,
        item.step_phase ? `${item.step_phase}` : null,
        item.steps && item.steps.length > 0 ? stepList(item.steps) : null,
        isNumber(item.start_ns) ? `${formatOffset(item.start_ns, startNs)} – ${formatOffset(item.end_ns, startNs)} after start` : null,
      ].filter((x): x is string => x !== null);
      const li = el("li", {}, el("span", { cls: "where", text: where.join(" · ") }));
      if (item.what) li.append(para(item.what));
      const top = asArray(item.top_activity);
      if (top.length > 0) {
        li.append(table([
          { title: "Top activity", value: (a) => a.name, format: (v) => String(v ?? "?") },
          { title: "Kind", value: (a) => a.kind, format: (v) => String(v ?? "") },
          { title: "Share", value: (a) => a.share, format: formatShare, numeric: true },
          { title: "Time", value: (a) => a.total_ns, format: (v) => (isNumber(v) ? `${formatNumber(v / 1e6)} ms` : "–"), numeric: true },
        ], top, { limit: 10, cls: "data compact" }));
      }
      list.append(li);
    }
    card.append(list);
    if (evidence.length > 20) card.append(para(`Showing 20 of ${evidence.length} pieces of evidence.`, "note"));
  }
  return card;
}

export function renderFindings(doc: ReportDocument): HTMLElement {
  const findings = asArray(doc.findings);
  const shell = section("findings", "Findings",
    "What stepscope found, most severe and most costly first, with the evidence: where it happened, in which steps, and what was running.",
    Array.isArray(doc.findings) ? { available: true } : { available: false, why: "The document has no findings: the rules were not evaluated for this run." });
  if (!shell.available) return shell.root;
  if (findings.length === 0) {
    shell.body.append(para("No rule found a problem in this run.", "lead"));
    return shell.root;
  }
  for (const finding of findings) shell.body.append(renderFinding(finding, doc.run?.start_ns));
  return shell.root;
}
