// A heatmap over Chart.js: rows (cores, GPUs) against time, each cell's colour its value in
// 0..100 %. Chart.js has no heatmap, so an empty scatter chart provides the axes, titles and the
// data-axes attribute every chart carries (charts.ts), and a plugin paints the cells into its
// chart area before the (empty) datasets draw. The model builder bounds the matrix
// (report_sections_heatmap.h), so painting every cell each frame stays cheap.

import type { Chart, ChartConfiguration, Plugin } from "chart.js";

import { mount } from "./charts";
import { el, formatNumber, isNumber } from "./dom";

export interface HeatmapRow {
  label: string;
  values: (number | null)[];
}

// Light yellow (idle) to dark red (saturated): a busy device reads as hot, and an empty cell
// (no sample) keeps the page's background.
const kStops: [number, [number, number, number]][] = [
  [0, [255, 255, 204]], [25, [254, 217, 118]], [50, [253, 141, 60]], [75, [227, 26, 28]], [100, [128, 0, 38]],
];

export function heatColor(pct: number): string {
  const v = Math.min(100, Math.max(0, pct));
  for (let i = 1; i < kStops.length; i++) {
    const [hi, high] = kStops[i] ?? [100, [0, 0, 0]];
    const [lo, low] = kStops[i - 1] ?? [0, [0, 0, 0]];
    if (v <= hi) {
      const f = (v - lo) / (hi - lo);
      const mix = low.map((c, k) => Math.round(c + f * ((high[k] ?? c) - c)));
      return `rgb(${mix.join(",")})`;
    }
  }
  return "rgb(128,0,38)";
}

// The legend of the colours: a gradient strip from 0 % to 100 %.
function colourScale(): HTMLElement {
  const stops = kStops.map(([pct]) => `${heatColor(pct)} ${pct}%`).join(", ");
  const strip = el("span", { cls: "heat-strip" });
  strip.style.background = `linear-gradient(to right, ${stops})`;
  return el("p", { cls: "note heat-scale" }, "utilization: 0 % ", strip, " 100 %");
}

export function heatmapChart(
  container: HTMLElement,
  options: { title: string; rows: HeatmapRow[]; bucketS: number; xLabel: string; yLabel: string },
): Chart | null {
  const rows = options.rows;
  const columns = rows.reduce((n, r) => Math.max(n, r.values.length), 0);
  if (rows.length === 0 || columns === 0 || !isNumber(options.bucketS) || options.bucketS <= 0) return null;
  const spanS = columns * options.bucketS;
  const cells: Plugin<"scatter"> = {
    id: "stepscope-heatmap-cells",
    beforeDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      const x = scales["x"];
      const y = scales["y"];
      if (!x || !y) return;
      ctx.save();
      ctx.beginPath();
      ctx.rect(chartArea.left, chartArea.top, chartArea.width, chartArea.height);
      ctx.clip();
      rows.forEach((row, r) => {
        const top = y.getPixelForValue(r - 0.5);
        const bottom = y.getPixelForValue(r + 0.5);
        row.values.forEach((value, c) => {
          if (!isNumber(value)) return;
          const left = x.getPixelForValue(c * options.bucketS);
          const right = x.getPixelForValue((c + 1) * options.bucketS);
          ctx.fillStyle = heatColor(value);
          // Half a pixel of overlap: adjacent cells never show a seam between them.
          ctx.fillRect(left, Math.min(top, bottom), right - left + 0.5, Math.abs(bottom - top) + 0.5);
        });
      });
      ctx.restore();
    },
  };
  const config: ChartConfiguration<"scatter"> = {
    type: "scatter",
    data: { datasets: [{ label: options.title, data: [] }] },
    options: {
      plugins: { title: { display: true, text: options.title }, legend: { display: false }, tooltip: { enabled: false } },
      scales: {
        x: { type: "linear", min: 0, max: spanS, title: { display: true, text: options.xLabel } },
        y: {
          type: "linear", min: -0.5, max: rows.length - 0.5, reverse: true,
          title: { display: true, text: options.yLabel },
          afterBuildTicks: (scale) => {
            // One tick per row (Chart.js skips some when they would overlap).
            scale.ticks = rows.map((_, r) => ({ value: r }));
          },
          ticks: { autoSkip: true, callback: (value) => rows[Number(value)]?.label ?? "" },
        },
      },
    },
    plugins: [cells],
  };
  // Eight pixels a row, so 96 cores stay distinguishable; never shorter than another chart.
  const height = Math.max(280, Math.min(1200, 90 + rows.length * 8));
  const chart = mount(container, config as unknown as ChartConfiguration, options.title, false, height);
  // What a cell holds, on hover: the canvas's title (a tooltip without a dataset to hang it on).
  chart.canvas.addEventListener("mousemove", (event) => {
    const x = chart.scales["x"];
    const y = chart.scales["y"];
    if (!x || !y) return;
    const seconds = x.getValueForPixel(event.offsetX) ?? -1;
    const r = Math.round(y.getValueForPixel(event.offsetY) ?? -1);
    const c = Math.floor(seconds / options.bucketS);
    const value = rows[r]?.values[c];
    chart.canvas.title = rows[r] && c >= 0 && c < columns
      ? `${rows[r]?.label ?? ""}, ${formatNumber(c * options.bucketS)}–${formatNumber((c + 1) * options.bucketS)} s: ${isNumber(value) ? `${formatNumber(value)} %` : "no sample"}`
      : "";
  });
  container.append(colourScale());
  return chart;
}
