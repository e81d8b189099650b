// The Timeline page: processes, threads and GPU streams as tracks, each span at its nesting depth,
// launch -> kernel arrows, and system counters as tracks above them, on one zoomable time axis.
//
// The server answers each viewport at the level of detail its pixels can show
// (GET /api/runs/ID/timeline, src/server/timeline_answer.h: at most 50,000 slices, narrow spans
// merged per pixel column with their count), so the page never holds more than it can draw.
// Panning and zooming redraw the last answer at once under the new transform (a canvas, one
// frame per input event) and ask for the new viewport after a short pause; a newer request
// cancels the one in flight.
//
// Every name is drawn with fillText: nothing from the run reaches the DOM as markup.

import { el, formatNumber, para } from "../dom";
import { fetchSeries, fetchTimeline, showFailure, type SeriesAnswer, type TimelineAnswer } from "./api";
import type { PageCleanup, RunFrame } from "./run_page";

const kRowPx = 16;
const kCounterRowPx = 36;
const kLabelPx = 220;
const kRequestDelayMs = 120;
const kMinHeightPx = 200;
// The counters drawn as tracks: what the Nodes page leads with.
const kCounterKeys = ["cpu/total/util_pct", "gpu/*/util_pct", "memory/used_pct"];

interface Viewport {
  from: number;  // ns since the answer's origin (the run's first event), as doubles
  to: number;
}

interface Layout {
  // A process's header row (track -1, its name), then its tracks' rows (the thread on depth 0).
  rows: { track: number; depth: number; y: number; label: string; header?: boolean }[];
  rowOf: Map<string, number>;  // "track/depth" -> row index
  height: number;
}

// Stable colour per name, so an operator keeps its colour while zooming.
function colorOf(name: string): string {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return `hsl(${Math.abs(hash) % 360}, 55%, 62%)`;
}

function layoutOf(answer: TimelineAnswer, counterRows: number): Layout {
  const depths = new Map<number, number>();
  for (const slice of answer.slices ?? []) depths.set(slice[0], Math.max(depths.get(slice[0]) ?? 0, slice[1] + 1));
  const rows: Layout["rows"] = [];
  const rowOf = new Map<string, number>();
  let y = counterRows * kCounterRowPx;
  let process: string | undefined;
  for (const track of answer.tracks ?? []) {
    if ((depths.get(track.id) ?? 0) === 0) continue;
    if (track.process !== process) {
      process = track.process;
      rows.push({ track: -1, depth: 0, y, label: process ?? "", header: true });
      y += kRowPx;
    }
    const count = depths.get(track.id) ?? 0;
    for (let depth = 0; depth < count; depth++) {
      rowOf.set(`${track.id}/${depth}`, rows.length);
      const label = depth === 0 ? `  ${track.thread ?? ""}${track.lane ? ` (overlap ${track.lane})` : ""}` : "";
      rows.push({ track: track.id, depth, y, label });
      y += kRowPx;
    }
  }
  return { rows, rowOf, height: y + 4 };
}

export function renderTimeline(body: HTMLElement, run: string, _frame: RunFrame): PageCleanup {
  const status = para("", "status");
  status.hidden = true;
  const stepInput = el("input", { attrs: { type: "number", min: "0", placeholder: "step", "aria-label": "step number" } });
  const stepButton = el("button", { text: "Zoom to step" });
  const wholeButton = el("button", { text: "Whole run" });
  const info = el("span", { cls: "timeline-info" });
  const canvas = el("canvas", { cls: "timeline-canvas", attrs: { "aria-label": "Timeline" } });
  const tooltip = el("div", { cls: "timeline-tooltip" });
  tooltip.hidden = true;
  const holder = el("div", { cls: "timeline-holder" }, canvas, tooltip);
  body.append(el("div", { cls: "timeline-controls" }, stepInput, stepButton, wholeButton, info), status, holder);

  let answer: TimelineAnswer | null = null;
  let counters: SeriesAnswer | null = null;
  let origin = 0;       // the whole run's first ns (from the first answer), as a double
  let runEnd = 0;
  let view: Viewport = { from: 0, to: 1 };
  let layout: Layout = { rows: [], rowOf: new Map(), height: 0 };
  let pending: AbortController | null = null;
  let timer = 0;
  let frameRequested = false;

  const width = () => Math.max(100, canvas.clientWidth - kLabelPx);
  const xOf = (ns: number) => kLabelPx + ((ns - view.from) / Math.max(1, view.to - view.from)) * width();

  function draw(): void {
    frameRequested = false;
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = canvas.clientWidth;
    const counterRows = counters?.series?.length ?? 0;
    // Never below the holder's minimum: a canvas drawn for fewer pixels than CSS gives it stretches.
    const height = Math.max(kMinHeightPx, layout.height, counterRows * kCounterRowPx + 40);
    canvas.style.height = `${height}px`;
    canvas.width = Math.floor(cssWidth * ratio);
    canvas.height = Math.floor(height * ratio);
    const context = canvas.getContext("2d");
    if (!context) return;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, cssWidth, height);
    context.font = "11px system-ui, sans-serif";
    context.textBaseline = "middle";
    // Counter tracks: mean per bucket as an area, 0..max of the track.
    (counters?.series ?? []).forEach((series, index) => {
      const top = index * kCounterRowPx;
      const times = series.t_ns ?? [];
      const values = series.mean ?? [];
      const peak = Math.max(1, ...values.map((v) => (v === null ? 0 : v)));
      context.fillStyle = "#333";
      context.fillText(`${series.node ?? ""} ${series.label ?? series.key ?? ""}`.slice(0, 40), 4, top + kCounterRowPx / 2);
      context.beginPath();
      context.moveTo(xOf(times[0] !== undefined ? times[0] - origin : 0), top + kCounterRowPx - 2);
      times.forEach((t, i) => {
        const value = values[i];
        if (value === null || value === undefined) return;
        context.lineTo(xOf(t - origin), top + kCounterRowPx - 2 - (value / peak) * (kCounterRowPx - 6));
      });
      context.lineTo(xOf(times.length ? (times[times.length - 1] ?? 0) - origin : 0), top + kCounterRowPx - 2);
      context.fillStyle = "rgba(31, 119, 180, 0.35)";
      context.fill();
    });
    if (!answer) return;
    const names = answer.names ?? [];
    const base = (answer.from_ns ?? 0) - origin;
    for (const row of layout.rows) {
      if (!row.label) continue;
      context.font = row.header ? "bold 11px system-ui, sans-serif" : "11px system-ui, sans-serif";
      context.fillStyle = row.header ? "#111" : "#444";
      // A header may run across the slice area (it has no slices of its own).
      const room = row.header ? 160 : 34;
      context.fillText(row.label.length > room ? `${row.label.slice(0, room - 1)}…` : row.label, 4, row.y + kRowPx / 2);
    }
    context.font = "11px system-ui, sans-serif";
    context.save();
    context.beginPath();
    context.rect(kLabelPx, 0, cssWidth - kLabelPx, height);
    context.clip();
    for (const [track, depth, start, duration, name, count] of answer.slices ?? []) {
      const row = layout.rowOf.get(`${track}/${depth}`);
      if (row === undefined) continue;
      const y = layout.rows[row]?.y ?? 0;
      const x0 = xOf(base + start);
      const x1 = Math.max(x0 + 1, xOf(base + start + duration));
      if (x1 < kLabelPx || x0 > cssWidth) continue;
      const label = names[name] ?? "";
      context.fillStyle = count > 1 ? "#9aa5b1" : colorOf(label);
      context.fillRect(x0, y + 1, x1 - x0, kRowPx - 2);
      if (x1 - x0 > 40 && count === 1) {
        context.fillStyle = "#111";
        context.fillText(label.slice(0, Math.floor((x1 - x0) / 6)), x0 + 2, y + kRowPx / 2);
      }
    }
    // Launch -> kernel arrows.
    context.strokeStyle = "rgba(200, 40, 40, 0.7)";
    const slices = answer.slices ?? [];
    for (const [from, to] of answer.flows ?? []) {
      const a = slices[from];
      const b = slices[to];
      if (!a || !b) continue;
      const ya = layout.rows[layout.rowOf.get(`${a[0]}/${a[1]}`) ?? -1]?.y;
      const yb = layout.rows[layout.rowOf.get(`${b[0]}/${b[1]}`) ?? -1]?.y;
      if (ya === undefined || yb === undefined) continue;
      context.beginPath();
      context.moveTo(xOf(base + a[2]), ya + kRowPx / 2);
      context.lineTo(xOf(base + b[2]), yb + kRowPx / 2);
      context.stroke();
    }
    context.restore();
    canvas.setAttribute("data-slices", String(slices.length));
    canvas.setAttribute("data-flows", String((answer.flows ?? []).length));
  }

  function requestFrame(): void {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(draw);
  }

  async function fetchView(options: { step?: number } = {}): Promise<void> {
    pending?.abort();
    const controller = new AbortController();
    pending = controller;
    try {
      const range = answer === null && options.step === undefined ? {} : options.step !== undefined ? { step: options.step } : { from_ns: Math.floor(origin + view.from), to_ns: Math.ceil(origin + view.to) };
      const next = await fetchTimeline(run, { ...range, width_px: Math.floor(width()) }, controller.signal);
      if (controller.signal.aborted) return;
      if (answer === null) {
        origin = next.from_ns ?? 0;
        runEnd = (next.to_ns ?? origin) - origin;
      }
      answer = next;
      view = { from: (next.from_ns ?? origin) - origin, to: (next.to_ns ?? origin) - origin };
      counters = await fetchSeries(run, kCounterKeys, { from_ns: next.from_ns, to_ns: next.to_ns }, Math.floor(width()));
      layout = layoutOf(next, counters.series?.length ?? 0);
      info.textContent = `${formatNumber(next.events ?? 0)} events in view as ${formatNumber((next.slices ?? []).length)} slices` +
        (next.step ? ` · step ${next.step.number}` : "");
      status.hidden = true;
      requestFrame();
    } catch (error) {
      if (controller.signal.aborted) return;
      showFailure(status, "the timeline", error);
    }
  }

  function scheduleFetch(): void {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void fetchView(), kRequestDelayMs);
  }

  // Wheel: zoom around the pointer; drag: pan.
  const onWheel = (event: WheelEvent) => {
    event.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const at = view.from + ((event.clientX - rect.left - kLabelPx) / width()) * (view.to - view.from);
    const factor = Math.exp(event.deltaY * 0.002);
    const span = Math.max(1000, (view.to - view.from) * factor);
    const share = (at - view.from) / Math.max(1, view.to - view.from);
    view = { from: at - share * span, to: at - share * span + span };
    requestFrame();
    scheduleFetch();
  };
  let dragX: number | null = null;
  const onDown = (event: MouseEvent) => { dragX = event.clientX; };
  const onUp = () => { dragX = null; };
  const onMove = (event: MouseEvent) => {
    if (dragX !== null) {
      const shift = ((event.clientX - dragX) / width()) * (view.to - view.from);
      dragX = event.clientX;
      view = { from: view.from - shift, to: view.to - shift };
      requestFrame();
      scheduleFetch();
      return;
    }
    showTooltip(event);
  };
  function showTooltip(event: MouseEvent): void {
    if (!answer) return;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const row = layout.rows.findIndex((r) => y >= r.y && y < r.y + kRowPx);
    const target = layout.rows[row];
    tooltip.hidden = true;
    if (!target || x < kLabelPx) return;
    const base = (answer.from_ns ?? 0) - origin;
    const hit = (answer.slices ?? []).find(([track, depth, start, duration]) =>
      track === target.track && depth === target.depth && x >= xOf(base + start) - 1 && x <= Math.max(xOf(base + start) + 1, xOf(base + start + duration)));
    if (!hit) return;
    const [, , , duration, name, count] = hit;
    const label = (answer.names ?? [])[name] ?? "";
    tooltip.textContent = count > 1 ? `${formatNumber(count)} spans (${label}, …) within ${formatNumber(duration / 1e6)} ms` : `${label} · ${formatNumber(duration / 1e6)} ms`;
    tooltip.style.left = `${x + 12}px`;
    tooltip.style.top = `${y + 12}px`;
    tooltip.hidden = false;
  }
  canvas.addEventListener("wheel", onWheel, { passive: false });
  canvas.addEventListener("mousedown", onDown);
  window.addEventListener("mouseup", onUp);
  canvas.addEventListener("mousemove", onMove);
  canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
  stepButton.addEventListener("click", () => {
    const step = Number(stepInput.value);
    if (Number.isInteger(step) && step >= 0) void fetchView({ step });
  });
  wholeButton.addEventListener("click", () => {
    view = { from: 0, to: runEnd };
    void fetchView();
  });
  const onResize = () => { requestFrame(); scheduleFetch(); };
  window.addEventListener("resize", onResize);
  void fetchView();
  return () => {
    pending?.abort();
    window.clearTimeout(timer);
    window.removeEventListener("mouseup", onUp);
    window.removeEventListener("resize", onResize);
  };
}
