// A box plot over Chart.js: one box per label from precomputed statistics (the model builder
// computes them; the page never does). Boxes are floating bars from p25 to p75; a plugin draws
// the median and the whiskers (lower, upper: the 1.5 × IQR fences clamped to the data) over them,
// using each bar's laid-out position, so the chart keeps Chart.js's axes, tooltips and data-axes.

import type { BarElement, Chart, ChartConfiguration, Plugin } from "chart.js";

import { color, mount } from "./charts";
import { formatNumber, isNumber } from "./dom";

export interface BoxStats {
  label: string;
  lower: number;
  p25: number;
  p50: number;
  p75: number;
  upper: number;
  p95?: number;
}

// The median and whiskers of `boxes`, drawn over the chart's bars (one per box, same order).
function whiskers(boxes: BoxStats[]): Plugin<"bar"> {
  return {
    id: "stepscope-box-whiskers",
    afterDatasetsDraw(chart) {
      const y = chart.scales["y"];
      if (!y) return;
      const { ctx } = chart;
      ctx.save();
      ctx.strokeStyle = "#333";
      ctx.lineWidth = 1.5;
      chart.getDatasetMeta(0).data.forEach((element, i) => {
        const box = boxes[i];
        if (!box) return;
        const bar = element as unknown as BarElement & { x: number; width: number };
        const half = bar.width / 2;
        const line = (x0: number, y0: number, x1: number, y1: number) => {
          ctx.beginPath();
          ctx.moveTo(x0, y0);
          ctx.lineTo(x1, y1);
          ctx.stroke();
        };
        const [lower, p25, p50, p75, upper] = [box.lower, box.p25, box.p50, box.p75, box.upper].map((v) => y.getPixelForValue(v));
        if ([lower, p25, p50, p75, upper].some((v) => !isNumber(v))) return;
        line(bar.x - half, p50 as number, bar.x + half, p50 as number);
        line(bar.x, p25 as number, bar.x, lower as number);
        line(bar.x, p75 as number, bar.x, upper as number);
        line(bar.x - half / 2, lower as number, bar.x + half / 2, lower as number);
        line(bar.x - half / 2, upper as number, bar.x + half / 2, upper as number);
      });
      ctx.restore();
    },
  };
}

export function boxPlotChart(container: HTMLElement, options: { title: string; boxes: BoxStats[]; yLabel: string; yMax?: number }): Chart {
  const boxes = options.boxes;
  const config: ChartConfiguration<"bar", [number, number][], string> = {
    type: "bar",
    data: {
      labels: boxes.map((b) => b.label),
      datasets: [{
        label: "p25–p75",
        data: boxes.map((b) => [b.p25, b.p75]),
        backgroundColor: boxes.map((b) => `${color(b.label.startsWith("CPU") ? 0 : b.label.endsWith("memory") ? 2 : 1)}99`),
        borderColor: "#333",
        borderWidth: 1,
        barPercentage: 0.5,
      }],
    },
    options: {
      plugins: {
        title: { display: true, text: options.title },
        legend: { display: false },
        tooltip: {
          callbacks: {
            label: (item) => {
              const b = boxes[item.dataIndex];
              if (!b) return "";
              const p95 = isNumber(b.p95) ? ` · p95 ${formatNumber(b.p95)}` : "";
              return `lower ${formatNumber(b.lower)} · p25 ${formatNumber(b.p25)} · median ${formatNumber(b.p50)} · p75 ${formatNumber(b.p75)}${p95} · upper ${formatNumber(b.upper)} ${options.yLabel}`;
            },
          },
        },
      },
      scales: {
        y: { beginAtZero: true, title: { display: true, text: options.yLabel }, ...(options.yMax !== undefined ? { suggestedMax: options.yMax } : {}) },
      },
    },
    plugins: [whiskers(boxes)],
  };
  return mount(container, config as unknown as ChartConfiguration, options.title);
}
