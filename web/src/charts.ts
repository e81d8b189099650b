// Chart helpers over Chart.js. Only the controllers and elements the report uses are
// registered, so the bundle stays small (the HTML budget is 5 MB with the data). Animations are
// off: the report is read, printed and screenshotted, and a chart must be complete at once.

import {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  type ChartDataset,
  DoughnutController,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  type Plugin,
  PointElement,
  ScatterController,
  Title,
  Tooltip,
} from "chart.js";

import { el, formatBytes, formatNumber, isNumber, para } from "./dom";

Chart.register(
  ArcElement, BarController, BarElement, CategoryScale, DoughnutController, Legend, LinearScale,
  LineController, LineElement, PointElement, ScatterController, Title, Tooltip,
);
// Every drawn chart states its axes on its canvas (data-axes: title and tick labels per scale), so
// a test can check that each has a titled axis with readable ticks without reaching into Chart.js;
// data-series does the same for its datasets.
Chart.register({
  id: "stepscope-axes",
  afterRender(chart: Chart) {
    const axes: Record<string, { type: string; title: string; ticks: string[] }> = {};
    for (const [id, scale] of Object.entries(chart.scales)) {
      const title = (scale.options as { title?: { display?: boolean; text?: string | string[] } }).title;
      axes[id] = {
        type: scale.type,
        title: title?.display ? String(title.text ?? "") : "",
        ticks: scale.ticks.map((tick) => String(tick.label ?? "")),
      };
    }
    chart.canvas.setAttribute("data-axes", JSON.stringify(axes));
    // And its series (legend label, points), so a test can see what a chart compares.
    const series = chart.data.datasets.map((dataset) => ({ label: String(dataset.label ?? ""), points: dataset.data.length }));
    chart.canvas.setAttribute("data-series", JSON.stringify(series));
  },
});
Chart.defaults.animation = false;
Chart.defaults.responsive = true;
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.font.family = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
Chart.defaults.color = "#333";

const kPalette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

// Marked points (StepOutlier's outliers) in a colour no series of the palette takes.
export const kOutlierColor = "#111111";

export function color(index: number): string {
  return kPalette[index % kPalette.length] ?? "#1f77b4";
}

// Every chart sits in a fixed-height box: Chart.js sizes the canvas to its parent. A chart whose
// rows set its height (the heatmap) passes it in pixels.
export function mount(container: HTMLElement, config: ChartConfiguration, label: string, tall = false, heightPx?: number): Chart {
  const canvas = el("canvas", { attrs: { role: "img", "aria-label": label } });
  const box = el("div", { cls: tall ? "chart tall" : "chart" }, canvas);
  if (heightPx !== undefined) box.style.height = `${heightPx}px`;
  container.append(box);
  return new Chart(canvas, config);
}

export interface XYSeries {
  label: string;
  x: number[];
  y: number[];
  points?: boolean;
  color?: string;  // a fixed colour (outliers stand out); else the palette's, by position
}

function toPoints(x: number[], y: number[]): { x: number; y: number }[] {
  const n = Math.min(x.length, y.length);
  const points: { x: number; y: number }[] = [];
  for (let i = 0; i < n; i++) {
    const xi = x[i];
    const yi = y[i];
    if (isNumber(xi) && isNumber(yi)) points.push({ x: xi, y: yi });
  }
  return points;
}

// The binary unit in which the largest of `values` reads between 1 and 1024: an axis drawn in it
// ticks at round values (0, 200, 400 MiB/s), where ticks chosen on the raw bytes would fall at
// round decimal counts that print as 1.46 KiB/s or 95.4 MiB/s.
export function byteUnit(values: number[]): { unit: string; factor: number } {
  const max = values.reduce((m, v) => (isNumber(v) && v > m ? v : m), 0);
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let index = 0;
  while (index + 1 < units.length && max >= 1024 ** (index + 1)) index++;
  return { unit: units[index] ?? "B", factor: 1024 ** index };
}

// Time ranges shaded behind a chart's lines: bins of the x axis, darker the more a bin counts
// (the bottleneck snapshots over the job, drawn over the utilization they happened in).
export interface Band {
  edges: number[];
  counts: number[];
}

function bandPlugin(band: Band): Plugin<"line"> {
  const most = band.counts.reduce((m, c) => (isNumber(c) && c > m ? c : m), 0);
  return {
    id: "stepscope-band",
    beforeDatasetsDraw(chart) {
      const x = chart.scales["x"];
      if (!x || most <= 0) return;
      const { ctx, chartArea } = chart;
      ctx.save();
      band.counts.forEach((count, i) => {
        const from = band.edges[i];
        const to = band.edges[i + 1];
        if (!isNumber(count) || count <= 0 || !isNumber(from) || !isNumber(to)) return;
        const left = Math.max(chartArea.left, x.getPixelForValue(from));
        const right = Math.min(chartArea.right, x.getPixelForValue(to));
        if (right <= left) return;
        ctx.fillStyle = `rgba(214, 39, 40, ${(0.12 + 0.38 * (count / most)).toFixed(3)})`;
        ctx.fillRect(left, chartArea.top, right - left, chartArea.height);
      });
      ctx.restore();
    },
  };
}

// `plugins`, `xMin` and `xMax` let a page link charts (the dashboard's synced time axis).
export function lineChart(
  container: HTMLElement,
  options: { title: string; xLabel: string; yLabel: string; series: XYSeries[]; yMax?: number; band?: Band; plugins?: Plugin[]; xMin?: number; xMax?: number },
): Chart {
  // Byte rates are drawn in one binary unit, so the axis ticks at round values of it.
  const bytes = options.yLabel === "bytes/s" ? byteUnit(options.series.flatMap((s) => s.y)) : null;
  const yLabel = bytes ? `${bytes.unit}/s` : options.yLabel;
  const datasets: ChartDataset<"line", { x: number; y: number }[]>[] = options.series.map((s, i) => ({
    label: s.label,
    data: toPoints(s.x, bytes ? s.y.map((v) => v / bytes.factor) : s.y),
    borderColor: s.color ?? color(i),
    backgroundColor: s.color ?? color(i),
    borderWidth: 1.5,
    pointRadius: s.points ? 3.5 : 0,
    showLine: !s.points,
  }));
  const config: ChartConfiguration<"line", { x: number; y: number }[]> = {
    type: "line",
    data: { datasets },
    options: {
      parsing: false,
      normalized: true,
      interaction: { mode: "nearest", intersect: false },
      plugins: {
        title: { display: true, text: options.title },
        legend: { display: options.series.length > 1 },
        tooltip: {
          callbacks: {
            // Which x the point is at, named by the axis: "step 14", "seconds since start 3.5".
            title: (items) => (items[0] ? `${options.xLabel} ${formatNumber(items[0].parsed.x)}` : ""),
            label: (item) => `${item.dataset.label ?? ""}: ${bytes ? `${formatBytes((item.parsed.y ?? 0) * bytes.factor)}/s` : `${formatNumber(item.parsed.y)} ${yLabel}`}`,
          },
        },
      },
      scales: {
        x: {
          type: "linear", title: { display: true, text: options.xLabel },
          ...(options.xMin !== undefined ? { min: options.xMin } : {}), ...(options.xMax !== undefined ? { max: options.xMax } : {}),
        },
        y: {
          type: "linear", beginAtZero: true, title: { display: true, text: yLabel },
          ...(options.yMax !== undefined ? { suggestedMax: options.yMax } : {}),
        },
      },
    },
    plugins: [...(options.band ? [bandPlugin(options.band)] : []), ...(options.plugins ?? [])] as Plugin<"line">[],
  };
  return mount(container, config as ChartConfiguration, options.title);
}

export function barChart(
  container: HTMLElement,
  // `categoryLabel` titles the axis of the labels too (the value axis is always titled `yLabel`).
  options: { title: string; labels: string[]; series: { label: string; values: number[] }[]; yLabel: string; horizontal?: boolean; stacked?: boolean; categoryLabel?: string },
): Chart {
  const tall = options.horizontal === true && options.labels.length > 8;
  const category = options.categoryLabel !== undefined ? { title: { display: true, text: options.categoryLabel } } : {};
  const config: ChartConfiguration<"bar", number[], string> = {
    type: "bar",
    data: {
      labels: options.labels.map((l) => (l.length > 48 ? `${l.slice(0, 45)}…` : l)),
      datasets: options.series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: color(i) })),
    },
    options: {
      indexAxis: options.horizontal ? "y" : "x",
      plugins: {
        title: { display: true, text: options.title },
        legend: { display: options.series.length > 1 },
        tooltip: {
          callbacks: {
            title: (items) => options.labels[items[0]?.dataIndex ?? 0] ?? "",
            label: (item) => `${item.dataset.label ?? ""}: ${formatNumber(item.raw)}`,
          },
        },
      },
      scales: {
        x: { stacked: options.stacked === true, ...(options.horizontal ? { title: { display: true, text: options.yLabel }, beginAtZero: true } : category) },
        y: { stacked: options.stacked === true, ...(options.horizontal ? category : { title: { display: true, text: options.yLabel }, beginAtZero: true }) },
      },
    },
  };
  return mount(container, config as ChartConfiguration, options.title, tall);
}

export function pieChart(container: HTMLElement, options: { title: string; labels: string[]; values: number[] }): Chart {
  const config: ChartConfiguration<"doughnut", number[], string> = {
    type: "doughnut",
    data: {
      labels: options.labels,
      datasets: [{ data: options.values, backgroundColor: options.labels.map((_, i) => color(i)) }],
    },
    options: {
      plugins: {
        title: { display: true, text: options.title },
        legend: { position: "right" },
        tooltip: {
          callbacks: {
            label: (item) => {
              const total = options.values.reduce((a, b) => a + (isNumber(b) ? b : 0), 0);
              const value = isNumber(item.raw) ? item.raw : 0;
              return `${item.label}: ${formatNumber(value)} (${total > 0 ? formatNumber((100 * value) / total) : "0"}%)`;
            },
          },
        },
      },
    },
  };
  return mount(container, config as ChartConfiguration, options.title);
}

// A histogram from N+1 bin edges and N counts, drawn as touching bars on a numeric axis, so the
// axis ticks at round values of the measured quantity instead of printing every bin's range.
export function histogramChart(container: HTMLElement, options: { title: string; edges: number[]; counts: number[]; xLabel: string; series?: { label: string; counts: number[] }[] }): Chart | null {
  const bins = Math.min(options.edges.length - 1, options.counts.length);
  if (bins <= 0) {
    container.append(para("No histogram: the document has no bins.", "note"));
    return null;
  }
  const edges = options.edges;
  const centers: number[] = [];
  for (let i = 0; i < bins; i++) centers.push(((edges[i] ?? 0) + (edges[i + 1] ?? 0)) / 2);
  const series = options.series ?? [{ label: "count", counts: options.counts }];
  const config: ChartConfiguration<"bar", { x: number; y: number }[], number> = {
    type: "bar",
    data: {
      datasets: series.map((s, i) => ({
        label: s.label,
        data: centers.map((x, bin) => ({ x, y: s.counts[bin] ?? 0 })),
        // Overlaid series show through each other.
        backgroundColor: series.length > 1 ? `${color(i)}99` : color(i), barPercentage: 1, categoryPercentage: 1, grouped: false,
      })),
    },
    options: {
      plugins: {
        title: { display: true, text: options.title },
        legend: { display: series.length > 1 },
        tooltip: {
          callbacks: {
            title: (items) => {
              const bin = items[0]?.dataIndex ?? 0;
              return `${formatNumber(edges[bin] ?? 0)} – ${formatNumber(edges[bin + 1] ?? 0)}`;
            },
          },
        },
      },
      scales: {
        x: {
          type: "linear", offset: false, min: edges[0] ?? 0, max: edges[bins] ?? 0,
          title: { display: true, text: options.xLabel },
          ticks: { maxRotation: 0, autoSkip: true, callback: (value) => formatNumber(Number(value)) },
        },
        y: { beginAtZero: true, title: { display: true, text: "count" } },
      },
    },
  };
  return mount(container, config as unknown as ChartConfiguration, options.title);
}

// The sentence under a chart whose series the model builder downsampled.
export function downsampleNote(container: HTMLElement, series: { downsampled?: boolean; original_points?: number; points: number }[], limit: number | undefined): void {
  const reduced = series.filter((s) => s.downsampled === true);
  if (reduced.length === 0) return;
  const original = reduced.reduce((sum, s) => sum + (isNumber(s.original_points) ? s.original_points : 0), 0);
  const shown = reduced.reduce((sum, s) => sum + s.points, 0);
  const cap = isNumber(limit) ? ` (at most ${formatNumber(limit)} points a series)` : "";
  container.append(para(`Downsampled: ${formatNumber(shown)} of ${formatNumber(original)} points shown${cap}, keeping each interval's minimum and maximum.`, "note downsampled"));
}

// Chart.js keeps every chart in a registry until it is destroyed: a page that redraws (the live
// dashboard) destroys the charts under what it replaces, or they would pile up.
export function destroyCharts(container: HTMLElement): void {
  for (const canvas of container.querySelectorAll("canvas")) Chart.getChart(canvas)?.destroy();
}
