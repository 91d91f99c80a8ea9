// A hot-seat game: every seat of one game played from this browser, each with its own
// player token. Keeps the newest view of every seat (REST answers and one WebSocket
// stream per token), decides whose view is shown and who draws, and turns strokes into
// batched `place` / `erase` actions (one request in flight, optimistic overlay).
//
// Events (EventTarget): 'change' (views or overlay changed), 'error' (detail: ApiError).

import { api, ApiError, openStream } from './api.js';
import { decodeBoard } from './rle.js';
import { keepView } from './seats.js';

/** Create a Life game and join every seat; returns the save record for storage. */
export async function createHotseatGame(config, names) {
  const { game_id: gameId } = await api.createGame('life', config);
  const tokens = {};
  for (let i = 0; i < (config.players || 2); i++) {
    const seat = await api.join(gameId, names[i] || `Player ${i + 1}`);
    tokens[seat.player_id] = seat.player_token;
  }
  return { mode: 'hotseat', gameId, tokens, config };
}

/** Half-open zone of a seat when a view does not carry one (docs/playing.md "Life"). */
function defaultZone(pid, w, h, players) {
  if (players === 4) {
    const hw = Math.floor(w / 2);
    const hh = Math.floor(h / 2);
    return [[0, 0, hw, hh], [hw, 0, w, hh], [0, hh, hw, h], [hw, hh, w, h]][pid - 1];
  }
  return pid === 1 ? [0, 0, Math.floor(w / 2), h] : [Math.floor(w / 2), 0, w, h];
}

export class HotseatGame extends EventTarget {
  /** @param {{gameId: string, tokens: Object<string, string>, config: object}} save */
  constructor(save) {
    super();
    this.gameId = save.gameId;
    this.tokens = new Map(Object.entries(save.tokens).map(([k, v]) => [Number(k), v]));
    this.pids = [...this.tokens.keys()].sort((a, b) => a - b);
    this.config = save.config || {};
    this.redrawPid = this.pids[0];
    this.views = new Map(); // pid → newest view (by that seat's own seq)
    this.latest = null; // the game's newest view (seats.js keepView)
    this.latestPid = 0; // the seat `latest` belongs to
    this.overlay = new Map(); // cell index → state shown until confirmed
    this.overlayOp = new Map(); // cell index → op that set it
    this.pendingPlace = new Map(); // pid → cells queued or in flight for `place`
    this.queue = [];
    this.inflight = null;
    this.idleWaiters = [];
    this.streams = [];
    this._decoded = { key: null, cells: new Uint8Array(0) };
    this.stopped = false;
    this.busy = false;
    this.readyInRound = new Set(); // seats that said ready in this redraw round
    this.roundBudgets = null; // pid → budget_left when this redraw round began
    this.roundSeqs = new Map(); // pid → that seat's seq at its first view of this redraw round
  }

  /** Load every seat's view and open the streams. Throws ApiError (e.g. 404 gone). */
  async start() {
    const views = await Promise.all(this.pids.map((pid) => api.state(this.gameId, this.tokens.get(pid))));
    this.pids.forEach((pid, i) => this.applyView(pid, views[i]));
    if (this.phase !== 'finished') this._openStreams();
  }

  /** Close the streams (the game itself goes on on the server). */
  stop() {
    this.stopped = true;
    for (const s of this.streams) s.close();
    this.streams = [];
  }

  _openStreams() {
    for (const pid of this.pids) {
      this.streams.push(openStream(this.gameId, this.tokens.get(pid), {
        onMessage: (msg) => this._onStream(pid, msg),
        onStatus: (status) => this.dispatchEvent(new CustomEvent('status', { detail: status })),
      }));
    }
  }

  _onStream(pid, msg) {
    if (msg.type === 'error' && msg.error) {
      this._error(new ApiError(0, msg.error.code, msg.error.message));
      return;
    }
    if (msg.view) this.applyView(pid, msg.view, msg.seq);
    if (msg.type === 'finished') {
      // Without a view: the seat's own last view, finished (its seq is the seat's own).
      const own = this.views.get(pid);
      if (!msg.view && own) {
        this.applyView(pid, {
          ...own,
          seq: msg.seq ?? own.seq,
          phase: 'finished',
          winner: msg.winner ?? own.winner,
          result: msg.result ?? own.result,
        });
      }
      this.refresh();
    }
  }

  /** Keep a view if it is not older than the one held for that seat (seats.js). */
  applyView(pid, view, seq) {
    if (!keepView(this, pid, view, seq)) return;
    if (this.latest.phase !== 'redraw') {
      this.readyInRound = new Set();
      this.roundBudgets = null;
      this.roundSeqs = new Map();
    } else {
      if (!this.roundBudgets) {
        this.roundBudgets = new Map((this.latest.players || []).map((p) => [p.id, p.budget_left]));
      }
      const own = this.views.get(pid);
      if (own.phase === 'redraw' && !this.roundSeqs.has(pid)) this.roundSeqs.set(pid, own.seq);
    }
    this._changed();
  }

  /** Re-read every seat's view over REST (after a turn change or a stream end). */
  async refresh() {
    try {
      const views = await Promise.all(this.pids.map((pid) => api.state(this.gameId, this.tokens.get(pid))));
      this.pids.forEach((pid, i) => this.applyView(pid, views[i]));
    } catch (err) {
      this._error(err);
    }
  }

  get phase() {
    return this.latest ? this.latest.phase : 'waiting';
  }

  /** The seat that draws now: the turn in placement, the chosen seat in redraw (the
   * first one still in the game while the chosen one is out), else 0. */
  actingPid() {
    if (this.phase === 'placement') return this.latest.turn || 0;
    if (this.phase === 'redraw') {
      if (!this.isOut(this.redrawPid)) return this.redrawPid;
      return this.pids.find((pid) => !this.isOut(pid)) ?? 0;
    }
    return 0;
  }

  /** Is a seat out of the game (no cells left, resigned)? Public in every view. */
  isOut(pid) {
    const players = (this.latest && this.latest.players) || [];
    const p = players.find((q) => q.id === pid);
    return !!(p && p.out);
  }

  /**
   * Redraw: did any seat place a cell in this round (budget spent since it began, or
   * strokes still queued)? A round nobody drew in ends the game when all are ready.
   */
  drewThisRound() {
    if (this.phase !== 'redraw') return false;
    for (const n of this.pendingPlace.values()) if (n > 0) return true;
    if (!this.roundBudgets) return true; // unknown: do not ask needlessly
    return (this.latest.players || []).some((p) => {
      const before = this.roundBudgets.get(p.id);
      return Number.isFinite(before) && Number.isFinite(p.budget_left) && p.budget_left < before;
    });
  }

  /** Whose view is on screen: the seat that draws, else the seat of the newest view
   * (seqs of different seats are not comparable: seats.js). */
  displayPid() {
    const acting = this.actingPid();
    if (acting && this.views.has(acting)) return acting;
    if (this.latestPid && this.views.has(this.latestPid)) return this.latestPid;
    return this.pids.find((pid) => this.views.has(pid)) ?? this.pids[0];
  }

  displayView() {
    return this.views.get(this.displayPid()) || this.latest;
  }

  /** The shown board, decoded (cached per RLE text). */
  displayCells() {
    const v = this.displayView();
    if (!v) return { cells: new Uint8Array(0), width: 0, height: 0 };
    const key = `${v.width}x${v.height}:${v.board}`;
    if (this._decoded.key !== key) {
      this._decoded = { key, cells: decodeBoard(v.board || '', v.width, v.height, this._decoded.cells) };
    }
    return { cells: this._decoded.cells, width: v.width, height: v.height };
  }

  /** A seat's zone [x0, y0, x1, y1). */
  zoneOf(pid) {
    const v = this.views.get(pid) || this.latest;
    if (!v) return null;
    if (Array.isArray(v.zone) && v.you === pid) return v.zone;
    const z = v.zones && (Array.isArray(v.zones) ? v.zones[pid - 1] : v.zones[String(pid)]);
    if (Array.isArray(z)) return z;
    return defaultZone(pid, v.width, v.height, this.pids.length);
  }

  /** A seat's entry in the shown view (so a blind seat never learns the other's counts). */
  player(pid) {
    const v = this.displayView();
    return v && Array.isArray(v.players) ? v.players.find((p) => p.id === pid) : undefined;
  }

  /** Budget left of a seat, minus what is queued; null when the shown view hides it. */
  budgetLeft(pid) {
    const p = this.player(pid);
    if (!p || !Number.isFinite(p.budget_left)) return null;
    return Math.max(0, p.budget_left - this._unconfirmedPlaced(pid));
  }

  /**
   * Cells the seat placed optimistically that the shown view does not hold yet. Counted
   * against the shown board (not per request): a stream view that already carries a
   * batch whose REST answer is still on its way must not charge that batch twice (the
   * campaign's small budget then dropped the next click).
   */
  _unconfirmedPlaced(pid) {
    if (!this.pendingPlace.get(pid) || !this.overlay.size) return 0;
    const { cells } = this.displayCells();
    let n = 0;
    for (const [i, st] of this.overlay) if (st === pid && cells[i] !== pid) n += 1;
    return n;
  }

  /** Live cells of a seat's colour (queued strokes included); null when hidden. */
  cellsOf(pid) {
    const p = this.player(pid);
    if (!p || !Number.isFinite(p.cells)) return null;
    let n = p.cells;
    if (this.overlay.size) {
      const { cells } = this.displayCells();
      for (const [i, st] of this.overlay) {
        if (cells[i] === pid && st !== pid) n -= 1;
        else if (cells[i] !== pid && st === pid) n += 1;
      }
    }
    return n;
  }

  /**
   * Apply a stroke of the acting seat: keep the cells it may change (own zone; `place`
   * on dead cells within the budget, `erase` on own cells), show them at once, queue the
   * request. Returns 'ok' (something changes), 'budget' (a cell to place was left out:
   * no budget left) or 'none' (nothing to change: out of the zone, live cells, not our
   * turn).
   */
  draw(cells, mode) {
    const pid = this.actingPid();
    if (!pid || this.busy) return 'none';
    const { cells: board, width } = this.displayCells();
    const [x0, y0, x1, y1] = this.zoneOf(pid);
    let budget = this.budgetLeft(pid) ?? 0;
    const accepted = [];
    let short = false;
    const op = this._opFor(pid, mode);
    for (const [x, y] of cells) {
      if (x < x0 || x >= x1 || y < y0 || y >= y1) continue;
      const i = y * width + x;
      const cur = this.overlay.has(i) ? this.overlay.get(i) : board[i];
      if (mode === 'place') {
        if (cur !== 0) continue;
        if (budget <= 0) {
          short = true;
          break;
        }
        budget -= 1;
        this.overlay.set(i, pid);
      } else {
        if (cur !== pid) continue;
        this.overlay.set(i, 0);
      }
      this.overlayOp.set(i, op);
      op.cells.push([x, y]);
      op.indexes.push(i);
      accepted.push(i);
    }
    if (!accepted.length) return short ? 'budget' : 'none';
    if (mode === 'place') this.pendingPlace.set(pid, (this.pendingPlace.get(pid) || 0) + accepted.length);
    if (!this.queue.includes(op)) this.queue.push(op);
    this._changed();
    this._flush();
    return short ? 'budget' : 'ok';
  }

  /**
   * Stamp a pattern as the acting seat: `cells` are the rotated pattern's cells relative
   * to (x, y). The cells it would place (own zone, dead) are shown at once; the server
   * skips the rest for free. Returns 'ok', 'empty' (nothing to place) or 'budget'.
   */
  stamp(pattern, x, y, rotation, cells) {
    const pid = this.actingPid();
    if (!pid || this.busy) return 'empty';
    const { cells: board, width, height } = this.displayCells();
    const [x0, y0, x1, y1] = this.zoneOf(pid);
    const news = [];
    for (const [dx, dy] of cells) {
      const cx = x + dx;
      const cy = y + dy;
      if (cx < x0 || cx >= x1 || cy < y0 || cy >= y1 || cx >= width || cy >= height) continue;
      const i = cy * width + cx;
      const cur = this.overlay.has(i) ? this.overlay.get(i) : board[i];
      if (cur === 0) news.push(i);
    }
    if (!news.length) return 'empty';
    if (news.length > (this.budgetLeft(pid) ?? 0)) return 'budget';
    const op = { pid, type: 'stamp', body: { type: 'stamp', pattern, x, y, rotation }, cells: [], indexes: news };
    for (const i of news) {
      this.overlay.set(i, pid);
      this.overlayOp.set(i, op);
    }
    op.placed = news.length;
    this.pendingPlace.set(pid, (this.pendingPlace.get(pid) || 0) + news.length);
    this.queue.push(op);
    this._changed();
    this._flush();
    return 'ok';
  }

  _opFor(pid, type) {
    const last = this.queue[this.queue.length - 1];
    if (last && last.pid === pid && last.type === type) return last;
    return { pid, type, cells: [], indexes: [] };
  }

  async _flush() {
    if (this.inflight || !this.queue.length) {
      if (!this.inflight && !this.queue.length) this._idle();
      return;
    }
    const op = this.queue.shift();
    this.inflight = op;
    try {
      const body = op.body || { type: op.type, cells: op.cells };
      const res = await api.action(this.gameId, this.tokens.get(op.pid), body);
      this.applyView(op.pid, res.view, res.seq);
    } catch (err) {
      this._error(err);
      this.refresh();
    } finally {
      for (const i of op.indexes) {
        if (this.overlayOp.get(i) === op) {
          this.overlay.delete(i);
          this.overlayOp.delete(i);
        }
      }
      if (op.type === 'place' || op.type === 'stamp') {
        const n = op.type === 'stamp' ? op.placed : op.cells.length;
        this.pendingPlace.set(op.pid, Math.max(0, (this.pendingPlace.get(op.pid) || 0) - n));
      }
      this.inflight = null;
      this._changed();
      this._flush();
    }
  }

  _idle() {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once every queued stroke has been answered. */
  drain() {
    if (!this.inflight && !this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Run one request with the busy flag set; errors become 'error' events (returns null). */
  async _command(fn) {
    this.busy = true;
    this._changed();
    try {
      return await fn();
    } catch (err) {
      this._error(err);
      this.refresh();
      return null;
    } finally {
      this.busy = false;
      this._changed();
    }
  }

  /** end_turn for a seat (after its strokes are sent); then re-read every seat. */
  endTurn(pid) {
    return this._command(async () => {
      await this.drain();
      const res = await api.endTurn(this.gameId, this.tokens.get(pid));
      this.applyView(pid, res.view, res.seq);
      await this.refresh();
      return res;
    });
  }

  /** reset_turn: the acting seat's cells of this turn go back to the budget. */
  resetTurn() {
    const pid = this.actingPid();
    if (!pid) return null;
    return this.action(pid, { type: 'reset_turn' });
  }

  /** Any action as a seat (after queued strokes). */
  action(pid, action) {
    return this._command(async () => {
      await this.drain();
      const res = await api.action(this.gameId, this.tokens.get(pid), action);
      this.applyView(pid, res.view, res.seq);
      return res;
    });
  }

  /** A seat still in the game (controls may come from any). */
  anyActivePid() {
    return this.pids.find((pid) => !(this.player(pid) || {}).out) ?? this.pids[0];
  }

  pause() { return this.action(this.anyActivePid(), { type: 'pause' }); }

  resume() { return this.action(this.anyActivePid(), { type: 'resume' }); }

  /** Set the speed (1, 2, 4, 8); the speed the game already has is not sent (the server
   * would refuse it: NO_CHANGE). */
  speed(multiplier) {
    if (this.latest && (this.latest.speed || 1) === multiplier) return Promise.resolve(null);
    return this.action(this.anyActivePid(), { type: 'speed', multiplier });
  }

  /** Choose the seat that draws in the redraw phase. */
  setRedrawPid(pid) {
    if (this.tokens.has(pid) && !this.isOut(pid)) {
      this.redrawPid = pid;
      this._changed();
    }
  }

  /** Redraw: every seat not yet ready says ready (end_turn); the simulation resumes. */
  readyAll() {
    return this._command(async () => {
      await this.drain();
      for (const pid of this.pids) {
        if (this.phase !== 'redraw') break;
        const p = this.player(pid) || {};
        if (p.out || p.ready || this.readyInRound.has(pid)) continue;
        const res = await api.endTurn(this.gameId, this.tokens.get(pid));
        this._markReady(pid, res);
        this.applyView(pid, res.view, res.seq);
      }
      await this.refresh();
    });
  }

  /**
   * Remember that a seat said ready in this redraw round, unless its end_turn ended the
   * round: the stream may already have brought the next round (which must not count it).
   * The answer's seq is compared with the same seat's first seq of this round (a seat's
   * own version: seats of one game count differently).
   */
  _markReady(pid, res) {
    const seq = (res && (res.seq ?? (res.view && res.view.seq))) ?? 0;
    const start = this.roundSeqs.get(pid);
    const held = this.views.get(pid);
    // No view of this seat in this round yet: stale if the seat saw the round end since.
    const fresh = start !== undefined ? seq >= start : !(held && held.seq > seq && held.phase !== 'redraw');
    if (res && res.view && res.view.phase === 'redraw' && this.phase === 'redraw' && fresh) {
      this.readyInRound.add(pid);
    }
  }

  /** Every remaining seat proposes to finish: the game ends by agreement. */
  finishAll() {
    return this._command(async () => {
      await this.drain();
      for (const pid of this.pids) {
        if (this.phase === 'finished') break;
        const p = this.player(pid) || {};
        if (p.out || p.proposed_finish) continue;
        const res = await api.action(this.gameId, this.tokens.get(pid), { type: 'propose_finish' });
        this.applyView(pid, res.view, res.seq);
      }
      await this.refresh();
    });
  }

  _error(err) {
    const e = err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err && err.message));
    this.dispatchEvent(new CustomEvent('error', { detail: e }));
  }

  _changed() {
    this.dispatchEvent(new Event('change'));
  }
}
