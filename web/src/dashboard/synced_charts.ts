// Charts on one time axis that move together (the Nodes page): a cursor drawn at the same time
// on every chart, a drag across any chart selects an interval that every chart zooms to, and a
// double click (or resetZoom) goes back to the whole run. Chart.js has no linked charts, so a
// plugin on each chart draws the shared cursor and the drag; the group sets each chart's x
// range. The group only says what was selected: the page decides what to fetch for it.

import type { Chart, Plugin } from "chart.js";

export interface TimeRange {
  from_s: number;
  to_s: number;
}

interface GroupState {
  cursorS: number | null;
  dragFromS: number | null;
  dragToS: number | null;
}

export class SyncedChartGroup {
  private readonly charts = new Set<Chart>();
  private readonly state: GroupState = { cursorS: null, dragFromS: null, dragToS: null };
  private range: TimeRange | null = null;
  private extent: TimeRange | null = null;

  // `onSelect` gets the interval a drag selected, or null when the zoom was reset.
  constructor(private readonly onSelect: (range: TimeRange | null) => void) {}

  get selected(): TimeRange | null {
    return this.range;
  }

  // The plugin each chart of the group is created with (charts.ts's mount takes the config).
  plugin(): Plugin {
    const group = this;
    return {
      id: "stepscope-synced",
      // The canvas's own mouse events: Chart.js forwards no mousedown/mouseup by default.
      install(chart) {
        group.charts.add(chart);
        const canvas = chart.canvas;
        const at = (event: MouseEvent): number | null => {
          const x = chart.scales["x"];
          if (!x || event.offsetX < chart.chartArea.left || event.offsetX > chart.chartArea.right) return null;
          return x.getValueForPixel(event.offsetX) ?? null;
        };
        canvas.addEventListener("mousedown", (event) => {
          group.state.dragFromS = at(event);
          group.state.dragToS = group.state.dragFromS;
        });
        canvas.addEventListener("mousemove", (event) => {
          group.state.cursorS = at(event);
          if (group.state.dragFromS !== null && group.state.cursorS !== null) group.state.dragToS = group.state.cursorS;
          group.redraw();
        });
        canvas.addEventListener("mouseup", () => {
          const x = chart.scales["x"];
          const { dragFromS: from, dragToS: to } = group.state;
          group.state.dragFromS = null;
          group.state.dragToS = null;
          // A click is not a selection: a drag over at least 1 % of the axis is.
          if (x && from !== null && to !== null && Math.abs(to - from) > (x.max - x.min) / 100) {
            group.zoomTo({ from_s: Math.min(from, to), to_s: Math.max(from, to) });
          } else {
            group.redraw();
          }
        });
        canvas.addEventListener("mouseleave", () => {
          group.state.cursorS = null;
          group.redraw();
        });
        canvas.addEventListener("dblclick", () => group.zoomTo(null));
      },
      uninstall(chart) {
        group.charts.delete(chart);
      },
      afterDatasetsDraw(chart) {
        const x = chart.scales["x"];
        if (!x) return;
        const { ctx, chartArea } = chart;
        ctx.save();
        const { dragFromS, dragToS, cursorS } = group.state;
        if (dragFromS !== null && dragToS !== null && dragFromS !== dragToS) {
          const left = x.getPixelForValue(Math.min(dragFromS, dragToS));
          const right = x.getPixelForValue(Math.max(dragFromS, dragToS));
          ctx.fillStyle = "rgba(31, 95, 168, 0.15)";
          ctx.fillRect(left, chartArea.top, right - left, chartArea.height);
        }
        if (cursorS !== null) {
          const px = x.getPixelForValue(cursorS);
          if (px >= chartArea.left && px <= chartArea.right) {
            ctx.strokeStyle = "rgba(0, 0, 0, 0.55)";
            ctx.lineWidth = 1;
            ctx.beginPath();
            ctx.moveTo(px, chartArea.top);
            ctx.lineTo(px, chartArea.bottom);
            ctx.stroke();
          }
        }
        ctx.restore();
      },
    };
  }

  // The whole run's time: what every chart shows when not zoomed, so that charts whose data
  // start or end at different times still share one axis.
  setExtent(extent: TimeRange | null): void {
    this.extent = extent;
  }

  // What a chart of the group is drawn with: its plugin and the group's current zoom.
  lineOptions(): { plugins: Plugin[]; xMin?: number; xMax?: number } {
    const shown = this.range ?? this.extent;
    return shown ? { plugins: [this.plugin()], xMin: shown.from_s, xMax: shown.to_s } : { plugins: [this.plugin()] };
  }

  zoomTo(range: TimeRange | null): void {
    this.range = range;
    for (const chart of this.charts) {
      const x = chart.options.scales?.["x"];
      if (!x) continue;
      const shown = range ?? this.extent;
      x.min = shown ? shown.from_s : undefined;
      x.max = shown ? shown.to_s : undefined;
      chart.update("none");
    }
    this.onSelect(range);
  }

  private redraw(): void {
    for (const chart of this.charts) chart.draw();
  }
}
