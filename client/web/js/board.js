// Canvas board: renders a Uint8Array of cell states (0 dead, k = colour k) one pixel per
// cell into an offscreen ImageData, scales it up without smoothing, dims everything
// outside the active zone and previews the tool. Redraws only when something changed,
// on requestAnimationFrame. Turns pointer strokes and the keyboard (arrow keys move a
// cursor, Space/Enter place, Delete erases, R rotates a stamp) into cell lists for the
// caller. Fills its container (.board-wrap) and follows its size (ResizeObserver). With
// the colour-blind palette (<html data-palette="cb">) live cells carry a mark per colour.

import { classifyStamp } from './stamps.js';
import { footprint, line, strokeTool } from './tools.js';

const COLOR_VARS = ['--cell-dead', '--cell-1', '--cell-2', '--cell-3', '--cell-4'];

function cssColorToRGBA(ctx, color) {
  ctx.clearRect(0, 0, 1, 1);
  ctx.fillStyle = '#000';
  ctx.fillStyle = color;
  ctx.fillRect(0, 0, 1, 1);
  return ctx.getImageData(0, 0, 1, 1).data;
}

export class BoardView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{onStroke?: (cells: number[][], mode: 'place'|'erase') => void,
   *          onStrokeEnd?: () => void, onStamp?: (x: number, y: number) => void,
   *          onRotate?: (delta: number) => void,
   *          onHover?: (cell: number[]|null) => void}} handlers
   */
  constructor(canvas, {
    onStroke = () => {}, onStrokeEnd = () => {}, onStamp = () => {}, onRotate = () => {},
    onHover = () => {},
  } = {}) {
    this.onHover = onHover;
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.off = document.createElement('canvas');
    this.offCtx = this.off.getContext('2d', { willReadFrequently: true });
    this.width = 0;
    this.height = 0;
    this.cells = new Uint8Array(0);
    this.overlay = new Map(); // index → state shown instead of the board's
    this.zone = null; // [x0, y0, x1, y1] or null (nothing dimmed)
    this.interactive = false;
    this.toolId = 'pencil';
    this._hover = null; // [x, y] (the `hover` property tells onHover about changes)
    this.keyCursor = false; // the hover cell is the keyboard cursor
    this.hoverColor = 1;
    this.cellPx = 8;
    this.dirty = true;
    this.frame = 0;
    this.onStroke = onStroke;
    this.onStrokeEnd = onStrokeEnd;
    this.onStamp = onStamp;
    this.onRotate = onRotate;
    this.stamp = null; // rotated stamp {cells, width, height} or null (the tool draws)
    this.tapMode = false; // place on release (touch screens)
    this.stroke = null; // {kind: 'draw'|'tap'|'stamp'|'stamp-tap', tool, last: [x, y], pointerId, rect}
    this.maxCellPx = 64;
    this.refreshColors();
    this._bindPointer();
    this._bindKeyboard();
    this._onResize = () => this.fit();
    window.addEventListener('resize', this._onResize);
    if (typeof ResizeObserver === 'function' && canvas.parentElement) {
      this._observer = new ResizeObserver(() => this.fit());
      this._observer.observe(canvas.parentElement);
    }
  }

  /** The cell under the pointer, [x, y] or null; a change is reported to onHover. */
  get hover() {
    return this._hover;
  }

  set hover(cell) {
    const old = this._hover;
    this._hover = cell;
    const same = old === cell || (old && cell && old[0] === cell[0] && old[1] === cell[1]);
    if (!same) this.onHover(cell);
  }

  /** Re-read the palette from CSS variables (after a theme change). */
  refreshColors() {
    const style = getComputedStyle(this.canvas);
    const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    this.palette = new Uint32Array(256);
    const fallback = ['#111', '#e5484d', '#30a46c', '#3e63dd', '#f5d90a'];
    COLOR_VARS.forEach((v, i) => {
      const c = style.getPropertyValue(v).trim() || fallback[i];
      const [r, g, b, a] = cssColorToRGBA(probe, c);
      this.palette[i] = ((a << 24) | (b << 16) | (g << 8) | r) >>> 0; // little-endian RGBA
    });
    for (let i = COLOR_VARS.length; i < 256; i++) this.palette[i] = this.palette[1];
    this.gridColor = style.getPropertyValue('--grid').trim() || 'rgba(255,255,255,0.06)';
    this.dimColor = style.getPropertyValue('--dim').trim() || 'rgba(0,0,0,0.55)';
    this.zoneColor = style.getPropertyValue('--zone-border').trim() || 'rgba(255,255,255,0.5)';
    this.cellCss = COLOR_VARS.map((v, i) => style.getPropertyValue(v).trim() || fallback[i]);
    this.markColor = style.getPropertyValue('--mark').trim() || 'rgba(0,0,0,0.6)';
    this.marks = document.documentElement.dataset.palette === 'cb';
    this.invalidate();
  }

  /** Show a board of width×height cells (row-major states). */
  setBoard(cells, width, height) {
    const resized = width !== this.width || height !== this.height;
    this.cells = cells;
    this.width = width;
    this.height = height;
    if (resized) {
      this.off.width = width;
      this.off.height = height;
      this.image = this.offCtx.createImageData(width, height);
      this.pixels = new Uint32Array(this.image.data.buffer);
      this.fit();
    }
    this.invalidate();
  }

  /** Optimistic cells drawn over the board until the server confirms them. */
  setOverlay(overlay) {
    this.overlay = overlay;
    this.invalidate();
  }

  /** Dim everything outside zone [x0, y0, x1, y1) (null: nothing dimmed). */
  setZone(zone) {
    const same = zone === this.zone || (zone && this.zone && zone.every((v, i) => v === this.zone[i]));
    if (!same) {
      this.zone = zone;
      this.invalidate();
    }
  }

  /** Whether strokes are accepted; color = the drawing player's colour (tool preview). */
  setInteractive(on, color = 1) {
    this.interactive = on;
    this.hoverColor = color;
    this.canvas.classList.toggle('interactive', on);
    if (!on) this.stroke = null;
    this.invalidate();
  }

  setTool(toolId) {
    this.toolId = toolId;
    this.invalidate();
  }

  /** A rotated stamp ({cells, width, height}) replaces the tool on the left button; null: none. */
  setStamp(stamp) {
    const same = stamp === this.stamp || (stamp && this.stamp && stamp.key === this.stamp.key);
    if (same) return;
    this.stamp = stamp;
    this.invalidate();
  }

  /** Tap mode: a press only highlights, the release places (tools, stamps, erasing). */
  setTapMode(on) {
    if (this.tapMode === !!on) return;
    this.tapMode = !!on;
    this.stroke = null;
    this.invalidate();
  }

  /** State of cell index i as shown (overlay over board). */
  stateAt(i) {
    return this.overlay.has(i) ? this.overlay.get(i) : this.cells[i];
  }

  /**
   * Size the canvas to fill its container (the .board-wrap: its content box, less the
   * canvas border) keeping square cells: as many CSS pixels per cell as fit, at most
   * `maxCellPx`; whole pixels from 8 px per cell up (a crisp grid, at most 1/8 of the
   * space lost), fractions below (a 300×300 board takes the whole height of a big
   * screen). Nothing happens while the container is hidden.
   */
  fit() {
    if (!this.width) return;
    const parent = this.canvas.parentElement;
    if (!parent) return;
    const cs = getComputedStyle(parent);
    const padX = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) || 0;
    const padY = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) || 0;
    const border = 2;
    const availW = parent.clientWidth - padX - border;
    const availH = parent.clientHeight - padY - border;
    if (availW <= 0 || availH <= 0) return;
    let px = Math.min(availW / this.width, availH / this.height, this.maxCellPx);
    if (px >= 8) px = Math.floor(px);
    this.cellPx = px;
    const dpr = window.devicePixelRatio || 1;
    const cssW = Math.floor(this.width * px * 100) / 100;
    const cssH = Math.floor(this.height * px * 100) / 100;
    const devW = Math.max(1, Math.round(cssW * dpr));
    const devH = Math.max(1, Math.round(cssH * dpr));
    if (this.canvas.width === devW && this.canvas.height === devH && this.canvas.style.width === `${cssW}px`) return;
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${cssH}px`;
    this.canvas.width = devW;
    this.canvas.height = devH;
    this.dirty = true;
    // Draw now, not at the next frame: the canvas was just cleared by the resize.
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    this._render();
  }

  invalidate() {
    this.dirty = true;
    if (!this.frame) this.frame = requestAnimationFrame(() => this._render());
  }

  /** Cell under a client point, or null outside the board; `rect` is where the board
   * was on screen (default: now). */
  cellAt(clientX, clientY, rect = null) {
    const r = rect || this.canvas.getBoundingClientRect();
    if (!r.width || !r.height) return null;
    const x = Math.floor(((clientX - r.left) / r.width) * this.width);
    const y = Math.floor(((clientY - r.top) / r.height) * this.height);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return null;
    return [x, y];
  }

  destroy() {
    window.removeEventListener('resize', this._onResize);
    if (this._observer) this._observer.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }

  _render() {
    this.frame = 0;
    if (!this.dirty || !this.width) return;
    this.dirty = false;
    const { width: w, height: h, pixels, palette, cells, ctx } = this;
    for (let i = 0, n = w * h; i < n; i++) pixels[i] = palette[cells[i]];
    for (const [i, s] of this.overlay) if (i >= 0 && i < w * h) pixels[i] = palette[s];
    this.offCtx.putImageData(this.image, 0, 0);

    const W = this.canvas.width;
    const H = this.canvas.height;
    const sx = W / w;
    const sy = H / h;
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, W, H);
    ctx.drawImage(this.off, 0, 0, W, H);

    if (sx >= 6) {
      ctx.beginPath();
      for (let x = 1; x < w; x++) {
        const X = Math.round(x * sx) + 0.5;
        ctx.moveTo(X, 0);
        ctx.lineTo(X, H);
      }
      for (let y = 1; y < h; y++) {
        const Y = Math.round(y * sy) + 0.5;
        ctx.moveTo(0, Y);
        ctx.lineTo(W, Y);
      }
      ctx.strokeStyle = this.gridColor;
      ctx.lineWidth = 1;
      ctx.stroke();
    }

    if (this.marks && sx >= 5) this._renderMarks(ctx, sx, sy);

    if (this.zone) {
      const [x0, y0, x1, y1] = this.zone;
      const X0 = x0 * sx;
      const Y0 = y0 * sy;
      const X1 = x1 * sx;
      const Y1 = y1 * sy;
      ctx.fillStyle = this.dimColor;
      ctx.fillRect(0, 0, W, Y0);
      ctx.fillRect(0, Y1, W, H - Y1);
      ctx.fillRect(0, Y0, X0, Y1 - Y0);
      ctx.fillRect(X1, Y0, W - X1, Y1 - Y0);
      ctx.strokeStyle = this.zoneColor;
      ctx.lineWidth = Math.max(1, Math.round(sx / 4));
      ctx.strokeRect(X0 + 0.5, Y0 + 0.5, X1 - X0 - 1, Y1 - Y0 - 1);
    }

    if (this.interactive && this.hover && this.keyCursor && document.activeElement === this.canvas) {
      const [kx, ky] = this.hover;
      ctx.setLineDash([Math.max(2, sx / 4), Math.max(2, sx / 6)]);
      ctx.strokeStyle = this.zoneColor;
      ctx.lineWidth = Math.max(2, Math.round(sx / 5));
      ctx.strokeRect(kx * sx - 1, ky * sy - 1, sx + 2, sy + 2);
      ctx.setLineDash([]);
    }

    if (this.interactive && this.hover) {
      const stamping = this.stroke ? this.stroke.kind.startsWith('stamp') : !!this.stamp;
      const pressed = !!this.stroke && this.tapMode;
      if (stamping && this.stamp) {
        this._renderStamp(ctx, sx, sy, pressed);
      } else {
        const tool = this.stroke ? this.stroke.tool : strokeTool(this.toolId, 0);
        const lo = -Math.floor((tool.size - 1) / 2);
        const [hx, hy] = this.hover;
        const color = tool.mode === 'erase' ? this.zoneColor : this.cellCss[this.hoverColor] || this.zoneColor;
        const rx = (hx + lo) * sx;
        const ry = (hy + lo) * sy;
        if (pressed) { // tap mode: where the release will place, clearly marked
          ctx.globalAlpha = 0.45;
          ctx.fillStyle = color;
          ctx.fillRect(rx, ry, tool.size * sx, tool.size * sy);
          ctx.globalAlpha = 1;
        }
        ctx.strokeStyle = color;
        ctx.lineWidth = Math.max(1, Math.round(sx / 6));
        ctx.strokeRect(rx + 0.5, ry + 0.5, tool.size * sx - 1, tool.size * sy - 1);
      }
    }
  }

  /** Colour-blind palette: a mark on every live cell by its colour (1 dot, 2 slash,
   * 3 plus, 4 ring), so colours are told apart by more than hue. */
  _renderMarks(ctx, sx, sy) {
    const { width: w, height: h } = this;
    const paths = [null, new Path2D(), new Path2D(), new Path2D(), new Path2D()];
    const r = Math.min(sx, sy);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const s = this.stateAt(y * w + x);
        if (!s || s > 4) continue;
        const cx = (x + 0.5) * sx;
        const cy = (y + 0.5) * sy;
        const p = paths[s];
        if (s === 1) {
          p.moveTo(cx + r * 0.18, cy);
          p.arc(cx, cy, r * 0.18, 0, Math.PI * 2);
        } else if (s === 2) {
          p.moveTo(cx - r * 0.3, cy + r * 0.3);
          p.lineTo(cx + r * 0.3, cy - r * 0.3);
        } else if (s === 3) {
          p.moveTo(cx - r * 0.3, cy);
          p.lineTo(cx + r * 0.3, cy);
          p.moveTo(cx, cy - r * 0.3);
          p.lineTo(cx, cy + r * 0.3);
        } else {
          p.rect(cx - r * 0.25, cy - r * 0.25, r * 0.5, r * 0.5);
        }
      }
    }
    ctx.fillStyle = this.markColor;
    ctx.strokeStyle = this.markColor;
    ctx.lineWidth = Math.max(1, r / 7);
    ctx.fill(paths[1]);
    for (const s of [2, 3, 4]) ctx.stroke(paths[s]);
  }

  /** The stamp preview at the hover cell: own colour where it would place, grey outside
   * the zone, crossed on live cells (skipped). */
  _renderStamp(ctx, sx, sy, pressed) {
    const [hx, hy] = this.hover;
    const cells = classifyStamp(this.stamp.cells, hx, hy, this.zone, this.width, this.height, (i) => this.stateAt(i));
    const own = this.cellCss[this.hoverColor] || this.zoneColor;
    ctx.globalAlpha = pressed ? 0.85 : 0.6;
    for (const [x, y, kind] of cells) {
      if (kind === 'off') continue;
      ctx.fillStyle = kind === 'place' ? own : '#8a8f99';
      if (kind !== 'skip') ctx.fillRect(x * sx, y * sy, sx, sy);
    }
    ctx.globalAlpha = 1;
    ctx.strokeStyle = '#8a8f99';
    ctx.lineWidth = Math.max(1, Math.round(sx / 8));
    ctx.beginPath();
    for (const [x, y, kind] of cells) {
      if (kind !== 'skip') continue;
      ctx.moveTo(x * sx + 1, y * sy + 1);
      ctx.lineTo((x + 1) * sx - 1, (y + 1) * sy - 1);
      ctx.moveTo((x + 1) * sx - 1, y * sy + 1);
      ctx.lineTo(x * sx + 1, (y + 1) * sy - 1);
    }
    ctx.stroke();
    ctx.strokeStyle = own;
    ctx.lineWidth = 1;
    ctx.strokeRect(hx * sx + 0.5, hy * sy + 0.5, this.stamp.width * sx - 1, this.stamp.height * sy - 1);
  }

  _emit(tool, cells) {
    const inside = cells.filter(([x, y]) => x >= 0 && y >= 0 && x < this.width && y < this.height);
    if (inside.length) this.onStroke(inside, tool.mode);
  }

  _bindPointer() {
    const c = this.canvas;
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('pointerdown', (e) => {
      if (!this.interactive || (e.button !== 0 && e.button !== 2)) return;
      // A stroke's cells are read against where the board was when it was touched: a
      // layout change during the press (a readout that appears) must not move the tap.
      const rect = c.getBoundingClientRect();
      const cell = this.cellAt(e.clientX, e.clientY, rect);
      if (!cell) return;
      e.preventDefault();
      try { c.setPointerCapture(e.pointerId); } catch { /* synthetic pointer */ }
      this.keyCursor = false;
      this.hover = cell;
      if (e.button === 0 && this.stamp) {
        // One placement per press: at the press, or (tap mode) at the release.
        this.stroke = { kind: this.tapMode ? 'stamp-tap' : 'stamp', pointerId: e.pointerId, last: cell, rect };
        if (!this.tapMode) this.onStamp(cell[0], cell[1]);
      } else {
        const tool = strokeTool(this.toolId, e.button);
        this.stroke = { kind: this.tapMode ? 'tap' : 'draw', tool, last: cell, pointerId: e.pointerId, rect };
        if (!this.tapMode) this._emit(tool, footprint(cell[0], cell[1], tool.size));
      }
      this.invalidate();
    });
    c.addEventListener('pointermove', (e) => {
      const s = this.stroke;
      const cell = this.cellAt(e.clientX, e.clientY, s && s.pointerId === e.pointerId ? s.rect : null);
      const moved = !cell !== !this.hover || (cell && (cell[0] !== this.hover[0] || cell[1] !== this.hover[1]));
      // While pressed in tap mode the highlight stays on the board (the release places there).
      if (cell || !s) {
        if (moved) this.keyCursor = false;
        this.hover = cell;
      }
      if (moved) this.invalidate();
      if (!s || s.pointerId !== e.pointerId || !cell || !this.interactive) return;
      if (s.kind !== 'draw') {
        s.last = cell;
        return;
      }
      if (cell[0] === s.last[0] && cell[1] === s.last[1]) return;
      const seen = new Set();
      const cells = [];
      for (const [lx, ly] of line(s.last[0], s.last[1], cell[0], cell[1]).slice(1)) {
        for (const p of footprint(lx, ly, s.tool.size)) {
          const k = p[1] * this.width + p[0];
          if (!seen.has(k)) {
            seen.add(k);
            cells.push(p);
          }
        }
      }
      s.last = cell;
      this._emit(s.tool, cells);
    });
    const end = (e, cancelled) => {
      const s = this.stroke;
      if (!s || s.pointerId !== e.pointerId) return;
      this.stroke = null;
      if (!cancelled && this.interactive) {
        const cell = this.cellAt(e.clientX, e.clientY, s.rect) || s.last;
        if (s.kind === 'tap') this._emit(s.tool, footprint(cell[0], cell[1], s.tool.size));
        if (s.kind === 'stamp-tap') this.onStamp(cell[0], cell[1]);
      }
      if (s.kind === 'draw' || s.kind === 'tap') this.onStrokeEnd();
      if (e.pointerType === 'touch') this.hover = null;
      this.invalidate();
    };
    c.addEventListener('pointerup', (e) => end(e, false));
    c.addEventListener('pointercancel', (e) => end(e, true));
    c.addEventListener('pointerleave', () => {
      if (!this.stroke && !this.keyCursor) {
        this.hover = null;
        this.invalidate();
      }
    });
    c.addEventListener('wheel', (e) => {
      if (!this.interactive || !this.stamp || !e.deltaY) return;
      e.preventDefault();
      this.onRotate(e.deltaY > 0 ? 1 : -1);
    }, { passive: false });
  }

  /**
   * Keyboard play on the focused board: the arrow keys move a cursor (Shift: 5 cells),
   * Space or Enter places with the chosen tool or stamp there, Delete / Backspace erase
   * (an eraser of the chosen eraser's size, else 1×1), R / Shift+R rotate a stamp.
   * Keys are taken only while the board accepts drawing; the cursor starts in the zone.
   */
  _bindKeyboard() {
    const c = this.canvas;
    c.addEventListener('focus', () => {
      // The cursor appears when the focus came from the keyboard, not from a click.
      if (this.interactive && !this.hover && c.matches(':focus-visible')) this._startCursor();
      this.invalidate();
    });
    c.addEventListener('blur', () => {
      if (this.keyCursor) this.hover = null;
      this.keyCursor = false;
      this.invalidate();
    });
    c.addEventListener('keydown', (e) => {
      if (!this.interactive || !this.width || e.altKey || e.ctrlKey || e.metaKey) return;
      const step = e.shiftKey ? 5 : 1;
      const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
      if (!this.hover) this._startCursor();
      const [x, y] = this.hover;
      if (moves[e.key]) {
        const [dx, dy] = moves[e.key];
        this.keyCursor = true;
        this.hover = [Math.min(this.width - 1, Math.max(0, x + dx)), Math.min(this.height - 1, Math.max(0, y + dy))];
      } else if (e.key === ' ' || e.key === 'Enter') {
        this.keyCursor = true;
        if (this.stamp) this.onStamp(x, y);
        else {
          const tool = strokeTool(this.toolId, 0);
          this._emit(tool, footprint(x, y, tool.size));
          this.onStrokeEnd();
        }
      } else if (e.key === 'Delete' || e.key === 'Backspace') {
        this.keyCursor = true;
        const tool = strokeTool(this.toolId, 2);
        this._emit(tool, footprint(x, y, tool.size));
        this.onStrokeEnd();
      } else if ((e.key === 'r' || e.key === 'R') && this.stamp) {
        this.onRotate(e.shiftKey ? -1 : 1);
      } else {
        return;
      }
      e.preventDefault();
      e.stopPropagation(); // the space bar must not also pause the game
      this.invalidate();
    });
  }

  /** The keyboard cursor's first cell: the middle of the zone (or of the board). */
  _startCursor() {
    const [x0, y0, x1, y1] = this.zone || [0, 0, this.width, this.height];
    this.keyCursor = true;
    this.hover = [Math.floor((x0 + x1 - 1) / 2), Math.floor((y0 + y1 - 1) / 2)];
  }
}
