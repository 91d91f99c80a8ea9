// Canvas renderer of a CellWar view: grid, fog (hatched cells outside the visible mask),
// units by type in player colours (infantry a disc, fortification a square with its
// standing counter, factory a house), the selected unit and highlighted targets by kind.
// Redraws on requestAnimationFrame when something changed; reports clicked cells.

import { decodeBoard } from '../rle.js';

const FALLBACK = {
  bg: '#1a1e27', fog: '#0b0d12', hatch: 'rgba(255,255,255,0.07)', grid: 'rgba(255,255,255,0.09)',
  move: '#4f8cff', attack: '#e5484d', stay: '#f5b90a', produce: '#3cc17a', select: '#ffffff',
  outline: 'rgba(0,0,0,0.6)', text: '#ffffff',
};
const PLAYER_FALLBACK = ['#888', '#ef5257', '#3cc17a', '#4f7dff', '#f5d90a', '#a970ff', '#ff8b3d', '#2ec5d3', '#ff6fb5'];

/** The kind of highlight an action kind gets. */
export function targetClass(kind) {
  if (kind === 'move') return 'move';
  if (kind === 'attack') return 'attack';
  if (kind === 'produce') return 'produce';
  return 'stay'; // fortify, stand, become_factory
}

export class CellWarBoard {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{onCell?: (x: number, y: number) => void, maxCellPx?: number}} [opts]
   */
  constructor(canvas, { onCell = () => {}, maxCellPx = 44 } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.onCell = onCell;
    this.maxCellPx = maxCellPx;
    this.view = null;
    this.visible = new Uint8Array(0);
    this.visibleKey = '';
    this.hidden = false; // hand-over: draw nothing
    this.selected = null; // unit id
    this.targets = new Map(); // "x,y" → action
    this.interactive = false;
    this.frame = 0;
    this.cellPx = 20;
    this.refreshColors();
    canvas.addEventListener('click', (e) => {
      if (!this.interactive || !this.view) return;
      const c = this.cellAt(e.clientX, e.clientY);
      if (c) this.onCell(c[0], c[1]);
    });
    this._onResize = () => this.fit();
    window.addEventListener('resize', this._onResize);
  }

  refreshColors() {
    const st = getComputedStyle(this.canvas);
    const v = (name, fb) => st.getPropertyValue(name).trim() || fb;
    this.colors = {
      bg: v('--cell-dead', FALLBACK.bg),
      fog: v('--cw-fog', FALLBACK.fog),
      hatch: v('--cw-hatch', FALLBACK.hatch),
      grid: v('--cw-grid', FALLBACK.grid),
      move: v('--cw-move', FALLBACK.move),
      attack: v('--cw-attack', FALLBACK.attack),
      stay: v('--cw-stay', FALLBACK.stay),
      produce: v('--cw-produce', FALLBACK.produce),
      select: v('--cw-select', FALLBACK.select),
      outline: v('--cw-outline', FALLBACK.outline),
      text: v('--cw-text', FALLBACK.text),
    };
    this.players = PLAYER_FALLBACK.map((fb, i) => v(`--cell-${i}`, fb));
    for (let i = 5; i <= 8; i++) this.players[i] = v(`--cw-player-${i}`, PLAYER_FALLBACK[i]);
    this.invalidate();
  }

  /** Show a view; opts: selected unit id, targets Map("x,y" → action), interactive. */
  setView(view, { selected = null, targets = new Map(), interactive = false, hidden = false } = {}) {
    const resized = !this.view || !view || view.width !== this.view.width || view.height !== this.view.height;
    this.view = view;
    this.selected = selected;
    this.targets = targets;
    this.interactive = interactive && !hidden;
    this.hidden = hidden;
    this.canvas.classList.toggle('interactive', this.interactive);
    if (view) {
      const key = `${view.width}x${view.height}:${view.visible}`;
      if (key !== this.visibleKey) {
        this.visibleKey = key;
        this.visible = view.visible
          ? decodeBoard(view.visible, view.width, view.height)
          : new Uint8Array(view.width * view.height).fill(1);
      }
    }
    if (resized) this.fit();
    this.invalidate();
  }

  fit() {
    const v = this.view;
    if (!v) return;
    const parent = this.canvas.parentElement;
    const availW = Math.max(120, parent.clientWidth - 4);
    const top = parent.getBoundingClientRect().top;
    const availH = Math.max(160, window.innerHeight - Math.max(top, 0) - 110);
    this.cellPx = Math.max(8, Math.floor(Math.min(availW / v.width, availH / v.height, this.maxCellPx)));
    const dpr = window.devicePixelRatio || 1;
    const cssW = v.width * this.cellPx;
    const cssH = v.height * this.cellPx;
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${cssH}px`;
    this.canvas.width = Math.round(cssW * dpr);
    this.canvas.height = Math.round(cssH * dpr);
    this.invalidate();
  }

  cellAt(clientX, clientY) {
    const v = this.view;
    const r = this.canvas.getBoundingClientRect();
    if (!v || !r.width) return null;
    const x = Math.floor(((clientX - r.left) / r.width) * v.width);
    const y = Math.floor(((clientY - r.top) / r.height) * v.height);
    if (x < 0 || y < 0 || x >= v.width || y >= v.height) return null;
    return [x, y];
  }

  invalidate() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  destroy() {
    window.removeEventListener('resize', this._onResize);
    if (this.frame) cancelAnimationFrame(this.frame);
  }

  render() {
    const { ctx, canvas, view: v, colors } = this;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!v || this.hidden) {
      ctx.fillStyle = colors.fog;
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      return;
    }
    const s = canvas.width / v.width; // device pixels per cell
    const w = v.width;
    const h = v.height;
    ctx.fillStyle = colors.bg;
    ctx.fillRect(0, 0, canvas.width, canvas.height);

    // Fog: dark cells with diagonal hatching.
    ctx.fillStyle = colors.fog;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) if (!this.visible[y * w + x]) ctx.fillRect(x * s, y * s, s, s);
    }
    ctx.save();
    ctx.beginPath();
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) if (!this.visible[y * w + x]) ctx.rect(x * s, y * s, s, s);
    }
    ctx.clip();
    ctx.beginPath();
    const step = Math.max(4, s / 4);
    for (let d = -canvas.height; d < canvas.width; d += step) {
      ctx.moveTo(d, canvas.height);
      ctx.lineTo(d + canvas.height, 0);
    }
    ctx.strokeStyle = colors.hatch;
    ctx.lineWidth = Math.max(1, s / 24);
    ctx.stroke();
    ctx.restore();

    // Grid.
    ctx.beginPath();
    for (let x = 1; x < w; x++) { const X = Math.round(x * s) + 0.5; ctx.moveTo(X, 0); ctx.lineTo(X, canvas.height); }
    for (let y = 1; y < h; y++) { const Y = Math.round(y * s) + 0.5; ctx.moveTo(0, Y); ctx.lineTo(canvas.width, Y); }
    ctx.strokeStyle = colors.grid;
    ctx.lineWidth = 1;
    ctx.stroke();

    // Targets (under the units).
    for (const a of this.targets.values()) {
      const unit = (v.units || []).find((u) => u.id === a.unit_id);
      if (!unit) continue;
      const tx = unit.x + a.dx;
      const ty = unit.y + a.dy;
      const col = colors[targetClass(a.kind)];
      ctx.globalAlpha = 0.35;
      ctx.fillStyle = col;
      ctx.fillRect(tx * s, ty * s, s, s);
      ctx.globalAlpha = 1;
      ctx.strokeStyle = col;
      ctx.lineWidth = Math.max(2, s / 12);
      ctx.strokeRect(tx * s + ctx.lineWidth / 2, ty * s + ctx.lineWidth / 2, s - ctx.lineWidth, s - ctx.lineWidth);
    }

    // Units.
    for (const u of v.units || []) this._unit(u, s);
  }

  _unit(u, s) {
    const { ctx, colors } = this;
    const cx = (u.x + 0.5) * s;
    const cy = (u.y + 0.5) * s;
    const fill = this.players[u.owner] || PLAYER_FALLBACK[1];
    const own = u.id !== null && u.id !== undefined && this.view.you === u.owner;
    ctx.globalAlpha = own && u.acted ? 0.5 : 1;
    ctx.fillStyle = fill;
    ctx.strokeStyle = colors.outline;
    ctx.lineWidth = Math.max(1, s / 16);
    ctx.beginPath();
    if (u.type === 'infantry') {
      ctx.arc(cx, cy, s * 0.33, 0, Math.PI * 2);
    } else if (u.type === 'fortification') {
      const r = s * 0.36;
      ctx.rect(cx - r, cy - r, 2 * r, 2 * r);
    } else { // factory: a house
      const r = s * 0.38;
      ctx.moveTo(cx, cy - r);
      ctx.lineTo(cx + r, cy - r * 0.15);
      ctx.lineTo(cx + r * 0.8, cy - r * 0.15);
      ctx.lineTo(cx + r * 0.8, cy + r);
      ctx.lineTo(cx - r * 0.8, cy + r);
      ctx.lineTo(cx - r * 0.8, cy - r * 0.15);
      ctx.lineTo(cx - r, cy - r * 0.15);
      ctx.closePath();
    }
    ctx.fill();
    ctx.stroke();
    if (u.type === 'fortification') {
      ctx.fillStyle = colors.text;
      ctx.font = `bold ${Math.round(s * 0.45)}px system-ui, sans-serif`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(u.standing || 1), cx, cy + s * 0.02);
    }
    ctx.globalAlpha = 1;
    if (own && this.selected === u.id) {
      ctx.strokeStyle = colors.select;
      ctx.lineWidth = Math.max(2, s / 10);
      ctx.beginPath();
      ctx.arc(cx, cy, s * 0.47, 0, Math.PI * 2);
      ctx.stroke();
    }
  }
}
