// The first screen (src/report/report_sections_verdict.h): what holds the job back most and what
// fixing it could save, the headline figures, and one card per cause with the nodes and ranks it
// was seen on, its evidence and its next step. The dashboard renders the same object.

import { asArray, el, formatNumber, formatOffset, formatShare, isNumber, para, section, stepList } from "../dom";
import type { FindingGroup, ReportDocument, VerdictFigure } from "../model";

function formatFigure(figure: VerdictFigure): string {
  const value = figure.value;
  if (!isNumber(value)) return "–";
  switch (figure.unit) {
    case "ms": return value >= 1000 ? `${formatNumber(value / 1000)} s` : `${formatNumber(value)} ms`;
    case "%": return `${formatNumber(value)} %`;
    case "steps/s": return `${formatNumber(value)} steps/s`;
    case "samples/s": return `${formatNumber(value)} samples/s`;
    case "events": return formatNumber(value);
    case "USD": return `$${value.toFixed(2)}`;
    case "USD/h": return `$${value.toFixed(2)}/h`;
    default: return formatNumber(value);
  }
}

function where(group: FindingGroup): string {
  const nodes = asArray(group.nodes);
  const ranks = asArray(group.ranks);
  const parts: string[] = [];
  if (nodes.length > 0) parts.push(`${nodes.length === 1 ? "node" : "nodes"} ${nodes.join(", ")}`);
  if (ranks.length > 0) parts.push(`${ranks.length === 1 ? "rank" : "ranks"} ${ranks.join(", ")}`);
  return parts.join(" · ");
}

function renderGroup(group: FindingGroup, startNs: number | undefined): HTMLElement {
  const severity = ["critical", "warning", "info"].includes(group.severity ?? "") ? group.severity ?? "info" : "info";
  const card = el("article", { cls: `finding verdict-card ${severity}`, attrs: { "data-rule": group.rule ?? "" } });
  card.append(el("header", {}, el("span", { cls: `badge ${severity}`, text: severity }), el("h3", { text: group.title ?? group.rule ?? "Finding" })));
  const meta = [`rule ${group.rule ?? "?"}`];
  const seen = where(group);
  if (seen) meta.push(`seen on ${seen}`);
  if ((group.findings ?? 1) > 1) meta.push(`${group.findings} findings`);
  if (isNumber(group.estimated_saving)) meta.push(`could save about ${formatShare(group.estimated_saving)} of step time`);
  card.append(para(meta.join(" · "), "meta"));
  if (group.next_step) card.append(el("p", { cls: "next-step" }, el("strong", { text: "Next step: " }), group.next_step));
  if (group.recommendation) card.append(el("p", { cls: "recommendation" }, el("strong", { text: "Why and what else: " }), group.recommendation));
  const evidence = asArray(group.evidence);
  if (evidence.length > 0) {
    const list = el("ul", { cls: "evidence compact" });
    for (const item of evidence) {
      const at = [
        item.node ? `node ${item.node}` : null,
        isNumber(item.rank) ? `rank ${item.rank}` : null,
        item.steps && item.steps.length > 0 ? stepList(item.steps) : null,
        isNumber(item.start_ns) ? `${formatOffset(item.start_ns, startNs)} after start` : null,
      ].filter((x): x is string => x !== null).join(" · ");
      list.append(el("li", {}, el("span", { cls: "where", text: at }), item.what ? ` — ${item.what}` : ""));
    }
    card.append(list);
  }
  return card;
}

export function renderVerdict(doc: ReportDocument): HTMLElement {
  const verdict = doc.verdict;
  const shell = section("verdict", "What holds this job back",
    "The finding that costs the most first, the job's headline figures, then every cause with where it was seen and what to do next.",
    verdict ? { available: true } : { available: false, why: "This report document has no verdict (it was made by an older stepscope)." });
  if (!shell.available || !verdict) return shell.root;
  shell.root.classList.add(`verdict-${verdict.severity ?? "info"}`);
  shell.body.append(para(verdict.sentence ?? "", "verdict-sentence"));
  const figures = asArray(verdict.figures);
  if (figures.length > 0) {
    const tiles = el("dl", { cls: "figures" });
    for (const figure of figures) {
      tiles.append(el("div", { cls: "figure", attrs: { "data-key": figure.key ?? "" } },
        el("dt", { text: figure.label ?? figure.key ?? "" }), el("dd", { text: formatFigure(figure) })));
    }
    shell.body.append(tiles);
  }
  for (const group of asArray(verdict.groups)) shell.body.append(renderGroup(group, doc.run?.start_ns));
  return shell.root;
}
