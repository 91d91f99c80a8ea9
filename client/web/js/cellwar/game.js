// A CellWar game played from this browser: one seat (online) or every seat (hot-seat),
// each with its own player token. Keeps the newest view of every seat (REST answers and
// one WebSocket stream per token). Events: 'change', 'error' (detail: ApiError).

import { api, ApiError, openStream } from '../api.js';
import { gamePath, request } from '../http.js';
import { keepView } from '../seats.js';

const STORE = 'cellwar.cw.v1';

/** The saved CellWar game: {gameId, tokens: {pid: token}, config, mode, accepted, suspended}. */
export function loadCellWar() {
  try {
    const g = JSON.parse(localStorage.getItem(STORE) || 'null');
    return g && typeof g.gameId === 'string' && g.tokens && typeof g.tokens === 'object' ? g : null;
  } catch {
    return null;
  }
}

export function saveCellWar(save) {
  try {
    if (save) localStorage.setItem(STORE, JSON.stringify(save));
    else localStorage.removeItem(STORE);
  } catch {
    // storage disabled: no resume
  }
}

export function patchCellWar(patch) {
  const g = loadCellWar();
  if (g) saveCellWar({ ...g, ...patch });
}

/** Create a CellWar game; hot-seat joins every seat, online only the first. */
export async function createCellWar(config, mode, names) {
  // Hot-seat: every seat is this one device, so a closed tab or a parked game ("Menu")
  // must not count as a player's lost connection; wait the longest the server allows.
  const body = mode === 'hotseat' ? { ...config, disconnect_timeout_s: 86400 } : config;
  const { game_id: gameId } = await api.createGame('cellwar', body);
  const tokens = {};
  const seats = mode === 'hotseat' ? config.players : 1;
  for (let i = 0; i < seats; i++) {
    const seat = await api.join(gameId, names[i] || `Player ${i + 1}`);
    tokens[seat.player_id] = seat.player_token;
  }
  return { gameId, tokens, config, mode, accepted: null };
}

/** Take the next free seat of a shared game (online). */
export async function joinCellWar(gameId, nameOf) {
  let joined = 1;
  try {
    const lobby = await request('GET', '/games');
    const g = (lobby.games || []).find((x) => x.game_id === gameId);
    if (g) joined = g.players_joined;
  } catch { /* the name is only cosmetic */ }
  const seat = await api.join(gameId, nameOf(joined + 1));
  return { gameId, tokens: { [seat.player_id]: seat.player_token }, config: {}, mode: 'online', accepted: null };
}

export class CellWarGame extends EventTarget {
  constructor(save) {
    super();
    this.gameId = save.gameId;
    this.mode = save.mode || 'hotseat';
    this.config = save.config || {};
    this.tokens = new Map(Object.entries(save.tokens).map(([k, v]) => [Number(k), v]));
    this.pids = [...this.tokens.keys()].sort((a, b) => a - b);
    this.views = new Map(); // pid → newest view (by that seat's own seq)
    this.latest = null; // the game's newest view (seats.js keepView)
    this.latestPid = 0;
    this.streams = [];
    this.stopped = false;
    this.busy = false;
  }

  async start() {
    const views = await Promise.all(this.pids.map((pid) => this.fetchView(pid)));
    this.pids.forEach((pid, i) => this.applyView(pid, views[i]));
    if (this.phase !== 'finished') {
      for (const pid of this.pids) {
        this.streams.push(openStream(this.gameId, this.tokens.get(pid), {
          onMessage: (msg) => this._onStream(pid, msg),
        }));
      }
    }
  }

  stop() {
    this.stopped = true;
    for (const s of this.streams) s.close();
    this.streams = [];
  }

  fetchView(pid) {
    return api.state(this.gameId, this.tokens.get(pid));
  }

  _onStream(pid, msg) {
    if (msg.type === 'error' && msg.error) {
      this._error(new ApiError(0, msg.error.code, msg.error.message));
      return;
    }
    if (msg.view) this.applyView(pid, msg.view, msg.seq);
    else if (msg.type === 'finished') this.refresh();
  }

  applyView(pid, view, seq) {
    if (keepView(this, pid, view, seq)) this.dispatchEvent(new Event('change'));
  }

  async refresh() {
    try {
      const views = await Promise.all(this.pids.map((pid) => this.fetchView(pid)));
      this.pids.forEach((pid, i) => this.applyView(pid, views[i]));
    } catch (err) {
      this._error(err);
    }
  }

  get phase() {
    return this.latest ? this.latest.phase : 'waiting';
  }

  get turn() {
    return this.latest ? this.latest.turn : 0;
  }

  /** Is it one of this browser's seats' turn? */
  ownsTurn() {
    return this.phase === 'playing' && this.tokens.has(this.turn);
  }

  view(pid) {
    return this.views.get(pid) || null;
  }

  player(pid) {
    const v = this.latest;
    return v && Array.isArray(v.players) ? v.players.find((p) => p.id === pid) : undefined;
  }

  /** A unit's legal moves → {actions}: over the seat's open stream, else by REST. */
  validActions(pid, unitId) {
    return api.validActions(this.gameId, this.tokens.get(pid), unitId);
  }

  /** Run a command with the busy flag; ApiErrors become 'error' events (returns null). */
  async _command(pid, fn) {
    this.busy = true;
    this.dispatchEvent(new Event('change'));
    try {
      const res = await fn();
      this.applyView(pid, res.view, res.seq);
      return res;
    } catch (err) {
      this._error(err);
      this.refresh();
      return null;
    } finally {
      this.busy = false;
      this.dispatchEvent(new Event('change'));
    }
  }

  act(pid, action) {
    return this._command(pid, () => api.action(this.gameId, this.tokens.get(pid), action));
  }

  /** Leave the game on purpose as seat `pid` (POST /game/{id}/leave): its units are
   * removed (during its own turn the turn is rolled back first). */
  leave(pid) {
    return this._command(pid, () => request('POST', `${gamePath(this.gameId)}/leave`, {
      token: this.tokens.get(pid), body: {},
    }));
  }

  async endTurn(pid) {
    const res = await this._command(pid, () => api.endTurn(this.gameId, this.tokens.get(pid)));
    if (res) await this.refresh();
    return res;
  }

  _error(err) {
    const e = err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err && err.message));
    this.dispatchEvent(new CustomEvent('error', { detail: e }));
  }
}
