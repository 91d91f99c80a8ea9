// The game screen of a Life game (hot-seat with 2 or 4 seats on this device, or online
// with one seat per browser): HUD, toolbar (tools, pattern stamps, rotation, tap mode),
// canvas board, phase actions, hand-over screen (shown before the drawing seat's
// end_turn, so "Back to player N" is possible), the online share link and the winner
// screen.

import { BoardView } from '../board.js';
import { t } from '../i18n.js';
import { shareLink } from '../online.js';
import { CATEGORIES, loadPatterns, patternName, rotatePattern } from '../stamps.js';
import { TOOLS } from '../tools.js';
import { patchGame, saveGame } from '../storage.js';
import { confirmDialog, modalOpen, toast } from './dialogs.js';

const $ = (id) => document.getElementById(id);

export class GameScreen {
  /**
   * @param {{toMenu: () => void, rematch: (config: object) => void, prefs: () => object,
   *          savePrefs: (patch: object) => void}} app
   */
  constructor(app) {
    this.app = app;
    this.root = $('screen-game');
    this.game = null;
    this.handover = false;
    this.handoverBusy = false;
    this.frame = 0;
    this.tool = app.prefs().tool in TOOLS ? app.prefs().tool : 'pencil';
    this.pattern = null; // selected stamp id (not persisted)
    this.rotation = 0; // quarter turns clockwise (not persisted)
    this.tap = false; // place on release (not persisted, kept across games)
    this.patterns = null; // the catalogue of GET /patterns
    this.board = new BoardView($('board'), {
      onStroke: (cells, mode) => this.game && this.game.draw(cells, mode),
      onStamp: (x, y) => this._stamp(x, y),
      onRotate: (delta) => this._rotate(delta),
      onHover: (cell) => this._showCoords(cell),
    });
    this.board.setTool(this.tool);
    this._buildToolbar();
    this._bind();
    this._onChange = () => this.invalidate();
    this._onError = (e) => toast(t('error.generic', { message: `${e.detail.code}: ${e.detail.message}` }));
    this._onStatus = (e) => {
      if (e.detail === 'reconnecting') toast(t('status.reconnecting'), 'info', 1500);
    };
  }

  /** Show a game (a started HotseatGame); `handover` restores a pending hand-over screen. */
  attach(game, { handover = false } = {}) {
    this.detach();
    this.game = game;
    this.handover = handover;
    game.addEventListener('change', this._onChange);
    game.addEventListener('error', this._onError);
    game.addEventListener('status', this._onStatus);
    $('overlay-winner').hidden = true;
    this.board.fit();
    this.invalidate();
    if (!this.patterns) {
      loadPatterns().then((cat) => {
        if (cat && !this.patterns) {
          this.patterns = cat;
          this._buildToolbar();
          this.invalidate();
        }
      });
    }
  }

  /** Stop showing the game (closes its streams). */
  detach() {
    if (!this.game) return;
    this.game.removeEventListener('change', this._onChange);
    this.game.removeEventListener('error', this._onError);
    this.game.removeEventListener('status', this._onStatus);
    this.game.stop();
    this.game = null;
    $('overlay-winner').hidden = true;
  }

  /** Re-apply texts (language switch) and colours (theme switch). */
  refreshStyle() {
    this._buildToolbar();
    this.board.refreshColors();
    this.invalidate();
  }

  invalidate() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  /** Debug/test hook: what is on screen. */
  snapshot() {
    const g = this.game;
    if (!g || !g.latest) return null;
    const v = g.displayView();
    return {
      gameId: g.gameId,
      phase: g.phase,
      turn: g.latest.turn,
      generation: g.latest.generation,
      seq: g.latest.seq,
      winner: g.latest.winner,
      result: g.latest.result,
      board: v.board,
      width: v.width,
      height: v.height,
      acting: g.actingPid(),
      handover: this.handover,
      players: g.latest.max_players || g.pids.length,
      online: !!g.online,
      me: g.online ? g.me : null,
      pattern: this.pattern,
      rotation: this.rotation,
      tap: this.tap,
      stable: !!g.latest.stable,
      speed: g.latest.speed || 1,
      pending: g.overlay.size > 0 || !!g.inflight || g.queue.length > 0,
    };
  }

  render() {
    const g = this.game;
    if (!g || !g.latest) return;
    const v = g.latest;
    const phase = g.phase;
    const acting = g.actingPid();
    const drawing = (phase === 'placement' || phase === 'redraw') && acting > 0;
    const seats = v.max_players || (v.players || []).length || g.pids.length;
    const name = (pid) => t(`player.${pid}`);

    Object.assign(this.root.dataset, {
      phase,
      turn: String(v.turn || 0),
      generation: String(v.generation || 0),
      acting: String(acting),
      handover: String(this.handover),
    });

    this.root.querySelector('header.hud').classList.toggle('four', seats > 2);
    for (const pid of [1, 2, 3, 4]) {
      const p = g.player(pid) || {};
      const el = $(`hud-p${pid}`);
      el.hidden = pid > Math.max(2, seats);
      const turnOf = phase === 'placement' ? v.turn : acting;
      el.classList.toggle('acting', pid === turnOf && !this.handover);
      el.classList.toggle('out', !!p.out);
      el.classList.toggle('me', !!g.online && pid === g.me);
      $(`name-${pid}`).textContent = name(pid)
        + (g.online && pid === g.me ? ` (${t('online.you')})` : '')
        + (phase === 'redraw' && p.ready ? ' ✓' : '')
        + (p.proposed_finish && phase !== 'finished' ? ' ⚑' : '');
      // While the device is handed over, the next player learns nothing of the last one's.
      const masked = this.handover;
      const cells = masked ? null : g.cellsOf(pid);
      $(`cells-${pid}`).textContent = cells === null ? '?' : String(cells);
      const budget = masked ? null : g.budgetLeft(pid);
      $(`budget-${pid}`).textContent = budget === null ? '?' : String(budget);
      $(`budget-wrap-${pid}`).classList.toggle('empty', budget === 0);
    }
    const who = phase === 'placement' ? v.turn || 1 : acting || (g.online ? g.me : 1);
    const from = this.handover ? acting : 1;
    const next = g.pids[g.pids.indexOf(from) + 1] || 2;
    $('hud-phase').textContent = this.handover
      ? t('phase.handover', { name: name(next) })
      : t(`phase.${phase}`, { name: name(who) });
    this._renderOnline(g, v, seats, name);
    $('hud-generation').textContent = String(v.generation || 0);
    $('hud-stable').hidden = !v.stable;

    $('toolbar').style.visibility = drawing && !this.handover ? 'visible' : 'hidden';
    for (const b of $('toolbar').querySelectorAll('button[data-tool]')) {
      b.classList.toggle('active', b.dataset.tool === this.tool && !this.pattern);
    }

    const busy = g.busy || this.handoverBusy;
    $('panel-placement').hidden = phase !== 'placement' || this.handover || !drawing;
    $('panel-redraw').hidden = phase !== 'redraw';
    $('panel-running').hidden = phase !== 'running' && phase !== 'paused';
    $('btn-finish').hidden = !['running', 'paused', 'redraw'].includes(phase);
    for (const id of ['btn-done', 'btn-reset', 'btn-reset-redraw', 'btn-ready', 'btn-pause', 'btn-finish']) {
      $(id).disabled = busy;
    }
    $('btn-pause').textContent = t(phase === 'paused' ? 'action.resume' : 'action.pause');
    $('btn-pause').dataset.state = phase;
    for (const b of this.root.querySelectorAll('button.speed')) {
      b.classList.toggle('active', Number(b.dataset.speed) === (v.speed || 1));
      b.disabled = busy;
    }
    for (const pid of [1, 2, 3, 4]) {
      const b = $(`btn-redraw-${pid}`);
      b.classList.toggle('active', acting === pid);
      b.hidden = !!g.online || pid > seats;
      b.disabled = busy || g.isOut(pid); // an out colour cannot draw any more
    }
    $('btn-reset-redraw').hidden = !acting;
    $('btn-ready').hidden = !!g.online && !acting;

    $('overlay-handover').hidden = !this.handover;
    $('handover-title').textContent = t('handover.title.n', { name: name(next) });
    $('handover-text').textContent = t('handover.text.n', { name: name(next) });
    $('handover-accept').textContent = t('handover.accept.n', { name: name(next) });
    $('handover-back').textContent = t('handover.back.n', { name: name(from) });
    $('handover-accept').disabled = this.handoverBusy;
    $('handover-back').disabled = this.handoverBusy;

    const { cells, width, height } = g.displayCells();
    this.board.setBoard(cells, width, height);
    this.board.setOverlay(g.overlay);
    this.board.setZone(drawing ? g.zoneOf(acting) : null);
    this.board.setInteractive(drawing && !this.handover && !busy, acting);
    const pat = this._syncStamp();
    this.board.setTapMode(this.tap);
    // ↻ keeps its place in the toolbar (never display: none): choosing or clearing a
    // pattern must not re-wrap the toolbar and move the board under the pointer.
    const rot = $('toolbar').querySelector('[data-testid="btn-rotate"]');
    if (rot) {
      rot.style.visibility = pat ? 'visible' : 'hidden';
      rot.disabled = !pat;
    }

    if (phase === 'finished') this._showWinner();
  }

  /** Online: share link while seats are open, whose turn it is, finish proposals. */
  _renderOnline(g, v, seats, name) {
    const share = $('online-share');
    const status = $('online-status');
    if (!g.online) {
      share.hidden = true;
      status.hidden = true;
      return;
    }
    const phase = g.phase;
    share.hidden = phase !== 'waiting';
    const link = shareLink(g.gameId);
    if ($('online-link').value !== link) $('online-link').value = link;
    const me = g.player(g.me) || {};
    let text = '';
    if (phase === 'waiting') {
      text = t('online.waitingPlayers', { n: (v.players || []).length, max: seats });
    } else if (phase === 'placement') {
      text = v.turn === g.me ? t('online.yourTurn') : t('online.waitTurn', { name: name(v.turn) });
    } else if (phase === 'redraw') {
      text = me.ready || g.readyInRound.has(g.me) ? t('online.readyWait') : t('online.redrawYou');
    }
    if (phase !== 'finished' && phase !== 'waiting') {
      const proposer = (v.players || []).find((p) => p.proposed_finish && p.id !== g.me && !p.out);
      if (me.proposed_finish) text = t('online.finishWait');
      else if (proposer) text = t('online.finishProposed', { name: name(proposer.id) });
    }
    status.textContent = text;
    status.hidden = !text;
  }

  /** Stamp the selected pattern with its top-left at (x, y). */
  _stamp(x, y) {
    const g = this.game;
    const pat = this.pattern && this.patterns && this.patterns.patterns.get(this.pattern);
    if (!g || !pat) return;
    const { cells } = rotatePattern(pat.cells, this.rotation);
    const r = g.stamp(pat.id, x, y, this.rotation, cells);
    if (r === 'budget') toast(t('stamp.budget'), 'info', 2000);
  }

  /** Give the board the selected (rotated) stamp now; returns the pattern or null.
   * Called at once on every change, not only at the next frame: a click right after
   * choosing a pattern must stamp it, not draw with the previous tool. */
  _syncStamp() {
    const pat = this.pattern && this.patterns && this.patterns.patterns.get(this.pattern);
    this.board.setStamp(pat ? { ...rotatePattern(pat.cells, this.rotation), key: `${pat.id}/${this.rotation}` } : null);
    return pat || null;
  }

  _rotate(delta) {
    if (!this.pattern) return;
    this.rotation = (((this.rotation + delta) % 4) + 4) % 4;
    this._syncStamp();
    this.invalidate();
  }

  _selectPattern(id) {
    this.pattern = id && this.patterns && this.patterns.patterns.has(id) ? id : null;
    this.rotation = 0;
    const sel = $('toolbar').querySelector('select[data-testid="pattern"]');
    if (sel) sel.value = this.pattern || '';
    this._syncStamp();
    this.invalidate();
  }

  _showWinner() {
    const g = this.game;
    const v = g.latest;
    const box = $('overlay-winner');
    if (!box.hidden) return;
    saveGame(null); // a finished game is not resumable
    const name = (pid) => t(`player.${pid}`);
    $('winner-text').textContent = v.result === 'draw' || !v.winner
      ? t('winner.draw')
      : t('winner.wins', { name: name(v.winner) });
    $('winner-text').dataset.winner = String(v.winner || 0);
    const ul = $('winner-scores');
    ul.replaceChildren(...(v.players || []).map((p) => {
      const li = document.createElement('li');
      li.textContent = t('winner.score', { name: name(p.id), cells: p.cells ?? 0 });
      return li;
    }));
    box.hidden = false;
  }

  _buildToolbar() {
    const bar = $('toolbar');
    bar.replaceChildren();
    for (const [id, tool] of Object.entries(TOOLS)) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.tool = id;
      b.dataset.testid = `tool-${id}`;
      b.textContent = `${tool.icon} ${t(tool.label)}`;
      b.classList.toggle('active', id === this.tool);
      b.addEventListener('click', () => {
        this.tool = id;
        this.board.setTool(id);
        this.app.savePrefs({ tool: id });
        this._selectPattern(null);
      });
      bar.append(b);
    }
    if (this.patterns) {
      const sel = document.createElement('select');
      sel.dataset.testid = 'pattern';
      sel.title = t('tool.pattern');
      const none = document.createElement('option');
      none.value = '';
      none.textContent = `${t('tool.pattern')}: ${t('tool.pattern.none')}`;
      sel.append(none);
      for (const cat of CATEGORIES) {
        const ids = this.patterns.categories[cat] || [];
        if (!ids.length) continue;
        const group = document.createElement('optgroup');
        group.label = t(`cat.${cat}`);
        group.dataset.category = cat;
        for (const id of ids) {
          const o = document.createElement('option');
          o.value = id;
          o.textContent = patternName(this.patterns.patterns.get(id));
          group.append(o);
        }
        sel.append(group);
      }
      sel.value = this.pattern || '';
      sel.addEventListener('change', () => {
        this._selectPattern(sel.value);
        sel.blur();
      });
      bar.append(sel);
      const rot = document.createElement('button');
      rot.type = 'button';
      rot.dataset.testid = 'btn-rotate';
      rot.className = 'icon';
      rot.textContent = '↻';
      rot.title = t('tool.rotate');
      rot.style.visibility = this.pattern ? 'visible' : 'hidden';
      rot.disabled = !this.pattern;
      rot.addEventListener('click', () => this._rotate(1));
      bar.append(rot);
    } else {
      // Until GET /patterns answers: a disabled menu and ↻ of the same size, so the
      // toolbar does not re-wrap (and move the board) when the catalogue arrives.
      const sel = document.createElement('select');
      sel.disabled = true;
      const none = document.createElement('option');
      none.textContent = `${t('tool.pattern')}: ${t('tool.pattern.none')}`;
      sel.append(none);
      const rot = document.createElement('button');
      rot.type = 'button';
      rot.className = 'icon';
      rot.textContent = '↻';
      rot.disabled = true;
      rot.style.visibility = 'hidden';
      bar.append(sel, rot);
    }
    const tap = document.createElement('button');
    tap.type = 'button';
    tap.dataset.testid = 'btn-tap';
    tap.textContent = `👆 ${t('tool.tap')}`;
    tap.title = t('tool.tap.title');
    tap.classList.toggle('active', this.tap);
    tap.setAttribute('aria-pressed', String(this.tap));
    tap.addEventListener('click', () => {
      this.tap = !this.tap;
      tap.classList.toggle('active', this.tap);
      tap.setAttribute('aria-pressed', String(this.tap));
      this.invalidate();
    });
    bar.append(tap);
    const coords = document.createElement('span');
    coords.className = 'coords';
    coords.dataset.testid = 'coords';
    coords.title = t('hud.coords');
    bar.append(coords);
    this._showCoords(this.board.hover);
    const hint = document.createElement('span');
    hint.className = 'hint rmb'; // hidden on touch screens (css: pointer: coarse / hover: none)
    hint.textContent = t('tool.rmb');
    bar.append(hint);
  }

  /** The hovered cell's coordinates in the toolbar (campaign hints give coordinates). */
  _showCoords(cell) {
    const el = $('toolbar').querySelector('[data-testid="coords"]');
    if (el) el.textContent = cell ? `(${cell[0]}, ${cell[1]})` : '';
  }

  _bind() {
    $('btn-menu').addEventListener('click', () => this.app.toMenu());
    $('btn-reset').addEventListener('click', () => this.game && this.game.resetTurn());
    $('btn-reset-redraw').addEventListener('click', () => this.game && this.game.resetTurn());
    $('btn-done').addEventListener('click', () => this._done());
    $('handover-back').addEventListener('click', () => this._setHandover(false));
    $('handover-accept').addEventListener('click', () => this._acceptHandover());
    $('btn-pause').addEventListener('click', () => this._togglePause());
    for (const b of this.root.querySelectorAll('button.speed')) {
      b.addEventListener('click', () => this.game && this.game.speed(Number(b.dataset.speed)));
    }
    for (const pid of [1, 2, 3, 4]) {
      $(`btn-redraw-${pid}`).addEventListener('click', () => this.game && this.game.setRedrawPid(pid));
    }
    $('online-copy').addEventListener('click', () => this._copyLink());
    $('btn-ready').addEventListener('click', () => this._ready());
    $('btn-finish').addEventListener('click', async () => {
      if (this.game && await confirmDialog(t('confirm.finish')) && this.game) await this.game.finishAll();
    });
    $('winner-menu').addEventListener('click', () => this.app.toMenu({ finished: true }));
    $('winner-rematch').addEventListener('click', () => {
      if (this.game) this.app.rematch(this.game.config, this.game.online ? 'online' : 'hotseat');
    });
    document.addEventListener('keydown', (e) => {
      if (e.key !== ' ' || this.root.hidden || !this.game || modalOpen()) return;
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      const phase = this.game.phase;
      if (phase !== 'running' && phase !== 'paused') return;
      e.preventDefault();
      if (e.target instanceof HTMLButtonElement) e.target.blur(); // no second toggle by the button
      this._togglePause();
    });
  }

  /**
   * Redraw "Ready". Hot-seat: it ends the round for every seat, so a round nobody drew
   * in (the game then ends by score) is confirmed first.
   */
  async _ready() {
    const g = this.game;
    if (!g || g.busy || g.phase !== 'redraw') return;
    if (!g.online && !g.drewThisRound()) {
      if (!(await confirmDialog(t('confirm.emptyRound')))) return;
      if (this.game !== g || g.phase !== 'redraw') return;
    }
    await g.readyAll();
  }

  _togglePause() {
    const g = this.game;
    if (!g || g.busy) return;
    if (g.phase === 'running') g.pause();
    else if (g.phase === 'paused') g.resume();
  }

  async _done() {
    const g = this.game;
    if (!g || g.phase !== 'placement' || g.busy) return;
    const pid = g.actingPid();
    if (!pid) return;
    await g.drain();
    const last = g.pids[g.pids.length - 1];
    if (!g.online && pid !== last) {
      this._setHandover(true);
    } else {
      await g.endTurn(pid);
    }
  }

  _setHandover(on) {
    this.handover = on;
    // The seat that handed over (a reload restores the hand-over screen for it).
    patchGame({ handover: on && this.game ? this.game.actingPid() : false });
    this.invalidate();
  }

  async _copyLink() {
    const input = $('online-link');
    let ok = false;
    try {
      await navigator.clipboard.writeText(input.value);
      ok = true;
    } catch {
      input.select();
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
    }
    input.select();
    if (ok) toast(t('online.copied'), 'info', 1500);
  }

  async _acceptHandover() {
    const g = this.game;
    if (!g || this.handoverBusy) return;
    const before = g.actingPid();
    this.handoverBusy = true;
    this.invalidate();
    try {
      // The board stays covered until the next player's own (blind) view is in.
      if (g.phase === 'placement') await g.endTurn(before);
    } finally {
      this.handoverBusy = false;
      if (g.phase !== 'placement' || g.actingPid() !== before) this._setHandover(false);
      else this.invalidate();
    }
  }
}
