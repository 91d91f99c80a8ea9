// Quick match and leaderboard (docs/playing.md "Quick match"), shown only where the server
// has them: the gateway's OpenAPI document (/openapi.json) must list /matchmaking/queues
// and that must answer 200 — probing the endpoint itself on every page would log a 404
// wherever the matchmaker is not deployed. Checked once per tab (sessionStorage).
//
// Quick match: a ticket (POST /matchmaking/tickets {kind, players, name}, with the
// campaign profile's token as X-Profile-Token when there is one: the rated identity),
// the waiting screen (elapsed time, the queue's statistics from GET /matchmaking/queues,
// the ticket's status polled every second), Cancel (DELETE), and the matched game opens
// by itself (Life as an online game, CellWar as an online CellWar game). The ticket is
// kept in localStorage, so a reload goes on waiting.
//
// Leaderboard: GET /leaderboard?kind=&players= → the top 100 {name, rating, games}.
//
// The answers' shapes beyond docs/api/index.md "Matchmaking" are read tolerantly (a list or
// {queues: [...]}, a few names per field), since the matchmaker is written alongside this
// screen.

import { t } from '../i18n.js';
import { BOT_POLICIES, addBot } from '../bots.js';
import { ApiError, request } from '../http.js';
import { errorText, flash } from '../modes-ui.js';
import { formatLeft } from '../timer.js';

const $ = (id) => document.getElementById(id);
const STORE = 'cellwar.mm.v1';

/** The first present field of an object among `names`. */
function pick(obj, ...names) {
  for (const n of names) if (obj && obj[n] !== undefined && obj[n] !== null) return obj[n];
  return undefined;
}

/**
 * The statistics of queue (kind, players) out of GET /matchmaking/queues.
 * @returns {?{waiting: number, inGames: number, matches: number, median: number, p90: number}}
 */
export function queueStats(data, kind, players) {
  let list = Array.isArray(data) ? data : pick(data, 'queues', 'items') || [];
  if (!Array.isArray(list) && typeof list === 'object') {
    list = Object.entries(list).map(([k, v]) => ({ key: k, ...v }));
  }
  const q = list.find((x) => {
    const key = pick(x, 'queue', 'key', 'name');
    if (pick(x, 'kind') === kind && Number(pick(x, 'players')) === players) return true;
    return typeof key === 'string' && key.replace(/[^a-z0-9]+/gi, ':') === `${kind}:${players}`;
  });
  if (!q) return null;
  return {
    waiting: pick(q, 'waiting', 'tickets_waiting', 'searching'),
    inGames: pick(q, 'in_games', 'players_in_games', 'playing'),
    matches: pick(q, 'matches_last_minute', 'matches_1m', 'matches_per_minute'),
    median: pick(q, 'median_wait_s', 'wait_median_s', 'median_wait'),
    p90: pick(q, 'p90_wait_s', 'wait_p90_s', 'p90_wait'),
  };
}

/** The rows of GET /leaderboard (a list or {entries|players|leaderboard: [...]}). */
export function leaderboardRows(data) {
  const list = Array.isArray(data) ? data : pick(data, 'entries', 'players', 'leaderboard', 'items') || [];
  return list.map((r) => ({
    name: pick(r, 'name', 'profile_name') ?? '',
    rating: Number(pick(r, 'rating', 'ordinal', 'score')),
    games: pick(r, 'games', 'games_played') ?? '',
  }));
}

function loadTicket() {
  try {
    const d = JSON.parse(localStorage.getItem(STORE) || 'null');
    return d && typeof d.ticketId === 'string' && typeof d.token === 'string' ? d : null;
  } catch {
    return null;
  }
}

function saveTicket(d) {
  try {
    if (d) localStorage.setItem(STORE, JSON.stringify(d));
    else localStorage.removeItem(STORE);
  } catch { /* storage disabled */ }
}

export class MatchmakingScreen {
  /**
   * @param {{show: (name: string) => void, toStart: () => void,
   *          playLife: (save: object) => void, playCellWar: (save: object) => void,
   *          profileToken: () => ?string}} modes
   */
  constructor(modes) {
    this.modes = modes;
    this.available = null; // Promise<boolean>
    this.poll = null;
    this.clock = null;
    this._bind();
  }

  /** Does this server have matchmaking? (checked once; the start buttons follow). */
  detect() {
    if (!this.available) {
      this.available = (async () => {
        // Once per tab (a reload does not ask again).
        const known = sessionStorage.getItem('cellwar.mm.detected');
        if (known === '1' || known === '0') return known === '1';
        const remember = (ok) => {
          try { sessionStorage.setItem('cellwar.mm.detected', ok ? '1' : '0'); } catch { /* disabled */ }
          return ok;
        };
        try {
          const res = await fetch('/openapi.json', { headers: { Accept: 'application/json' } });
          if (!res.ok) return remember(false);
          const doc = await res.json();
          if (!doc || !doc.paths || !doc.paths['/matchmaking/queues']) return remember(false);
          await request('GET', '/matchmaking/queues');
          return remember(true);
        } catch {
          return false; // perhaps a cut request: asked again on the next page
        }
      })();
    }
    return this.available.then((ok) => {
      $('btn-quickmatch').hidden = !ok;
      $('btn-leaderboard').hidden = !ok;
      return ok;
    });
  }

  // ----- quick match -----

  open() {
    this.modes.show('quickmatch');
    const saved = loadTicket();
    if (saved) {
      this._waiting(saved);
      return;
    }
    this._form();
  }

  /** A ticket left waiting by a reload: go on waiting (true when there is one). */
  resume() {
    const saved = loadTicket();
    if (!saved) return false;
    this.modes.show('quickmatch');
    this._waiting(saved);
    return true;
  }

  _form() {
    this._stop();
    $('qm-form').hidden = false;
    $('qm-wait').hidden = true;
    $('qm-queue').replaceChildren();
    this._playersFor($('qm-kind').value);
    if (!$('qm-name').value) $('qm-name').value = t('player.1');
  }

  /** Life: 2 or 4 players; CellWar: 2, 3 or 4 (the browser's setup offers up to 4). */
  _playersFor(kind) {
    const sel = $('qm-players');
    const keep = sel.value;
    const counts = kind === 'cellwar' ? [2, 3, 4] : [2, 4];
    sel.replaceChildren(...counts.map((n) => {
      const o = document.createElement('option');
      o.value = String(n);
      o.textContent = String(n);
      return o;
    }));
    sel.value = counts.includes(Number(keep)) ? keep : '2';
  }

  async _start() {
    const kind = $('qm-kind').value === 'cellwar' ? 'cellwar' : 'life';
    const players = Number($('qm-players').value) || 2;
    const name = $('qm-name').value.trim() || t('player.1');
    const headers = {};
    const profile = this.modes.profileToken();
    if (profile) headers['X-Profile-Token'] = profile;
    $('qm-start').disabled = true;
    try {
      const res = await request('POST', '/matchmaking/tickets', { body: { kind, players, name }, headers });
      const ticket = { ticketId: res.ticket_id, token: res.ticket_token, kind, players, since: Date.now() };
      saveTicket(ticket);
      this._waiting(ticket);
    } catch (err) {
      flash(t('qm.failed', { message: errorText(err) }), 'error', 6000);
    } finally {
      $('qm-start').disabled = false;
    }
  }

  /**
   * "Play the computer": an online game of the chosen kind and player count, this
   * browser in seat 1 and computer players in the others (POST /game/{id}/bots, the
   * strongest policy of the kind; docs/bot-seats.md), opened at once. Unrated.
   */
  async _playComputer() {
    const kind = $('qm-kind').value === 'cellwar' ? 'cellwar' : 'life';
    const players = Number($('qm-players').value) || 2;
    const name = $('qm-name').value.trim() || t('player.1');
    const config = kind === 'cellwar' ? { width: 8, height: 8, players } : { players };
    $('qm-computer').disabled = true;
    try {
      const { game_id: gameId } = await request('POST', '/game/create', { body: { kind, config } });
      const seat = await request('POST', `/game/${encodeURIComponent(gameId)}/join`, { body: { name } });
      for (let i = 1; i < players; i += 1) await addBot(gameId, seat.player_token, BOT_POLICIES[kind][0]);
      const tokens = { [seat.player_id]: seat.player_token };
      if (kind === 'cellwar') {
        this.modes.playCellWar({ gameId, tokens, config, mode: 'online', accepted: null });
      } else {
        this.modes.playLife({ mode: 'online', gameId, me: seat.player_id, tokens, config });
      }
    } catch (err) {
      flash(t('qm.failed', { message: errorText(err) }), 'error', 6000);
    } finally {
      $('qm-computer').disabled = false;
    }
  }

  _waiting(ticket) {
    this._stop();
    this.ticket = ticket;
    $('qm-form').hidden = true;
    $('qm-wait').hidden = false;
    $('qm-status').textContent = t('qm.searching');
    $('qm-wait').dataset.status = 'searching';
    const since = ticket.since || Date.now();
    const tick = () => { $('qm-elapsed').textContent = formatLeft(Date.now() - since); };
    tick();
    this.clock = setInterval(tick, 500);
    let n = 0;
    const step = async () => {
      if (this.ticket !== ticket) return;
      await this._checkTicket(ticket);
      if (n++ % 3 === 0) await this._queue(ticket);
      if (this.ticket === ticket) this.poll = setTimeout(step, 1000);
    };
    step();
  }

  async _checkTicket(ticket) {
    let res;
    try {
      res = await request('GET', `/matchmaking/tickets/${encodeURIComponent(ticket.ticketId)}`, { token: ticket.token });
    } catch (err) {
      if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
        saveTicket(null);
        this._end(t('qm.expired'));
      }
      return;
    }
    if (this.ticket !== ticket) return;
    $('qm-wait').dataset.status = res.status || '';
    if (Number.isFinite(res.wait_s)) ticket.since = Date.now() - res.wait_s * 1000;
    if (res.status === 'matched' && res.match) {
      saveTicket(null);
      this._stop();
      $('qm-status').textContent = t('qm.matched');
      const m = res.match;
      if (ticket.kind === 'cellwar') {
        this.modes.playCellWar({ gameId: m.game_id, tokens: { [m.player_id]: m.player_token }, config: {}, mode: 'online', accepted: null });
      } else {
        this.modes.playLife({ mode: 'online', gameId: m.game_id, me: m.player_id, tokens: { [m.player_id]: m.player_token }, config: {} });
      }
    } else if (res.status === 'expired' || res.status === 'cancelled') {
      saveTicket(null);
      this._end(t(res.status === 'expired' ? 'qm.expired' : 'qm.cancelled'));
    }
  }

  async _queue(ticket) {
    let data;
    try {
      data = await request('GET', '/matchmaking/queues');
    } catch {
      return;
    }
    if (this.ticket !== ticket) return;
    const q = queueStats(data, ticket.kind, ticket.players);
    const dl = $('qm-queue');
    if (!q) {
      dl.replaceChildren();
      return;
    }
    const secs = (v) => (Number.isFinite(Number(v)) ? t('qm.seconds', { n: Math.round(Number(v)) }) : '–');
    const num = (v) => (Number.isFinite(Number(v)) ? String(v) : '–');
    const rows = [
      ['qm.waiting', num(q.waiting)], ['qm.inGames', num(q.inGames)], ['qm.matches', num(q.matches)],
      ['qm.median', secs(q.median)], ['qm.p90', secs(q.p90)],
    ];
    dl.replaceChildren(...rows.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      dt.textContent = t(k);
      const dd = document.createElement('dd');
      dd.textContent = v;
      dd.dataset.key = k;
      return [dt, dd];
    }));
  }

  async _cancel() {
    const ticket = this.ticket;
    this._stop();
    saveTicket(null);
    if (ticket) {
      try {
        await request('DELETE', `/matchmaking/tickets/${encodeURIComponent(ticket.ticketId)}`, { token: ticket.token });
      } catch { /* gone already */ }
    }
    this._form();
  }

  _end(message) {
    this._stop();
    this._form();
    flash(message, 'info', 5000);
  }

  _stop() {
    clearTimeout(this.poll);
    clearInterval(this.clock);
    this.poll = null;
    this.clock = null;
    this.ticket = null;
  }

  /** Leaving the screen (the ticket keeps waiting on the server until cancelled). */
  leave() {
    this._stop();
  }

  // ----- leaderboard -----

  async openLeaderboard() {
    this.modes.show('leaderboard');
    await this._loadBoard();
  }

  async _loadBoard() {
    const kind = $('lb-kind').value === 'cellwar' ? 'cellwar' : 'life';
    const players = Number($('lb-players').value) || 2;
    const msg = $('lb-message');
    msg.hidden = true;
    let rows;
    try {
      rows = leaderboardRows(await request('GET', `/leaderboard?kind=${kind}&players=${players}`));
    } catch (err) {
      $('lb-rows').replaceChildren();
      msg.textContent = t('lb.failed', { message: errorText(err) });
      msg.hidden = false;
      return;
    }
    $('lb-rows').replaceChildren(...rows.map((r, i) => {
      const tr = document.createElement('tr');
      const cells = [String(i + 1), r.name, Number.isFinite(r.rating) ? r.rating.toFixed(1) : '–', String(r.games)];
      cells.forEach((text, k) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (k === 1) td.translate = false;
        else td.className = 'num';
        tr.append(td);
      });
      return tr;
    }));
    if (!rows.length) {
      msg.textContent = t('lb.empty');
      msg.hidden = false;
    }
  }

  _bind() {
    $('btn-quickmatch').addEventListener('click', () => this.open());
    $('btn-leaderboard').addEventListener('click', () => this.openLeaderboard());
    $('qm-kind').addEventListener('change', () => this._playersFor($('qm-kind').value));
    $('qm-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this._start();
    });
    $('qm-computer').addEventListener('click', () => this._playComputer());
    $('qm-back').addEventListener('click', () => this.modes.toStart());
    $('qm-cancel').addEventListener('click', () => this._cancel());
    $('lb-back').addEventListener('click', () => this.modes.toStart());
    $('lb-kind').addEventListener('change', () => {
      const sel = $('lb-players');
      const counts = $('lb-kind').value === 'cellwar' ? [2, 3, 4] : [2, 4];
      const keep = sel.value;
      sel.replaceChildren(...counts.map((n) => {
        const o = document.createElement('option');
        o.value = String(n);
        o.textContent = String(n);
        return o;
      }));
      sel.value = counts.includes(Number(keep)) ? keep : '2';
      this._loadBoard();
    });
    $('lb-players').addEventListener('change', () => this._loadBoard());
  }
}
