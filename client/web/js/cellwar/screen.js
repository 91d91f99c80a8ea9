// CellWar screens: settings (size up to 64×64, players, hot-seat or online) and the game:
// HUD (whose turn, round, units left, the turn timer, each player's unit count as far as
// the shown seat may know it), the board (zoom and pan), unit selection with
// highlighted legal targets, help for the cell under the pointer or the keyboard cursor
// (what a target would do), End turn, Leave (confirmed), hot-seat hand-over per turn,
// the legend, the combat log of what the shown seat saw, and the winner screen (who,
// why, "Watch replay").
//
// Keyboard on the focused board: arrow keys move a cursor, Enter / Space click the cell
// (select a unit, act on a target), Escape drops the selection, + / − zoom.

import { announce } from '../a11y.js';
import { renderAddBot } from '../bots.js';
import { gamePath, request } from '../http.js';
import { t, tn, tNodes } from '../i18n.js';
import { errorText, flash } from '../modes-ui.js';
import { cellwarEndReason } from '../result.js';
import { confirmDialog, errorKind } from '../screens/dialogs.js';
import { Countdown } from '../timer.js';
import { CellWarGame, createCellWar, joinCellWar, loadCellWar, patchCellWar, saveCellWar } from './game.js';
import { buildLegend } from './legend.js';
import { CombatLog } from './log.js';
import { CellWarBoard } from './render.js';

const $ = (id) => document.getElementById(id);
const PREFS = 'cellwar.cw.prefs.v1';
const MIN_SIDE = 8;
const MAX_SIDE = 64;

function loadSetup() {
  try {
    const p = JSON.parse(localStorage.getItem(PREFS) || '{}');
    return { width: 12, height: 12, players: 2, mode: 'hotseat', ...(p && typeof p === 'object' ? p : {}) };
  } catch {
    return { width: 12, height: 12, players: 2, mode: 'hotseat' };
  }
}

export class CellWarScreen {
  /** @param {{show: (name: string) => void, openReplay: (id: string) => void}} modes */
  constructor(modes) {
    this.modes = modes;
    this.game = null;
    this.selected = null; // {unitId, pid}
    this.targets = new Map();
    this.hint = '';
    this.frame = 0;
    this.cursor = null; // keyboard cursor [x, y]
    this.hover = null; // [x, y] under the pointer
    this.board = new CellWarBoard($('cw-board'), {
      onCell: (x, y) => this._click(x, y),
      onHover: (cell, cx, cy) => this._hover(cell, cx, cy),
      scroller: $('cw-scroll'),
    });
    this.log = new CombatLog($('cw-log'), { nameOf: (pid) => this.name(pid) });
    this.timer = new Countdown($('cw-timer'), (left) => t('timer.left', { left }));
    this.revealedTurn = '';
    this._onChange = () => {
      this._observe();
      this.invalidate();
    };
    this._onError = (e) => flash(errorText(e.detail), errorKind(e.detail));
    buildLegend($('cw-legend-list'), this.board);
    this._bind();
  }

  // ----- settings -----

  showSetup() {
    const p = loadSetup();
    $('cw-width').value = String(p.width);
    $('cw-height').value = String(p.height);
    $('cw-players').value = String(p.players);
    $('cw-mode').value = p.mode === 'online' ? 'online' : 'hotseat';
    $('cw-continue').hidden = !loadCellWar();
    this.modes.show('cw-setup');
  }

  async _startFromSetup() {
    const clamp = (v) => Math.min(MAX_SIDE, Math.max(MIN_SIDE, Math.floor(Number(v)) || 12));
    const config = {
      width: clamp($('cw-width').value),
      height: clamp($('cw-height').value),
      players: Math.min(4, Math.max(2, Number($('cw-players').value) || 2)),
    };
    const mode = $('cw-mode').value === 'online' ? 'online' : 'hotseat';
    try {
      localStorage.setItem(PREFS, JSON.stringify({ ...config, mode }));
    } catch { /* ignore */ }
    if (loadCellWar() && !(await confirmDialog(t('setup.confirmReplace')))) return;
    $('cw-setup-start').disabled = true;
    try {
      const names = [1, 2, 3, 4].map((i) => t(`player.${i}`));
      const save = await createCellWar(config, mode, names);
      saveCellWar(save);
      await this.play(save);
    } catch (err) {
      flash(errorText(err));
      this.modes.show('cw-setup');
    } finally {
      $('cw-setup-start').disabled = false;
    }
  }

  /** Open a shared link: take a free seat (or resume our own seat of that game). */
  async joinShared(gameId) {
    const saved = loadCellWar();
    if (saved && saved.gameId === gameId) return this.play(saved);
    try {
      const save = await joinCellWar(gameId, (n) => t(`player.${n}`));
      saveCellWar(save);
      await this.play(save);
    } catch (err) {
      this.modes.toStart();
      flash(err.code === 'GAME_FULL' ? t('cw.full') : t('cw.joinFailed', { message: err.message }), 'error', 6000);
    }
  }

  // ----- game -----

  async play(save) {
    this.detach();
    const g = new CellWarGame(save);
    this.accepted = save.accepted || null;
    try {
      await g.start();
    } catch (err) {
      g.stop();
      if ([401, 403, 404].includes(err.status)) saveCellWar(null);
      this.modes.toStart();
      flash(errorText(err));
      return;
    }
    this.game = g;
    g.addEventListener('change', this._onChange);
    g.addEventListener('error', this._onError);
    patchCellWar({ suspended: false });
    $('cw-winner').hidden = true;
    this.modes.show('cw');
    this.board.sizeKey = ''; // a new game: the zoom is chosen again
    // The legend is open beside the board, folded under it (a phone needs the height).
    $('cw-legend').open = matchMedia('(min-aspect-ratio: 5/4)').matches;
    this.board.fit();
    this._observe();
    this.invalidate();
  }

  resumeSaved() {
    const s = loadCellWar();
    if (s) this.play(s);
  }

  detach() {
    if (!this.game) return;
    this.game.removeEventListener('change', this._onChange);
    this.game.removeEventListener('error', this._onError);
    this.game.stop();
    this.game = null;
    this._clearSelection();
    this.log.reset(null, null);
    this.timer.stop();
    this.revealedTurn = '';
    $('cw-winner').hidden = true;
    $('cw-tip').hidden = true;
  }

  refreshStyle() {
    this.board.refreshColors();
    buildLegend($('cw-legend-list'), this.board);
    this.log.render();
    this.invalidate();
  }

  invalidate() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  /** The key of the current turn (a hand-over is accepted per turn). */
  _turnKey() {
    const v = this.game && this.game.latest;
    return v ? `${v.round}:${v.turn}` : '';
  }

  /** Hot-seat: the next player has not taken the device yet. */
  handoverPending() {
    const g = this.game;
    return !!g && g.mode === 'hotseat' && g.pids.length > 1 && g.ownsTurn() && this.accepted !== this._turnKey();
  }

  /** The seat whose view is on screen (null during a hand-over). */
  shownPid() {
    const g = this.game;
    if (!g) return null;
    if (g.mode !== 'hotseat' || g.pids.length === 1) return g.pids[0];
    if (g.phase === 'finished') return g.pids.includes(g.latest && g.latest.winner) ? g.latest.winner : g.pids[0];
    if (this.handoverPending()) return null;
    if (g.ownsTurn()) return g.turn;
    return null;
  }

  name(pid) {
    const p = this.game && this.game.player(pid);
    return (p && p.name) || t(`player.${pid}`);
  }

  /** The combat log follows the shown seat; every view feeds it. */
  _observe() {
    const g = this.game;
    if (!g || !g.latest) return;
    if (g.gameId !== this.log.gameId) this.log.reset(g.gameId, null);
    for (const seat of g.pids) this.log.observe(seat, g.view(seat));
    const pid = this.shownPid();
    if (pid !== this.log.pid) this.log.reset(g.gameId, pid);
    if (!pid) return;
    this.log.refresh(g.tokens.get(pid));
  }

  snapshot() {
    const g = this.game;
    if (!g || !g.latest) return null;
    const pid = this.shownPid();
    const v = pid ? g.view(pid) : null;
    return {
      gameId: g.gameId,
      mode: g.mode,
      phase: g.phase,
      turn: g.turn,
      round: g.latest.round,
      seq: g.latest.seq,
      winner: g.latest.winner,
      shownPid: pid,
      handover: this.handoverPending(),
      busy: g.busy,
      selected: this.selected ? this.selected.unitId : null,
      targets: [...this.targets.values()].map((a) => ({ ...a })),
      width: g.latest.width,
      height: g.latest.height,
      units: v ? v.units : [],
      visible: v ? v.visible : null,
      players: (v || g.latest).players,
      cursor: this.cursor,
      zoom: this.board.zoom,
      cellPx: this.board.cellPx,
    };
  }

  render() {
    const g = this.game;
    if (!g || !g.latest) return;
    const latest = g.latest;
    const pid = this.shownPid();
    const v = pid ? g.view(pid) || latest : null;
    const handover = this.handoverPending();
    const myTurn = !!pid && g.ownsTurn() && g.turn === pid;
    const root = $('screen-cw');
    Object.assign(root.dataset, { phase: g.phase, turn: String(g.turn), shown: String(pid || 0), handover: String(handover) });

    // HUD: players (unit counts as the shown seat may know them), whose turn, round.
    const counts = v || (g.phase === 'finished' ? latest : null);
    const ul = $('cw-players-list');
    ul.replaceChildren(...(latest.players || []).map((p) => {
      const li = document.createElement('li');
      li.className = `cw-player p${p.id}`;
      li.dataset.testid = `cw-player-${p.id}`;
      li.classList.toggle('acting', g.phase === 'playing' && p.id === g.turn);
      li.classList.toggle('out', !!p.out);
      // away only means something while an online game runs (hot-seat seats share a device)
      const away = !p.connected && g.phase !== 'finished' && g.mode !== 'hotseat';
      li.classList.toggle('disconnected', away);
      const sw = document.createElement('span');
      sw.className = `swatch m${p.id}`;
      sw.style.background = this.board.players[p.id] || '#888';
      sw.setAttribute('aria-hidden', 'true');
      const nm = document.createElement('bdi');
      nm.className = 'name';
      nm.translate = false;
      nm.textContent = p.name || t(`player.${p.id}`);
      const known = counts && (counts.players || []).find((q) => q.id === p.id);
      const n = known && Number.isFinite(known.units) ? known.units : null;
      const st = document.createElement('span');
      st.className = 'stat';
      st.dataset.testid = `cw-units-${p.id}`;
      st.dataset.units = n === null ? '' : String(n);
      st.textContent = n === null ? t('cw.unitsHidden') : tn('cw.unitsCount', n);
      st.title = n === null ? t('cw.unitsHidden.title') : '';
      li.append(sw, nm, st);
      const tags = [];
      if (g.mode === 'online' && g.tokens.has(p.id)) tags.push(t('cw.you'));
      if (p.out) tags.push(t('cw.out'));
      else if (away) tags.push(t('cw.disconnected'));
      if (tags.length) {
        const tg = document.createElement('small');
        tg.className = 'tag';
        tg.textContent = tags.join(', ');
        li.append(tg);
      }
      return li;
    }));
    let turnNodes;
    if (g.phase === 'waiting') {
      turnNodes = tNodes('cw.turn.waiting', { n: (latest.players || []).length, total: g.config.players || '?' });
    } else if (g.phase === 'finished') {
      turnNodes = tNodes('cw.turn.finished');
    } else if (myTurn) {
      turnNodes = tNodes('cw.turn.yours', { name: this.name(g.turn) });
    } else {
      turnNodes = tNodes('cw.turn.other', { name: this.name(g.turn) });
    }
    $('cw-turn').replaceChildren(...turnNodes);
    if (g.phase !== 'finished') announce($('cw-turn').textContent);
    $('cw-round').textContent = String(latest.round || 0);
    const own = v && v.units ? v.units.filter((u) => u.owner === pid && u.id !== null) : [];
    const left = myTurn ? own.filter((u) => !u.acted).length : 0;
    $('cw-left').textContent = pid ? String(left) : '–';
    this.timer.set(g.phase === 'playing' ? latest.turn_deadline ?? null : null);

    // Share link (online, while seats are open).
    const share = g.mode === 'online' && g.phase === 'waiting';
    $('cw-share').hidden = !share;
    if (share) $('cw-share-link').value = `${location.origin}${location.pathname}#cellwar=${encodeURIComponent(g.gameId)}`;
    // "Add a bot" per free seat (a waiting game has one at least; docs/bot-seats.md).
    const taken = (latest.players || []).length;
    renderAddBot($('cw-bots'), {
      kind: 'cellwar', gameId: g.gameId, token: g.tokens.get(g.pids[0]), taken,
      seats: share ? Math.max(Number(g.config.players) || 0, taken + 1) : 0,
    });

    // Hand-over.
    $('cw-handover').hidden = !handover;
    if (handover) {
      const name = this.name(g.turn);
      $('cw-handover-title').replaceChildren(...tNodes('cw.handover.title', { name }));
      $('cw-handover-text').replaceChildren(...tNodes('cw.handover.text', { name }));
      $('cw-handover-accept').replaceChildren(...tNodes('cw.handover.accept', { name }));
    }

    // Hint, Leave and End turn.
    let hint = '';
    if (myTurn) {
      if (this.hint) hint = this.hint;
      else if (this.selected) hint = t('cw.hint.target');
      else hint = left ? t('cw.hint.select') : t('cw.hint.done');
    }
    if (this.cursor && document.activeElement === $('cw-board')) hint = this._describe(this.cursor[0], this.cursor[1]) || hint;
    $('cw-hint').dataset.cursor = this.cursor ? this.cursor.join(',') : '';
    $('cw-hint').textContent = hint;
    $('cw-end-turn').hidden = g.phase !== 'playing';
    $('cw-end-turn').disabled = !myTurn || g.busy;
    const leaver = this._leaver();
    $('cw-leave').hidden = g.phase === 'finished' || !leaver;
    $('cw-leave').disabled = g.busy;

    if (!myTurn && this.selected) this._clearSelection();
    this.board.setView(v || latest, {
      selected: this.selected ? this.selected.unitId : null,
      targets: this.targets,
      interactive: myTurn && !g.busy,
      hidden: !v,
    });
    // A new turn of ours on a zoomed board: bring our units into view.
    const turnKey = `${this._turnKey()}:${pid}`;
    if (myTurn && own.length && this.revealedTurn !== turnKey) {
      this.revealedTurn = turnKey;
      requestAnimationFrame(() => this.board.reveal(own.filter((u) => !u.acted).map((u) => [u.x, u.y])));
    }

    if (g.phase === 'finished') this._showWinner();
  }

  /** The seat that "Leave" removes: online our seat; hot-seat the seat whose turn it is
   * (after the hand-over), so a player leaves for themself only. */
  _leaver() {
    const g = this.game;
    if (!g || g.phase === 'finished' || g.phase === 'waiting') return null;
    if (g.mode === 'online') {
      const me = g.pids[0];
      const p = g.player(me);
      return p && !p.out ? me : null;
    }
    const pid = this.shownPid();
    return pid && g.ownsTurn() && g.turn === pid ? pid : null;
  }

  async _leave() {
    const g = this.game;
    const pid = this._leaver();
    if (!g || !pid || g.busy) return;
    if (!(await confirmDialog(t('cw.leave.confirm', { name: this.name(pid) })))) return;
    if (this.game !== g) return;
    this._clearSelection();
    const res = await g.leave(pid);
    if (!res) return;
    if (g.mode === 'online') {
      saveCellWar(null);
      this.detach();
      this.modes.toStart();
      flash(t('cw.left.toast'), 'info', 3000);
    } else {
      await g.refresh();
      this.invalidate();
    }
  }

  async _showWinner() {
    const box = $('cw-winner');
    if (!box.hidden) return;
    saveCellWar(null);
    const g = this.game;
    const v = g.latest;
    $('cw-winner-text').replaceChildren(...(v.winner ? tNodes('cw.wins', { name: this.name(v.winner) }) : tNodes('winner.draw')));
    $('cw-winner-text').dataset.winner = String(v.winner || 0);
    $('cw-winner-rematch').hidden = g.mode !== 'hotseat';
    const why = $('cw-winner-reason');
    why.textContent = '';
    delete why.dataset.reason;
    box.hidden = false;
    announce($('cw-winner-text').textContent);
    try {
      const events = (await request('GET', `${gamePath(g.gameId)}/events?from_seq=0`)).events || [];
      if (this.game !== g) return;
      const reason = cellwarEndReason(events);
      why.dataset.reason = reason;
      why.textContent = t(`cw.reason.${reason}`);
    } catch { /* the reason is a courtesy */ }
  }

  _clearSelection() {
    this.selected = null;
    this.targets = new Map();
    this.hint = '';
  }

  /** What the cell (x, y) holds and what clicking it would do, for the shown seat. */
  _describe(x, y) {
    const g = this.game;
    const pid = this.shownPid();
    const v = pid && g ? g.view(pid) : null;
    if (!v) return '';
    const at = `(${x}, ${y})`;
    const target = this.targets.get(`${x},${y}`);
    const unit = (v.units || []).find((u) => u.x === x && u.y === y);
    const type = (u) => t(`cw.type.${u.type}`);
    if (target) {
      const what = unit && unit.owner !== pid ? t('cw.do.what', { type: type(unit), name: this.name(unit.owner) }) : '';
      return `${at} ${t(`cw.do.${target.kind}`, { what })}`;
    }
    if (!this.board.isVisible(x, y)) return `${at} ${t('cw.tip.fog')}`;
    if (!unit) return `${at} ${t('cw.tip.empty')}`;
    if (unit.owner === pid) {
      const state = unit.acted ? t('cw.tip.acted') : t('cw.tip.ready');
      const standing = unit.type === 'fortification' ? ` · ${t('cw.tip.standing', { n: unit.standing || 1 })}` : '';
      return `${at} ${t('cw.tip.own', { type: type(unit) })} · ${state}${standing}`;
    }
    return `${at} ${t('cw.tip.enemy', { type: type(unit), name: this.name(unit.owner) })}`;
  }

  /** The pointer over a cell: a tooltip with what it is and what a click would do. */
  _hover(cell, clientX, clientY) {
    const tip = $('cw-tip');
    this.hover = cell;
    const text = cell ? this._describe(cell[0], cell[1]) : '';
    if (!text) {
      tip.hidden = true;
      return;
    }
    tip.textContent = text;
    tip.hidden = false;
    const wrap = $('cw-wrap').getBoundingClientRect();
    const x = Math.min(clientX - wrap.left + 14, wrap.width - tip.offsetWidth - 4);
    const y = Math.min(clientY - wrap.top + 16, wrap.height - tip.offsetHeight - 4);
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }

  async _click(x, y) {
    const g = this.game;
    const pid = this.shownPid();
    if (!g || !pid || g.busy || !g.ownsTurn() || g.turn !== pid) return;
    const key = `${x},${y}`;
    const target = this.targets.get(key);
    const v = g.view(pid);
    if (target) {
      const { unit_id: unitId, dx, dy } = target;
      const unit = (v.units || []).find((u) => u.id === unitId);
      const victim = (v.units || []).find((u) => u.x === x && u.y === y && u.owner !== pid);
      this._clearSelection();
      this.invalidate();
      const res = await g.act(pid, { unit_id: unitId, dx, dy });
      if (res && unit) {
        this.log.rememberOwn(res.seq, {
          kind: target.kind, type: unit.type, from: [unit.x, unit.y], to: [x, y], target: victim ? victim.type : null,
        });
        this.log.render();
      }
      return;
    }
    const unit = v && (v.units || []).find((u) => u.x === x && u.y === y && u.owner === pid && u.id !== null);
    this._clearSelection();
    if (!unit || unit.acted || (this.selected && this.selected.unitId === unit.id)) {
      if (unit && unit.acted) this.hint = t('error.UNIT_ALREADY_ACTED');
      this.invalidate();
      return;
    }
    this.selected = { unitId: unit.id, pid };
    this.invalidate();
    try {
      const res = await g.validActions(pid, unit.id);
      if (!this.selected || this.selected.unitId !== unit.id) return;
      const targets = new Map();
      for (const a of res.actions || []) {
        if (a.unit_id !== unit.id) continue;
        targets.set(`${unit.x + a.dx},${unit.y + a.dy}`, a);
      }
      this.targets = targets;
      if (!targets.size) this.hint = unit.type === 'factory' && left(v, pid) > 0 ? t('cw.hint.factoryWait') : t('cw.hint.noMoves');
      else announce(t('cw.hint.targets', { n: targets.size }));
    } catch (err) {
      this._clearSelection();
      flash(errorText(err));
    }
    this.invalidate();

    function left(view, p) {
      return (view.units || []).filter((u) => u.owner === p && !u.acted && u.type !== 'factory').length;
    }
  }

  /** Keyboard on the focused board (module comment). */
  _key(e) {
    const g = this.game;
    const v = g && g.latest;
    if (!v || e.altKey || e.ctrlKey || e.metaKey) return;
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (!this.cursor) {
      this.cursor = this._startCursor();
      this.board.setCursor(this.cursor);
    }
    const [x, y] = this.cursor;
    if (moves[e.key]) {
      const [dx, dy] = moves[e.key];
      this.cursor = [Math.min(v.width - 1, Math.max(0, x + dx)), Math.min(v.height - 1, Math.max(0, y + dy))];
      this.board.setCursor(this.cursor);
    } else if (e.key === 'Enter' || e.key === ' ') {
      this._click(x, y);
    } else if (e.key === 'Escape') {
      this._clearSelection();
    } else if (e.key === '+' || e.key === '=') {
      this.board.zoomBy(1.25);
    } else if (e.key === '-') {
      this.board.zoomBy(0.8);
    } else {
      return;
    }
    e.preventDefault();
    const text = this._describe(this.cursor[0], this.cursor[1]);
    if (text) announce(text);
    this.invalidate();
  }

  /** The cursor's first cell: the first own unit that may act, else the middle. */
  _startCursor() {
    const g = this.game;
    const pid = this.shownPid();
    const v = pid ? g.view(pid) : null;
    const u = v && (v.units || []).find((q) => q.owner === pid && q.id !== null && !q.acted);
    return u ? [u.x, u.y] : [Math.floor(g.latest.width / 2), Math.floor(g.latest.height / 2)];
  }

  _acceptHandover() {
    this.accepted = this._turnKey();
    patchCellWar({ accepted: this.accepted });
    this._observe();
    this.invalidate();
  }

  async _endTurn() {
    const g = this.game;
    const pid = this.shownPid();
    if (!g || !pid || g.busy) return;
    this._clearSelection();
    await g.endTurn(pid);
    this.invalidate();
  }

  _bind() {
    $('cw-setup-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this._startFromSetup();
    });
    $('cw-setup-back').addEventListener('click', () => this.modes.toStart());
    $('cw-continue').addEventListener('click', () => this.resumeSaved());
    $('cw-handover-accept').addEventListener('click', () => this._acceptHandover());
    $('cw-end-turn').addEventListener('click', () => this._endTurn());
    $('cw-leave').addEventListener('click', () => this._leave());
    $('cw-zoom-in').addEventListener('click', () => this.board.zoomBy(1.5));
    $('cw-zoom-out').addEventListener('click', () => this.board.zoomBy(1 / 1.5));
    $('cw-zoom-fit').addEventListener('click', () => this.board.zoomFit());
    const canvas = $('cw-board');
    canvas.addEventListener('keydown', (e) => this._key(e));
    canvas.addEventListener('focus', () => {
      // The keyboard cursor only when the focus came from the keyboard (not a click).
      if (!canvas.matches(':focus-visible')) return;
      if (!this.cursor && this.game && this.game.latest) this.cursor = this._startCursor();
      this.board.setCursor(this.cursor);
      this.invalidate();
    });
    canvas.addEventListener('pointerdown', () => {
      this.cursor = null;
      this.board.setCursor(null);
    });
    canvas.addEventListener('blur', () => {
      this.board.invalidate();
      this.invalidate();
    });
    $('cw-menu').addEventListener('click', () => {
      patchCellWar({ suspended: true });
      this.detach();
      this.modes.toStart();
    });
    $('cw-share-copy').addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText($('cw-share-link').value);
        flash(t('cw.copied'), 'info', 1500);
      } catch {
        $('cw-share-link').select();
      }
    });
    $('cw-winner-menu').addEventListener('click', () => {
      this.detach();
      this.modes.toStart();
    });
    $('cw-winner-replay').addEventListener('click', () => {
      const id = this.game && this.game.gameId;
      this.detach();
      if (id) this.modes.openReplay(id);
    });
    $('cw-winner-rematch').addEventListener('click', async () => {
      const g = this.game;
      if (!g) return;
      const config = { ...g.config };
      this.detach();
      try {
        const names = [1, 2, 3, 4].map((i) => t(`player.${i}`));
        const save = await createCellWar(config, 'hotseat', names);
        saveCellWar(save);
        await this.play(save);
      } catch (err) {
        flash(errorText(err));
      }
    });
  }
}
