// CellWar's combat log: what one seat saw happen, from its fog-filtered event log
// (GET /game/{id}/events with the seat's token, read from the last seq it has): its own
// actions in full (with what they did, as this browser sent them), another player's
// action only where the seat could see its start or target cell ("attacked your
// infantry at (3, 4)" when one of the seat's units stood there), turns, departures and
// the end. Nothing else is shown: the server leaves out what the seat could not see.

import { gamePath, request } from '../http.js';
import { t, tNodes } from '../i18n.js';
import { arrow, cwAction } from '../replay/events.js';

const SHOWN = 80;
const cell = (xy) => (xy ? `(${xy[0]}, ${xy[1]})` : '');

export class CombatLog {
  /**
   * @param {HTMLOListElement} list
   * @param {{nameOf: (pid: number) => string}} opts
   */
  constructor(list, { nameOf }) {
    this.list = list;
    this.nameOf = nameOf;
    this.snapsBy = new Map(); // seat → [{seq, units: Map("x,y" → own unit), all: units seen}] per view
    this.reset(null, null);
  }

  /** Start over for seat `pid` of game `gameId` (null: show nothing). */
  reset(gameId, pid) {
    if (gameId !== this.gameId) this.snapsBy = new Map();
    this.gameId = gameId;
    this.pid = pid;
    this.events = [];
    this.lastSeq = 0;
    this.own = new Map(); // seq → what this browser's action did {kind, type, from, to, target}
    this.loading = null;
    this.again = false;
    this.list.replaceChildren();
  }

  /** Remember what an action sent from here did (`seq` as the server answered). */
  rememberOwn(seq, entry) {
    if (Number.isFinite(seq)) this.own.set(seq, entry);
  }

  /** Keep a seat's own units of its view (to tell an attack on them later); every seat
   * played from this browser is observed, shown or not. */
  observe(pid, view) {
    if (!view || view.you !== pid || !Array.isArray(view.units)) return;
    if (!this.snapsBy.has(pid)) this.snapsBy.set(pid, []);
    const snaps = this.snapsBy.get(pid);
    const seq = view.seq ?? 0;
    const last = snaps[snaps.length - 1];
    if (last && last.seq >= seq) return;
    const units = new Map();
    for (const u of view.units) if (u.owner === pid) units.set(`${u.x},${u.y}`, u);
    snaps.push({ seq, units, all: view.units });
    if (snaps.length > 400) snaps.splice(0, snaps.length - 400);
  }

  /** Read the events after the last one held (one request at a time). */
  refresh(token) {
    if (!this.gameId || !this.pid) return Promise.resolve();
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    const gameId = this.gameId;
    const pid = this.pid;
    this.loading = request('GET', `${gamePath(gameId)}/events?from_seq=${this.lastSeq + 1}`, { token })
      .then((res) => {
        if (gameId !== this.gameId || pid !== this.pid) return;
        const fresh = (res.events || []).filter((e) => e.seq > this.lastSeq);
        if (!fresh.length) return;
        this.events.push(...fresh);
        this.lastSeq = fresh[fresh.length - 1].seq;
        this.render();
      })
      .catch(() => {})
      .finally(() => {
        this.loading = null;
        if (this.again) {
          this.again = false;
          this.refresh(token);
        }
      });
    return this.loading;
  }

  /** The seat's view (a snapshot of its units) just before event `seq`, if observed. */
  _snapBefore(seq) {
    const snaps = this.snapsBy.get(this.pid) || [];
    for (let i = snaps.length - 1; i >= 0; i--) {
      if (snaps[i].seq < seq) return snaps[i];
    }
    return null;
  }

  /** The seat's unit at `xy` just before event `seq`, if it had one there. */
  _mineBefore(seq, xy) {
    const snap = this._snapBefore(seq);
    return snap ? snap.units.get(`${xy[0]},${xy[1]}`) || null : null;
  }

  /** One event as {nodes, cls} (null: not shown). */
  entry(e) {
    const p = e.payload || {};
    const name = (pid) => this.nameOf(pid);
    const type = (u) => t(`cw.type.${u}`);
    switch (e.type) {
      case 'PlayerJoined':
        return { nodes: tNodes('ev.joined', { name: p.name ?? name(p.player_id) }) };
      case 'TurnEnded':
        return e.actor ? { nodes: tNodes('ev.turnEnded', { name: name(e.actor) }), cls: 'turn' } : null;
      case 'TurnTimedOut':
        return e.actor ? { nodes: tNodes('ev.timedOut', { name: name(e.actor) }), cls: 'turn' } : null;
      case 'PlayerRemoved': {
        const key = { disconnected: 'ev.removed.disconnected', left: 'ev.removed.left' }[p.reason] || 'ev.removed';
        return { nodes: tNodes(key, { name: name(p.player_id) }), cls: 'hit' };
      }
      case 'RolledBack':
        return { nodes: [document.createTextNode(t('cw.log.rolledBack'))], cls: 'turn' };
      case 'GameFinished':
        return { nodes: p.winner ? tNodes('ev.winner', { name: name(p.winner) }) : [document.createTextNode(t('winner.draw'))] };
      case 'ActionApplied': {
        const a = p.action || {};
        if (e.actor === this.pid) {
          const own = this.own.get(e.seq);
          if (own) {
            return {
              nodes: [document.createTextNode(t(`cw.log.own.${own.kind}`, {
                type: type(own.type), from: cell(own.from), to: cell(own.to), target: own.target ? type(own.target) : t('cw.log.enemy'),
              }))],
              cls: own.kind === 'attack' ? 'hit mine' : 'mine',
            };
          }
          // Not sent from here (another tab, a reload): what it did, from the seat's view
          // before it (js/replay/events.js cwAction), else its arrow.
          const snap = this._snapBefore(e.seq);
          const act = snap ? cwAction(snap.all, a) : null;
          if (act) {
            return {
              nodes: [document.createTextNode(t(`cw.log.own.${act.kind}`, {
                type: type(act.unit.type), from: cell(act.from), to: cell(act.to), target: act.target ? type(act.target.type) : t('cw.log.enemy'),
              }))],
              cls: act.kind === 'attack' ? 'hit mine' : 'mine',
            };
          }
          return { nodes: [document.createTextNode(t('cw.log.ownUnit', { id: a.unit_id, dir: arrow(a.dx, a.dy) }))], cls: 'mine' };
        }
        if (p.to) {
          const mine = this._mineBefore(e.seq, p.to);
          if (mine) return { nodes: tNodes('cw.log.attacked', { name: name(e.actor), type: type(mine.type), at: cell(p.to) }), cls: 'hit' };
        }
        const where = p.from && p.to ? `${cell(p.from)} → ${cell(p.to)}` : cell(p.from || p.to);
        return { nodes: tNodes('cw.log.seen', { name: name(e.actor), where }) };
      }
      default:
        return null;
    }
  }

  render() {
    const items = [];
    for (let i = this.events.length - 1; i >= 0 && items.length < SHOWN; i--) {
      const e = this.events[i];
      const en = this.entry(e);
      if (!en) continue;
      const li = document.createElement('li');
      li.dataset.seq = String(e.seq);
      li.dataset.type = e.type;
      if (en.cls) li.className = en.cls;
      li.append(...en.nodes);
      items.push(li);
    }
    this.list.replaceChildren(...items);
  }
}
