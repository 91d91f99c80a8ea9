// The drawing toolbar of every Life board (hot-seat / online games and the campaign):
// pencil, brush, erasers, the pattern menu (stamps), ↻ rotation, tap mode and the
// hovered cell's coordinates. It owns the choice (tool, pattern, rotation, tap) and turns
// the board's strokes and stamps into the game's `draw` / `stamp`, saying so when the
// budget is spent. Every item keeps its size, so choosing a tool or a pattern, or the
// readout appearing under a finger, never moves the board.

import { richNodes, t } from './i18n.js';
import { CATEGORIES, loadPatterns, patternName, rotatePattern } from './stamps.js';
import { TOOLS } from './tools.js';

export class DrawingTools {
  /**
   * @param {{bar: HTMLElement, prefix?: string, tool?: string,
   *          saveTool?: (id: string) => void, game: () => ?object,
   *          onChange?: () => void, message: (text: string) => void}} opts
   *   `prefix` goes before every data-testid (`tool-pencil`, `pattern`, `btn-rotate`,
   *   `btn-tap`, `coords`); `game()` is the HotseatGame drawn on (its `draw(cells, mode)`
   *   and `stamp(id, x, y, rotation, cells)` answer 'budget' when the budget is spent).
   */
  constructor({ bar, prefix = '', tool = 'pencil', saveTool = () => {}, game, onChange = () => {}, message }) {
    this.bar = bar;
    this.prefix = prefix;
    this.tool = tool in TOOLS ? tool : 'pencil';
    this.saveTool = saveTool;
    this.game = game;
    this.onChange = onChange;
    this.message = message;
    this.pattern = null; // selected stamp id (not persisted)
    this.rotation = 0; // quarter turns clockwise (not persisted)
    this.tap = false; // place on release (not persisted)
    this.patterns = null; // the catalogue of GET /patterns
    this.board = null;
    this.drawing = false;
  }

  /** The BoardView drawn on (its handlers call draw / stamp / rotate / showCoords). */
  attach(board) {
    this.board = board;
    board.setTool(this.tool);
    this.build();
  }

  /** Fetch the pattern catalogue once; the menu appears when it is in. */
  loadCatalogue() {
    if (this.patterns) return;
    loadPatterns().then((cat) => {
      if (cat && !this.patterns) {
        this.patterns = cat;
        this.build();
        this.onChange();
      }
    });
  }

  /** A stroke of the board (`place` / `erase` cells). */
  draw(cells, mode) {
    const g = this.game();
    if (!g) return;
    if (g.draw(cells, mode) === 'budget') this.message(t('draw.budget'));
  }

  /** Stamp the selected pattern with its top-left at (x, y). */
  stamp(x, y) {
    const g = this.game();
    const pat = this._selected();
    if (!g || !pat) return;
    const { cells } = rotatePattern(pat.cells, this.rotation);
    if (g.stamp(pat.id, x, y, this.rotation, cells) === 'budget') this.message(t('stamp.budget'));
  }

  rotate(delta) {
    if (!this.pattern) return;
    this.rotation = (((this.rotation + delta) % 4) + 4) % 4;
    this.syncStamp();
    this.onChange();
  }

  selectPattern(id) {
    this.pattern = id && this.patterns && this.patterns.patterns.has(id) ? id : null;
    this.rotation = 0;
    const sel = this._el('pattern');
    if (sel) sel.value = this.pattern || '';
    this.syncStamp();
    this.onChange();
  }

  selectTool(id) {
    this.tool = id in TOOLS ? id : 'pencil';
    if (this.board) this.board.setTool(this.tool);
    this.saveTool(this.tool);
    this.selectPattern(null);
  }

  setTap(on) {
    this.tap = !!on;
    const b = this._el('btn-tap');
    if (b) {
      b.classList.toggle('active', this.tap);
      b.setAttribute('aria-pressed', String(this.tap));
    }
    if (this.board) this.board.setTapMode(this.tap);
    this.onChange();
  }

  _selected() {
    return (this.pattern && this.patterns && this.patterns.patterns.get(this.pattern)) || null;
  }

  /** Give the board the selected (rotated) stamp now (a click right after choosing a
   * pattern must stamp it, not draw with the previous tool); returns the pattern. */
  syncStamp() {
    const pat = this._selected();
    if (this.board) {
      this.board.setStamp(pat ? { ...rotatePattern(pat.cells, this.rotation), key: `${pat.id}/${this.rotation}` } : null);
    }
    return pat;
  }

  /**
   * Show the toolbar while drawing only (`drawing`): no tool, no ↻, outside the drawing
   * phases. Within them ↻ keeps its place while no pattern is chosen (invisible), so
   * choosing one does not re-wrap the toolbar.
   */
  sync(drawing) {
    this.drawing = !!drawing;
    this.bar.hidden = !this.drawing;
    for (const b of this.bar.querySelectorAll('button[data-tool]')) {
      const on = b.dataset.tool === this.tool && !this.pattern;
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    }
    const pat = this.syncStamp();
    if (this.board) this.board.setTapMode(this.tap);
    const rot = this._el('btn-rotate');
    if (rot) {
      rot.style.visibility = pat ? 'visible' : 'hidden';
      rot.disabled = !pat || !this.drawing;
    }
  }

  /** The hovered (or keyboard cursor) cell's coordinates. */
  showCoords(cell) {
    const el = this._el('coords');
    if (el) el.textContent = cell ? `(${cell[0]}, ${cell[1]})` : '';
  }

  _el(testid) {
    return this.bar.querySelector(`[data-testid="${this.prefix}${testid}"]`);
  }

  /** (Re)build the toolbar in the current language. */
  build() {
    const bar = this.bar;
    const p = this.prefix;
    bar.replaceChildren();
    for (const [id, tool] of Object.entries(TOOLS)) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.tool = id;
      b.dataset.testid = `${p}tool-${id}`;
      b.textContent = `${tool.icon} ${t(tool.label)}`;
      b.classList.toggle('active', id === this.tool && !this.pattern);
      b.setAttribute('aria-pressed', String(id === this.tool && !this.pattern));
      b.addEventListener('click', () => this.selectTool(id));
      bar.append(b);
    }
    const sel = document.createElement('select');
    const none = document.createElement('option');
    none.value = '';
    none.textContent = `${t('tool.pattern')}: ${t('tool.pattern.none')}`;
    sel.append(none);
    const rot = document.createElement('button');
    rot.type = 'button';
    rot.className = 'icon';
    rot.textContent = '↻';
    rot.title = t('tool.rotate');
    rot.setAttribute('aria-label', t('tool.rotate'));
    if (this.patterns) {
      // Until GET /patterns answers: a disabled menu and ↻ of the same size, so the
      // toolbar does not re-wrap (and move the board) when the catalogue arrives.
      sel.dataset.testid = `${p}pattern`;
      sel.title = t('tool.pattern');
      sel.setAttribute('aria-label', t('tool.pattern'));
      for (const cat of CATEGORIES) {
        const ids = this.patterns.categories[cat] || [];
        if (!ids.length) continue;
        const group = document.createElement('optgroup');
        group.label = t(`cat.${cat}`);
        group.dataset.category = cat;
        for (const id of ids) {
          const o = document.createElement('option');
          o.value = id;
          o.translate = false; // a pattern's name
          o.textContent = patternName(this.patterns.patterns.get(id));
          group.append(o);
        }
        sel.append(group);
      }
      sel.value = this.pattern || '';
      sel.addEventListener('change', () => {
        this.selectPattern(sel.value);
        sel.blur();
      });
      rot.dataset.testid = `${p}btn-rotate`;
      rot.addEventListener('click', () => this.rotate(1));
    } else {
      sel.disabled = true;
      sel.setAttribute('aria-label', t('tool.pattern'));
    }
    rot.style.visibility = this._selected() ? 'visible' : 'hidden';
    rot.disabled = !this._selected() || !this.drawing;
    bar.append(sel, rot);
    const tap = document.createElement('button');
    tap.type = 'button';
    tap.dataset.testid = `${p}btn-tap`;
    tap.textContent = t('tool.tap');
    tap.title = t('tool.tap.title');
    tap.classList.toggle('active', this.tap);
    tap.setAttribute('aria-pressed', String(this.tap));
    tap.addEventListener('click', () => this.setTap(!this.tap));
    bar.append(tap);
    const coords = document.createElement('span');
    coords.className = 'coords';
    coords.dataset.testid = `${p}coords`;
    coords.title = t('hud.coords');
    bar.append(coords);
    this.showCoords(this.board ? this.board.hover : null);
    const hint = document.createElement('span');
    hint.className = 'hint rmb'; // hidden on touch screens (css: pointer: coarse / hover: none)
    hint.textContent = t('tool.rmb');
    bar.append(hint);
    const keys = document.createElement('span');
    keys.className = 'sr-only';
    keys.append(...richNodes(t('tool.keys')));
    bar.append(keys);
  }
}
