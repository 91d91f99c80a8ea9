// The statistics chart: each colour's cell count over generations (a CellSeries), drawn
// by uPlot (vendor/uplot, MIT; loaded by index.html as the global `uPlot`). Follows the
// series live (one redraw per animation frame at most), its container's size
// (ResizeObserver), the theme, the palette (dash patterns in the colour-blind one) and
// the language. Without uPlot (the file failed to load) the chart stays empty and the
// rest of the screen works.

import { t } from '../i18n.js';

const FALLBACK = ['#888', '#ef5257', '#3cc17a', '#4f7dff', '#f5d90a'];
/** Dash pattern per colour in the colour-blind palette (1 solid … 4 dash-dot). */
const DASHES = [null, null, [8, 4], [2, 4], [10, 4, 2, 4]];
/** Tick steps of both axes (whole numbers). */
const INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000];

/** The generation axis: the series' span, at least one generation (a chart of one point
 * would have no width: uPlot draws it flat around a lone tick). */
export function xRange(min, max) {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  return max > min ? [min, max] : [min, min + 1];
}

/** The cell axis: from 0 (counts are never negative) to a little above the largest
 * count, at least 1 (all zeros: an axis 0..1, not a lone "0"). */
export function yRange(max) {
  const top = Number.isFinite(max) && max > 0 ? max : 0;
  return [0, top > 0 ? top + Math.max(1, Math.ceil(top * 0.05)) : 1];
}

export class CellChart {
  /**
   * @param {HTMLElement} el container (its CSS size is the chart's, legend included)
   * @param {import('./series.js').CellSeries} series
   * @param {{name?: (pid: number) => string}} [opts] series labels (default: colour names)
   */
  constructor(el, series, { name = (pid) => t(`player.${pid}`) } = {}) {
    this.el = el;
    this.series = series;
    this.name = name;
    this.plot = null;
    this.pidsKey = '';
    this.frame = 0;
    this._onChange = () => this.invalidate();
    series.addEventListener('change', this._onChange);
    if (typeof ResizeObserver === 'function') {
      this.observer = new ResizeObserver(() => this._resize());
      this.observer.observe(el);
    }
    this.invalidate();
  }

  /** Show another series (the same container). */
  setSeries(series) {
    if (series === this.series) return;
    this.series.removeEventListener('change', this._onChange);
    this.series = series;
    series.addEventListener('change', this._onChange);
    this.rebuild();
  }

  invalidate() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this._update(); });
  }

  /** Colours, labels or palette changed: draw it anew. */
  rebuild() {
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.pidsKey = '';
    this.invalidate();
  }

  destroy() {
    this.series.removeEventListener('change', this._onChange);
    if (this.observer) this.observer.disconnect();
    if (this.plot) this.plot.destroy();
    this.plot = null;
  }

  /** The plot's size: the container's width, the height of its CSS `--plot-h` (the
   * legend goes below, so the container grows with it). */
  _size() {
    const width = Math.floor(this.el.clientWidth);
    const h = parseFloat(getComputedStyle(this.el).getPropertyValue('--plot-h'));
    return { width, height: Number.isFinite(h) && h > 0 ? h : 120 };
  }

  _resize() {
    if (!this.plot) {
      this.invalidate();
      return;
    }
    const { width, height } = this._size();
    if (width > 0) {
      this.plot.setSize({ width, height });
      this._legendLast(this.series.data());
    }
  }

  _update() {
    const s = this.series;
    this.el.dataset.points = String(s.size);
    const U = globalThis.uPlot;
    if (!U || !s.size) {
      if (this.plot && !s.size) this.rebuild();
      return;
    }
    const { width, height } = this._size();
    if (width <= 0) return; // hidden: drawn when shown (ResizeObserver)
    const key = s.pids.join(',');
    if (this.plot && key === this.pidsKey) {
      const data = s.data();
      this.plot.setData(data);
      this._legendLast(data);
      return;
    }
    if (this.plot) this.plot.destroy();
    this.pidsKey = key;
    const css = getComputedStyle(this.el);
    const v = (name, fb) => css.getPropertyValue(name).trim() || fb;
    const muted = v('--muted', '#9aa0ad');
    const grid = v('--chart-grid', 'rgba(128,128,128,0.15)');
    const cb = document.documentElement.dataset.palette === 'cb';
    // Generations and cells are whole numbers: ticks at whole steps only.
    const axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, incrs: INCRS };
    this.plot = new U({
      width,
      height,
      scales: {
        // from the data: uPlot widens a lone point's span to 100 before asking
        x: { time: false, range: (u) => xRange(u.data[0][0], u.data[0][u.data[0].length - 1]) },
        y: { range: (u, min, max) => yRange(max) },
      },
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      legend: { show: true, live: true },
      // compact axes (the x labels need ~28 px, not uPlot's 50) and y ticks at least 18 px
      // apart: a plot of --plot-h 90 px keeps ~50 px of plot and two or more cell ticks
      axes: [{ ...axis, size: 28 }, { ...axis, size: 44, space: 18 }],
      series: [
        { label: t('stats.generation') },
        ...s.pids.map((pid) => ({
          label: this.name(pid),
          stroke: v(`--cell-${pid}`, FALLBACK[pid] || FALLBACK[0]),
          width: 2,
          dash: cb ? DASHES[pid] || undefined : undefined,
          points: { show: (u) => u.data[0].length < 2 }, // a lone point as a dot
        })),
      ],
    }, s.data(), this.el);
    this._legendLast(s.data());
  }

  /** Without a pointer over the plot, the legend shows the newest counts (after uPlot's
   * own update, which it runs in a microtask and which would reset the legend). */
  _legendLast(data) {
    const n = data[0].length;
    queueMicrotask(() => {
      if (this.plot && n && !(this.plot.cursor.left >= 0)) this.plot.setLegend({ idx: n - 1 });
    });
  }
}
