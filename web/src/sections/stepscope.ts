// stepscope's own sections: the Python profile and operator tables of the detail windows, the
// recorder's overhead, and what each node could measure (capabilities).

import { renderDetails } from "../details";
import { asArray, el, factTable, formatBytes, formatNumber, isNumber, para, section, stepRange, table } from "../dom";
import type { PythonProfile, ReportDocument } from "../model";

type PythonFunction = NonNullable<PythonProfile["functions"]>[number];

export function renderPythonProfile(doc: ReportDocument): HTMLElement {
  const data = doc.python_profile;
  const shell = section("python_profile", "Python profile",
    "The Python functions that took the most time during the detail windows, by self time (cProfile).", data);
  if (!shell.available) return shell.root;
  const windows = asArray(data?.windows);
  if (windows.length > 0) {
    shell.body.append(para(`Profiled windows: ${windows.map((w) => `${w.node ?? "?"} pid ${w.pid ?? "?"} ${stepRange(w.steps)}`).join("; ")}.`, "note"));
  }
  const seconds = (v: unknown) => (isNumber(v) ? `${formatNumber(v, 4)} s` : "–");
  shell.body.append(table<PythonFunction>([
    { title: "Function", value: (f) => f.function, format: (v) => String(v ?? "?") },
    { title: "File", value: (f) => `${f.file ?? "?"}${isNumber(f.line) ? `:${f.line}` : ""}`, format: (v) => String(v) },
    { title: "Calls", value: (f) => f.calls, numeric: true },
    { title: "Self", value: (f) => f.self_s, format: seconds, numeric: true },
    { title: "Cumulative", value: (f) => f.cumulative_s, format: seconds, numeric: true },
  ], asArray(data?.functions), { limit: 30 }));
  return shell.root;
}

export function renderOperators(doc: ReportDocument): HTMLElement {
  const data = doc.operators;
  const shell = section("operators", "Operators",
    "The framework operators that took the most time during each detail window (torch.profiler): CPU time, self CPU time and device time.", data);
  if (!shell.available) return shell.root;
  const us = (v: unknown) => (isNumber(v) ? `${formatNumber(v / 1000)} ms` : "–");
  for (const window of asArray(data?.windows)) {
    shell.body.append(el("h3", { text: `Node ${window.node ?? "?"}, pid ${window.pid ?? "?"}, ${stepRange(window.steps)}` }));
    shell.body.append(table([
      { title: "Operator", value: (o) => o.name, format: (v) => String(v ?? "?") },
      { title: "Calls", value: (o) => o.calls, numeric: true },
      { title: "CPU total", value: (o) => o.cpu_total_us, format: us, numeric: true },
      { title: "Self CPU", value: (o) => o.self_cpu_us, format: us, numeric: true },
      { title: "Device total", value: (o) => o.device_total_us, format: us, numeric: true },
    ], asArray(window.operators), { limit: 30 }));
  }
  return shell.root;
}

export function renderOverhead(doc: ReportDocument): HTMLElement {
  const data = doc.overhead;
  const shell = section("overhead", "Profiler overhead",
    "What recording cost: events dropped because buffers were full, bytes written, the recorder's own spans and the sampler's CPU use.", data);
  if (!shell.available) return shell.root;
  const facts: [string, string][] = [
    ["Dropped events", formatNumber(data?.dropped_events ?? 0)],
    ["Sampler CPU", isNumber(data?.sampler_cpu_pct) ? `${formatNumber(data?.sampler_cpu_pct)}%` : "not measured"],
  ];
  for (const [name, bytes] of Object.entries(data?.bytes_on_disk ?? {})) facts.push([`On disk: ${name}`, formatBytes(bytes)]);
  shell.body.append(factTable(facts));
  const spans = asArray(data?.spans);
  if (spans.length > 0) {
    shell.body.append(table([
      { title: "Recorder span", value: (s) => s.name, format: (v) => String(v ?? "?") },
      { title: "Count", value: (s) => s.count, numeric: true },
      { title: "Total", value: (s) => s.total_ms, format: (v) => (isNumber(v) ? `${formatNumber(v)} ms` : "–"), numeric: true },
    ], spans));
  }
  return shell.root;
}

export function renderCapabilities(doc: ReportDocument): HTMLElement {
  const data = doc.capabilities;
  const shell = section("capabilities", "Capabilities",
    "What stepscope could measure on each node (GPU metrics, kernel traces, perf counters) and why a source was missing.", data);
  if (!shell.available) return shell.root;
  for (const node of asArray(data?.nodes)) {
    const box = el("div", { cls: "details" }, el("h3", { text: `Node ${node.node ?? "?"}` }));
    renderDetails(box, node.capabilities, "capabilities", 1);
    shell.body.append(box);
  }
  return shell.root;
}
