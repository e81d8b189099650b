// Studio's training-progress timeline: when the job was initializing, in its training loop,
// evaluating and finalizing, as bars over the job's time (the report's job_summary phases).

import type { ChartConfiguration } from "chart.js";

import { color, mount } from "../charts";
import { asArray, el, formatSeconds, isNumber, para, section } from "../dom";
import type { ReportDocument } from "../model";

const kPhaseNames: Record<string, string> = {
  initialization: "initialization", training_loop: "training loop", evaluation: "evaluation", finalization: "finalization",
};

export function renderProgressTimeline(doc: ReportDocument): HTMLElement {
  const summary = doc.job_summary;
  const shell = section("progress", "Training progress",
    "When the job initialized, ran its training loop, evaluated and finalized, in seconds since it started.", summary);
  if (!shell.available) return shell.root;
  const startNs = summary?.start_ns ?? doc.run?.start_ns;
  const phases = asArray(summary?.phases).filter((p) => isNumber(p.start_ns) && isNumber(p.end_ns));
  if (!isNumber(startNs) || phases.length === 0) {
    shell.body.append(para("The job summary names no phase with a start and an end yet.", "why"));
    return shell.root;
  }
  const labels = phases.map((p) => kPhaseNames[p.name ?? ""] ?? p.name ?? "?");
  const config: ChartConfiguration<"bar", [number, number][], string> = {
    type: "bar",
    data: {
      labels,
      datasets: [{
        label: "phase",
        data: phases.map((p) => [((p.start_ns ?? startNs) - startNs) / 1e9, ((p.end_ns ?? startNs) - startNs) / 1e9]),
        backgroundColor: phases.map((_, i) => color(i)),
        barPercentage: 0.9,
        categoryPercentage: 1,
      }],
    },
    options: {
      indexAxis: "y",
      plugins: {
        title: { display: true, text: "Job phases over time" },
        legend: { display: false },
        tooltip: { callbacks: { label: (item) => `${labels[item.dataIndex] ?? ""}: ${formatSeconds(phases[item.dataIndex]?.duration_s)}` } },
      },
      scales: {
        x: { type: "linear", beginAtZero: true, title: { display: true, text: "seconds since start" } },
        y: { title: { display: true, text: "phase" } },
      },
    },
  };
  const box = el("div", { cls: "progress-chart" });
  shell.body.append(box);
  mount(box, config as ChartConfiguration, "Job phases over time", false, 40 + 36 * phases.length + 40);
  return shell.root;
}
