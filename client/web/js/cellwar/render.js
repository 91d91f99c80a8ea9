// Canvas renderer of a CellWar view: grid, fog (hatched cells outside the visible mask),
// units by type in player colours (infantry a disc, fortification a square with its
// standing counter, factory a house; with the colour-blind palette each unit also shows
// its player's number), the selected unit, highlighted targets by kind and the keyboard
// cursor. Redraws on requestAnimationFrame when something changed; reports clicked and
// hovered cells.
//
// Zoom and pan (boards up to 64×64): inside a scroll container the board is drawn at
// `zoom` × the size that fits; the container scrolls (touch: native panning; mouse: drag
// with the button held; Ctrl+wheel or the screen's buttons zoom around a point). On a
// small screen a big board starts zoomed to readable cells (14 px on touch screens,
// 10 px otherwise) and the screen scrolls to the player's units.

import { decodeBoard } from '../rle.js';

const FALLBACK = {
  bg: '#1a1e27', fog: '#0b0d12', hatch: 'rgba(255,255,255,0.07)', grid: 'rgba(255,255,255,0.09)',
  move: '#4f8cff', attack: '#e5484d', stay: '#f5b90a', produce: '#3cc17a', select: '#ffffff',
  outline: 'rgba(0,0,0,0.6)', text: '#ffffff',
};
const PLAYER_FALLBACK = ['#888', '#ef5257', '#3cc17a', '#4f7dff', '#f5d90a', '#a970ff', '#ff8b3d', '#2ec5d3', '#ff6fb5'];
const MAX_ZOOM = 8;

/** The kind of highlight an action kind gets. */
export function targetClass(kind) {
  if (kind === 'move') return 'move';
  if (kind === 'attack') return 'attack';
  if (kind === 'produce') return 'produce';
  return 'stay'; // fortify, stand, become_factory
}

/**
 * Draw a unit centred at (cx, cy) in a cell of `s` pixels: infantry a disc,
 * fortification a square with its standing counter, factory a house; `label` (the
 * owner's number in the colour-blind palette) in the corner.
 */
export function drawUnit(ctx, { type, standing }, cx, cy, s, { fill, outline, text, label = '' }) {
  ctx.fillStyle = fill;
  ctx.strokeStyle = outline;
  ctx.lineWidth = Math.max(1, s / 16);
  ctx.beginPath();
  if (type === 'infantry') {
    ctx.arc(cx, cy, s * 0.33, 0, Math.PI * 2);
  } else if (type === 'fortification') {
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
  if (type === 'fortification') {
    ctx.fillStyle = text;
    ctx.font = `bold ${Math.round(s * 0.45)}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(String(standing || 1), cx, cy + s * 0.02);
  }
  if (label && s >= 14) {
    const r = s * 0.17;
    const lx = cx + s * 0.3;
    const ly = cy - s * 0.3;
    ctx.beginPath();
    ctx.arc(lx, ly, r, 0, Math.PI * 2);
    ctx.fillStyle = outline;
    ctx.fill();
    ctx.fillStyle = text;
    ctx.font = `bold ${Math.round(r * 1.5)}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(label, lx, ly + r * 0.05);
  }
}

export class CellWarBoard {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{onCell?: (x: number, y: number) => void,
   *          onHover?: (cell: ?number[], clientX: number, clientY: number) => void,
   *          maxCellPx?: number, scroller?: ?HTMLElement}} [opts]
   *   `scroller`: the scroll container that makes zoom and pan possible (else the board
   *   fits its parent)
   */
  constructor(canvas, { onCell = () => {}, onHover = () => {}, maxCellPx = 64, scroller = null } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.onCell = onCell;
    this.onHover = onHover;
    this.maxCellPx = maxCellPx;
    this.scroller = scroller;
    this.view = null;
    this.visible = new Uint8Array(0);
    this.visibleKey = '';
    this.hidden = false; // hand-over: draw nothing
    this.selected = null; // unit id
    this.targets = new Map(); // "x,y" → action
    this.interactive = false;
    this.cursor = null; // keyboard cursor [x, y] (drawn while the canvas has the focus)
    this.frame = 0;
    this.cellPx = 20;
    this.basePx = 20; // the size that fits
    this.zoom = 1;
    this.autoZoom = true; // the zoom keeps cells readable until the player zooms
    this.sizeKey = ''; // the board size the zoom was chosen for
    this.pan = null; // {x, y, left, top, moved} while the mouse drags the board
    this.refreshColors();
    this._bindPointer();
    this._onResize = () => this.fit();
    window.addEventListener('resize', this._onResize);
    if (typeof ResizeObserver === 'function') {
      this._observer = new ResizeObserver(() => this.fit());
      this._observer.observe(scroller || canvas.parentElement);
    }
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
      focus: v('--focus', '#ffd166'),
    };
    this.players = PLAYER_FALLBACK.map((fb, i) => v(`--cell-${i}`, fb));
    for (let i = 5; i <= 8; i++) this.players[i] = v(`--cw-player-${i}`, PLAYER_FALLBACK[i]);
    this.labels = document.documentElement.dataset.palette === 'cb';
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

  /** Is cell (x, y) in the viewer's sight? */
  isVisible(x, y) {
    const v = this.view;
    return !!v && x >= 0 && y >= 0 && x < v.width && y < v.height && !!this.visible[y * v.width + x];
  }

  /** The smallest readable cell: larger on touch screens. */
  static readablePx() {
    return matchMedia('(pointer: coarse)').matches ? 14 : 10;
  }

  fit() {
    const v = this.view;
    if (!v) return;
    const box = this.scroller || this.canvas.parentElement;
    const availW = box.clientWidth - 4;
    const availH = box.clientHeight - 4;
    if (availW <= 0 || availH <= 0) return;
    const base = Math.min(availW / v.width, availH / v.height, this.maxCellPx);
    this.basePx = base >= 8 ? Math.floor(base) : base;
    const key = `${v.width}x${v.height}`;
    if (this.scroller && key !== this.sizeKey) {
      this.sizeKey = key;
      this.autoZoom = true;
    }
    if (this.scroller && this.autoZoom) {
      this.zoom = Math.min(MAX_ZOOM, Math.max(1, CellWarBoard.readablePx() / this.basePx));
    }
    this._applySize();
  }

  _applySize() {
    const v = this.view;
    const px = this.scroller ? Math.min(this.maxCellPx * 2, this.basePx * this.zoom) : this.basePx;
    this.cellPx = px >= 8 ? Math.round(px) : px;
    const dpr = window.devicePixelRatio || 1;
    const cssW = Math.round(v.width * this.cellPx);
    const cssH = Math.round(v.height * this.cellPx);
    if (this.canvas.style.width === `${cssW}px` && this.canvas.style.height === `${cssH}px`
        && this.canvas.width === Math.round(cssW * dpr)) return;
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${cssH}px`;
    this.canvas.width = Math.round(cssW * dpr);
    this.canvas.height = Math.round(cssH * dpr);
    this.canvas.dataset.cellPx = String(this.cellPx);
    this.invalidate();
  }

  /**
   * Zoom by `factor` (1 = fit … 8× that), keeping the board point under (clientX,
   * clientY) (default: the middle of the visible part) in place.
   */
  zoomBy(factor, clientX, clientY) {
    if (!this.view || !this.scroller) return;
    const sc = this.scroller;
    const sr = sc.getBoundingClientRect();
    const cr = this.canvas.getBoundingClientRect();
    const ax = clientX ?? sr.left + sr.width / 2;
    const ay = clientY ?? sr.top + sr.height / 2;
    const fx = cr.width ? (ax - cr.left) / cr.width : 0.5;
    const fy = cr.height ? (ay - cr.top) / cr.height : 0.5;
    const old = this.zoom;
    this.autoZoom = false;
    this.zoom = Math.min(MAX_ZOOM, Math.max(1, this.zoom * factor));
    if (this.zoom === old) return;
    this._applySize();
    const nr = this.canvas.getBoundingClientRect();
    sc.scrollLeft += nr.left + fx * nr.width - ax;
    sc.scrollTop += nr.top + fy * nr.height - ay;
  }

  /** Back to the size that fits. */
  zoomFit() {
    this.autoZoom = false;
    this.zoom = 1;
    if (this.view) this._applySize();
  }

  /** Scroll so that cells [[x, y], …] are in view (centred on their middle). */
  reveal(cells) {
    const sc = this.scroller;
    if (!sc || !cells.length || !this.view) return;
    const xs = cells.map((c) => c[0]);
    const ys = cells.map((c) => c[1]);
    const cx = ((Math.min(...xs) + Math.max(...xs) + 1) / 2) * this.cellPx;
    const cy = ((Math.min(...ys) + Math.max(...ys) + 1) / 2) * this.cellPx;
    const off = this.canvas.offsetLeft - sc.offsetLeft;
    const offY = this.canvas.offsetTop - sc.offsetTop;
    sc.scrollLeft = Math.max(0, cx + off - sc.clientWidth / 2);
    sc.scrollTop = Math.max(0, cy + offY - sc.clientHeight / 2);
  }

  /** Scroll just enough that cell (x, y) is in view. */
  ensureVisible(x, y) {
    const sc = this.scroller;
    if (!sc) return;
    const cr = this.canvas.getBoundingClientRect();
    const sr = sc.getBoundingClientRect();
    const l = cr.left + x * this.cellPx;
    const t = cr.top + y * this.cellPx;
    if (l < sr.left) sc.scrollLeft -= sr.left - l + this.cellPx;
    else if (l + this.cellPx > sr.right) sc.scrollLeft += l + this.cellPx - sr.right + this.cellPx;
    if (t < sr.top) sc.scrollTop -= sr.top - t + this.cellPx;
    else if (t + this.cellPx > sr.bottom) sc.scrollTop += t + this.cellPx - sr.bottom + this.cellPx;
  }

  /** The keyboard cursor (null: none). */
  setCursor(cell) {
    this.cursor = cell;
    if (cell) this.ensureVisible(cell[0], cell[1]);
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
    if (this._observer) this._observer.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }

  _bindPointer() {
    const c = this.canvas;
    c.addEventListener('click', (e) => {
      if (this.pan && this.pan.moved) return; // the end of a drag, not a click
      if (!this.interactive || !this.view) return;
      const cell = this.cellAt(e.clientX, e.clientY);
      if (cell) this.onCell(cell[0], cell[1]);
    });
    c.addEventListener('pointermove', (e) => {
      if (this.pan) return;
      this.onHover(this.cellAt(e.clientX, e.clientY), e.clientX, e.clientY);
    });
    c.addEventListener('pointerleave', () => this.onHover(null, 0, 0));
    const sc = this.scroller;
    if (!sc) return;
    // Mouse: drag to pan (a press that moves more than a few pixels is no click).
    sc.addEventListener('pointerdown', (e) => {
      if (e.pointerType !== 'mouse' || e.button !== 0) return;
      this.pan = { x: e.clientX, y: e.clientY, left: sc.scrollLeft, top: sc.scrollTop, moved: false, id: e.pointerId };
    });
    sc.addEventListener('pointermove', (e) => {
      const p = this.pan;
      if (!p || p.id !== e.pointerId) return;
      const dx = e.clientX - p.x;
      const dy = e.clientY - p.y;
      if (!p.moved && Math.hypot(dx, dy) < 6) return;
      if (!p.moved) {
        p.moved = true;
        try { sc.setPointerCapture(e.pointerId); } catch { /* synthetic pointer */ }
        sc.parentElement.classList.add('panning');
        this.onHover(null, 0, 0);
      }
      sc.scrollLeft = p.left - dx;
      sc.scrollTop = p.top - dy;
    });
    const end = () => {
      if (!this.pan) return;
      sc.parentElement.classList.remove('panning');
      // The click that follows a drag's release still sees `moved`; forget it after.
      const p = this.pan;
      setTimeout(() => { if (this.pan === p) this.pan = null; }, 0);
    };
    sc.addEventListener('pointerup', end);
    sc.addEventListener('pointercancel', end);
    sc.addEventListener('wheel', (e) => {
      if (!e.ctrlKey || !e.deltaY) return;
      e.preventDefault();
      this.zoomBy(e.deltaY < 0 ? 1.25 : 0.8, e.clientX, e.clientY);
    }, { passive: false });
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

    // Keyboard cursor.
    if (this.cursor && document.activeElement === canvas) {
      const [cx, cy] = this.cursor;
      ctx.setLineDash([Math.max(3, s / 5), Math.max(2, s / 8)]);
      ctx.strokeStyle = colors.focus;
      ctx.lineWidth = Math.max(2, s / 10);
      ctx.strokeRect(cx * s + ctx.lineWidth / 2, cy * s + ctx.lineWidth / 2, s - ctx.lineWidth, s - ctx.lineWidth);
      ctx.setLineDash([]);
    }
  }

  _unit(u, s) {
    const { ctx, colors } = this;
    const cx = (u.x + 0.5) * s;
    const cy = (u.y + 0.5) * s;
    const fill = this.players[u.owner] || PLAYER_FALLBACK[1];
    const own = u.id !== null && u.id !== undefined && this.view.you === u.owner;
    ctx.globalAlpha = own && u.acted ? 0.5 : 1;
    drawUnit(ctx, u, cx, cy, s, { fill, outline: colors.outline, text: colors.text, label: this.labels ? String(u.owner) : '' });
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
