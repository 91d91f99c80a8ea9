// Replay viewer: the event log of a game (GET /game/{id}/events) and the board as it was
// at any event (GET /game/{id}/replay?seq=n, cached): timeline, step back/forward,
// play/pause at 1×/4×/16× events per second, the event list with the current event
// highlighted (click to jump). Life and campaign views are drawn by BoardView, CellWar
// views by CellWarBoard.

import { BoardView } from '../board.js';
import { t } from '../i18n.js';
import { gamePath, request } from '../http.js';
import { decodeBoard } from '../rle.js';
import { CellWarBoard } from '../cellwar/render.js';
import { errorText, flash } from '../modes-ui.js';

const $ = (id) => document.getElementById(id);
const PREFETCH = 6;

function summary(e) {
  const p = e.payload || {};
  if (e.type === 'ActionApplied' && p.action) {
    const a = p.action;
    if (a.type) return a.cells ? `${a.type} ×${a.cells.length}` : a.type + (a.pattern ? ` ${a.pattern}` : '');
    if ('unit_id' in a) return `unit ${a.unit_id} (${a.dx}, ${a.dy})`;
  }
  if (e.type === 'GenerationsTicked' && p.count) return `+${p.count}`;
  if (e.type === 'PlayerJoined' && p.name) return p.name;
  if (e.type === 'GameFinished') return p.result ? `${p.result}${p.winner ? ` → ${p.winner}` : ''}` : '';
  if (e.type === 'GameCreated') return p.kind || '';
  return '';
}

export class ReplayScreen {
  /** @param {{show: (name: string) => void, toStart: () => void}} modes */
  constructor(modes) {
    this.modes = modes;
    this.gameId = null;
    this.events = [];
    this.seq = 0;
    this.cache = new Map(); // seq → view
    this.pending = new Map(); // seq → Promise<view>
    this.shown = null; // {seq, view}
    this.playing = false;
    this.speed = 1;
    this.timer = null;
    this.token = 0; // bumps on every open (stale answers are dropped)
    this.life = new BoardView($('replay-board-life'));
    this.cw = new CellWarBoard($('replay-board-cw'));
    this._bind();
  }

  /** Show the screen, empty or opening a game id. */
  async open(id) {
    this.modes.show('replay');
    this._stop();
    if (!id) {
      this._reset();
      this._message(t('replay.empty'));
      $('replay-id').focus();
      return;
    }
    $('replay-id').value = id;
    await this.load(id);
  }

  _reset() {
    this.gameId = null;
    this.events = [];
    this.cache = new Map();
    this.pending = new Map();
    this.shown = null;
    this.seq = 0;
    $('replay-body').hidden = true;
    $('replay-info').textContent = '';
  }

  _message(text) {
    $('replay-message').textContent = text || '';
    $('replay-message').hidden = !text;
  }

  async load(id) {
    const my = ++this.token;
    this._reset();
    this._message(t('replay.loading'));
    let events;
    try {
      events = (await request('GET', `${gamePath(id)}/events?from_seq=0`)).events || [];
    } catch (err) {
      if (my !== this.token) return;
      this._message(err.status === 404 || err.code === 'GAME_NOT_FOUND' ? t('replay.notFound', { id }) : errorText(err));
      return;
    }
    if (my !== this.token) return;
    if (!events.length) {
      this._message(t('replay.notFound', { id }));
      return;
    }
    this.gameId = id;
    this.events = events;
    const created = events.find((e) => e.type === 'GameCreated');
    this.kind = (created && created.payload && created.payload.kind) || '';
    this._message('');
    $('replay-body').hidden = false;
    $('replay-info').textContent = t('replay.info', { kind: this.kind, id });
    const tl = $('replay-timeline');
    tl.min = String(events[0].seq);
    tl.max = String(events[events.length - 1].seq);
    $('replay-total').textContent = tl.max;
    this._buildList();
    await this.goTo(events[events.length - 1].seq);
  }

  _buildList() {
    const ol = $('replay-events');
    ol.replaceChildren(...this.events.map((e) => {
      const li = document.createElement('li');
      li.dataset.seq = String(e.seq);
      li.dataset.testid = `replay-event-${e.seq}`;
      li.tabIndex = 0;
      const s = summary(e);
      li.innerHTML = '';
      const b = document.createElement('b');
      b.textContent = `#${e.seq}`;
      const ty = document.createElement('span');
      ty.textContent = ` ${e.type}${e.actor ? ` · P${e.actor}` : ''}`;
      li.append(b, ty);
      if (s) {
        const sm = document.createElement('small');
        sm.textContent = ` ${s}`;
        li.append(sm);
      }
      return li;
    }));
  }

  _index(seq) {
    return this.events.findIndex((e) => e.seq === seq);
  }

  /** The view at seq (cached; one request per seq). */
  fetchView(seq) {
    if (this.cache.has(seq)) return Promise.resolve(this.cache.get(seq));
    if (this.pending.has(seq)) return this.pending.get(seq);
    const id = this.gameId;
    const p = request('GET', `${gamePath(id)}/replay?seq=${seq}`).then((res) => {
      if (id === this.gameId) this.cache.set(seq, res.view);
      return res.view;
    }).finally(() => this.pending.delete(seq));
    this.pending.set(seq, p);
    return p;
  }

  /** Move to event seq: timeline, list, then the board once its view is in. */
  async goTo(seq) {
    if (!this.events.length) return;
    const first = this.events[0].seq;
    const last = this.events[this.events.length - 1].seq;
    seq = Math.min(last, Math.max(first, Math.round(seq)));
    this.seq = seq;
    $('replay-timeline').value = String(seq);
    $('replay-seq').textContent = String(seq);
    for (const li of $('replay-events').children) {
      const on = Number(li.dataset.seq) === seq;
      li.classList.toggle('current', on);
      if (on) li.scrollIntoView({ block: 'nearest' });
    }
    this._controls();
    let view;
    try {
      view = await this.fetchView(seq);
    } catch (err) {
      flash(errorText(err));
      this._stop();
      return;
    }
    if (this.seq !== seq) return; // moved on meanwhile
    this.shown = { seq, view };
    this._draw(view);
    // Prefetch a few events ahead while playing.
    if (this.playing) {
      const i = this._index(seq);
      for (const e of this.events.slice(i + 1, i + 1 + PREFETCH)) this.fetchView(e.seq).catch(() => {});
    }
  }

  step(delta) {
    const i = this._index(this.seq);
    const j = Math.min(this.events.length - 1, Math.max(0, i + delta));
    return this.goTo(this.events[j].seq);
  }

  _draw(view) {
    const isCw = view.kind === 'cellwar';
    $('replay-board-cw').hidden = !isCw;
    $('replay-board-life').hidden = isCw;
    const stats = [];
    if (isCw) {
      this.cw.setView(view, {});
      this.cw.fit();
      if (view.phase === 'playing') stats.push(t('replay.round', { round: view.round, turn: view.turn }));
      for (const p of view.players || []) stats.push(`${p.name || t(`player.${p.id}`)}: ${t('cw.units', { n: p.units ?? '?' })}${p.out ? ` (${t('cw.out')})` : ''}`);
    } else {
      const cells = decodeBoard(view.board || '', view.width, view.height);
      this.life.setBoard(cells, view.width, view.height);
      this.life.setZone(null);
      this.life.setInteractive(false);
      this.life.fit();
      stats.push(t('replay.generation', { n: view.generation ?? 0 }));
      for (const p of view.players || []) stats.push(`${p.name || t(`player.${p.id}`)}: ${p.cells ?? '?'} ${t('hud.cells')}`);
    }
    stats.push(t('replay.phase', { phase: view.phase }));
    const el = $('replay-stats');
    el.textContent = stats.join(' · ');
    el.dataset.generation = String(view.generation ?? '');
    el.dataset.seq = String(this.seq);
    $('screen-replay').dataset.shownSeq = String(this.seq);
  }

  _controls() {
    const i = this._index(this.seq);
    $('replay-prev').disabled = i <= 0;
    $('replay-next').disabled = i >= this.events.length - 1;
    $('replay-play').textContent = this.playing ? '❚❚' : '▶';
    $('replay-play').title = t(this.playing ? 'replay.pause' : 'replay.play');
    $('replay-play').dataset.state = this.playing ? 'playing' : 'paused';
    for (const b of document.querySelectorAll('[data-rspeed]')) {
      b.classList.toggle('active', Number(b.dataset.rspeed) === this.speed);
    }
  }

  _play() {
    if (!this.events.length) return;
    if (this._index(this.seq) >= this.events.length - 1) this.goTo(this.events[0].seq);
    this.playing = true;
    this._schedule();
    this._controls();
  }

  _schedule() {
    clearTimeout(this.timer);
    if (!this.playing) return;
    this.timer = setTimeout(async () => {
      if (!this.playing) return;
      if (this._index(this.seq) >= this.events.length - 1) {
        this._stop();
        return;
      }
      await this.step(1);
      this._schedule();
    }, 1000 / this.speed);
  }

  _stop() {
    this.playing = false;
    clearTimeout(this.timer);
    if (this.events.length) this._controls();
  }

  refreshStyle() {
    this.life.refreshColors();
    this.cw.refreshColors();
    if (this.shown) this._draw(this.shown.view);
  }

  snapshot() {
    return {
      gameId: this.gameId,
      kind: this.kind,
      seq: this.seq,
      events: this.events.length,
      shownSeq: this.shown ? this.shown.seq : null,
      view: this.shown ? this.shown.view : null,
      playing: this.playing,
      speed: this.speed,
      cached: this.cache.size,
    };
  }

  leave() {
    this._stop();
    this.token++;
  }

  _bind() {
    $('replay-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const id = $('replay-id').value.trim();
      if (id) {
        this._stop();
        this.load(id);
      }
    });
    $('replay-menu').addEventListener('click', () => {
      this.leave();
      this.modes.toStart();
    });
    $('replay-prev').addEventListener('click', () => { this._stop(); this.step(-1); });
    $('replay-next').addEventListener('click', () => { this._stop(); this.step(1); });
    $('replay-play').addEventListener('click', () => (this.playing ? this._stop() : this._play()));
    for (const b of document.querySelectorAll('[data-rspeed]')) {
      b.addEventListener('click', () => {
        this.speed = Number(b.dataset.rspeed);
        this._controls();
        if (this.playing) this._schedule();
      });
    }
    const tl = $('replay-timeline');
    tl.addEventListener('input', () => { this._stop(); this.goTo(Number(tl.value)); });
    tl.addEventListener('change', () => this.goTo(Number(tl.value)));
    $('replay-events').addEventListener('click', (e) => {
      const li = e.target.closest('li[data-seq]');
      if (li) { this._stop(); this.goTo(Number(li.dataset.seq)); }
    });
    $('replay-events').addEventListener('keydown', (e) => {
      const li = e.target.closest('li[data-seq]');
      if (li && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); this._stop(); this.goTo(Number(li.dataset.seq)); }
    });
  }
}
