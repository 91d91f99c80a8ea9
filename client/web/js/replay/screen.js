// Replay viewer: the event log of a game (GET /game/{id}/events) and the board as it was
// at any event (GET /game/{id}/replay?seq=n, cached): timeline, step back/forward,
// play/pause at 1×/4×/16× events per second, the event list in the player's language
// with the current event highlighted (click to jump), and for Life and campaign games
// the statistics chart (cells per colour over generations: sampled replays of the log,
// then every view shown). Once a game is finished every placement is public, so a
// placement seq shows the cells placed so far. Life and campaign views are drawn by
// BoardView, CellWar views by CellWarBoard (js/replay/draw.js). "Fork from here" makes a
// new game in the state shown (POST /game/{id}/fork), takes every seat of it and opens it
// hot-seat (Life and CellWar).

import { BoardView } from '../board.js';
import { t, tNodes } from '../i18n.js';
import { gamePath, request } from '../http.js';
import { CellWarBoard } from '../cellwar/render.js';
import { drawView } from './draw.js';
import { errorText, flash } from '../modes-ui.js';
import { backfill } from '../stats/backfill.js';
import { CellChart } from '../stats/chart.js';
import { CellSeries } from '../stats/series.js';
import { cwAction, eventDetail, eventTypeName, namesFromLog } from './events.js';

const $ = (id) => document.getElementById(id);
const PREFETCH = 6;
// A view refused for now (429 RATE_LIMITED, 503 BUSY: scrubbing fast asks for many events
// at once, docs/security.md) is asked again after the server's Retry-After, while it is
// still the event wanted: at most this many times, and not past this long a wait.
const REFUSED_TRIES = 5;
const REFUSED_MAX_WAIT_S = 10;

export class ReplayScreen {
  /**
   * @param {{show: (name: string) => void, toStart: () => void,
   *          playFork?: (kind: string, save: object) => void}} modes
   */
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
    this.config = {}; // the game's config (its first event)
    this.forking = false;
    this.life = new BoardView($('replay-board-life'));
    this.cw = new CellWarBoard($('replay-board-cw'));
    this.names = new Map(); // player id → name (the log's PlayerJoined)
    this.series = new CellSeries({ name: 'replay' });
    this.chart = new CellChart($('chart-replay'), this.series, { name: (pid) => this._chartName(pid) });
    this._bind();
  }

  /** A player's name as the log tells it (else the colour's name). */
  nameOf(pid) {
    if (this.kind === 'campaign') return pid === 1 ? t('camp.you') : t('camp.enemyName');
    return this.names.get(pid) || t(`player.${pid}`);
  }

  _chartName(pid) {
    return this.nameOf(pid);
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
    this.config = {};
    this.names = new Map();
    this.series.reset();
    $('replay-body').hidden = true;
    $('replay-info').textContent = '';
    $('replay-board-life').hidden = true;
    $('replay-board-cw').hidden = true;
  }

  /** The message line: a text, DOM nodes, or nothing (hidden). */
  _message(text) {
    const el = $('replay-message');
    if (Array.isArray(text)) el.replaceChildren(...text);
    else el.textContent = text || '';
    el.hidden = !text || (Array.isArray(text) && !text.length);
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
      this._message(err.status === 404 || err.code === 'GAME_NOT_FOUND' ? tNodes('replay.notFound', { name: id }) : errorText(err));
      return;
    }
    if (my !== this.token) return;
    if (!events.length) {
      this._message(tNodes('replay.notFound', { name: id }));
      return;
    }
    this.gameId = id;
    this.events = events;
    const created = events.find((e) => e.type === 'GameCreated' || e.type === 'GameForked');
    this.kind = (created && created.payload && created.payload.kind) || '';
    this.config = (created && created.payload && created.payload.config) || {};
    this.names = namesFromLog(events);
    this.series.reset(id);
    this.chart.rebuild();
    $('chart-replay').hidden = this.kind === 'cellwar';
    this._message('');
    $('replay-body').hidden = false;
    $('replay-info').replaceChildren(...tNodes('replay.info', { kind: t(`kind.${this.kind}`), name: id }));
    const tl = $('replay-timeline');
    tl.min = String(events[0].seq);
    tl.max = String(events[events.length - 1].seq);
    $('replay-total').textContent = tl.max;
    this._buildList();
    if (this.kind !== 'cellwar') {
      backfill(this.series, id, { events, alive: () => this.gameId === id && this.token === my }).catch(() => {});
    }
    await this.goTo(events[events.length - 1].seq);
  }

  _buildList() {
    const ol = $('replay-events');
    ol.replaceChildren(...this.events.map((e) => {
      const li = document.createElement('li');
      li.dataset.seq = String(e.seq);
      li.dataset.testid = `replay-event-${e.seq}`;
      li.tabIndex = 0;
      li.dataset.type = e.type;
      const b = document.createElement('b');
      b.textContent = `#${e.seq} `;
      const ty = document.createElement('span');
      ty.className = 'ev-type';
      ty.textContent = eventTypeName(e.type);
      li.append(b, ty);
      if (e.actor && e.type !== 'PlayerJoined') {
        const who = document.createElement('bdi');
        who.translate = false;
        who.textContent = this.nameOf(e.actor);
        li.append(' · ', who);
      }
      const sm = document.createElement('small');
      sm.className = 'ev-detail';
      li.append(sm);
      return li;
    }));
    this.events.forEach((_, i) => this._label(i));
  }

  /** Fill in what event i did: a CellWar action says move, attack, fortify... once the
   * view just before it is cached (js/replay/events.js cwAction), else its arrow. */
  _label(i) {
    const li = $('replay-events').children[i];
    const sm = li && li.querySelector('.ev-detail');
    if (!sm) return;
    const before = this.kind === 'cellwar' && i > 0 ? this.cache.get(this.events[i - 1].seq) || null : null;
    const detail = eventDetail(this.events[i], (pid) => this.nameOf(pid), before);
    sm.replaceChildren(...(detail.length ? [' ', ...detail] : []));
    li.dataset.action = before ? (cwAction(before.units, (this.events[i].payload || {}).action) || {}).kind || '' : '';
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
      if (id === this.gameId) {
        this.cache.set(seq, res.view);
        const i = this._index(seq);
        if (this.kind === 'cellwar' && i >= 0 && i + 1 < this.events.length) this._label(i + 1);
      }
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
    for (let tries = 1; ; tries++) {
      try {
        view = await this.fetchView(seq);
        break;
      } catch (err) {
        if (this.seq !== seq) return; // moved on meanwhile
        const wait = err.retryAfterS;
        const refused = (err.status === 429 || err.status === 503) && wait != null;
        if (refused && tries < REFUSED_TRIES && wait <= REFUSED_MAX_WAIT_S) {
          await new Promise((resolve) => setTimeout(resolve, wait * 1000));
          if (this.seq !== seq) return;
          continue;
        }
        flash(errorText(err));
        this._stop();
        return;
      }
    }
    if (this.seq !== seq) return; // moved on meanwhile
    const at = this._index(seq);
    if (this.kind === 'cellwar' && at > 0) this.fetchView(this.events[at - 1].seq).catch(() => {}); // its words
    this.series.add(view, seq);
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
    const el = $('replay-stats');
    drawView(view, {
      life: this.life,
      cw: this.cw,
      lifeCanvas: $('replay-board-life'),
      cwCanvas: $('replay-board-cw'),
      statsEl: el,
      nameOf: (pid) => this.nameOf(pid),
    });
    el.dataset.seq = String(this.seq);
    $('screen-replay').dataset.shownSeq = String(this.seq);
    this._forkButton();
  }

  /** "Fork from here": Life and CellWar, at a seq whose game is not over yet. */
  _forkButton() {
    const view = this.shown && this.shown.view;
    const btn = $('replay-fork');
    btn.hidden = !this.modes.playFork || !['life', 'cellwar'].includes(this.kind);
    btn.disabled = !view || view.phase === 'finished' || this.forking;
  }

  /**
   * Fork the game at the shown seq, take every seat (the n-th join takes over the n-th
   * seat still in the game, under that player's name), open it hot-seat.
   */
  async forkHere() {
    const view = this.shown && this.shown.view;
    if (!view || this.forking || !this.modes.playFork) return;
    this._stop();
    this.forking = true;
    this._forkButton();
    try {
      const { game_id: forkId } = await request('POST', `${gamePath(this.gameId)}/fork`, { body: { seq: this.shown.seq } });
      const players = Number(this.config.players) || (view.players || []).length;
      const joined = new Map((view.players || []).map((p) => [p.id, p]));
      const seats = [];
      for (let pid = 1; pid <= players; pid++) if (!(joined.get(pid) || {}).out) seats.push(pid);
      const tokens = {};
      for (const pid of seats) {
        const seat = await request('POST', `${gamePath(forkId)}/join`, { body: { name: this.nameOf(pid) } });
        tokens[seat.player_id] = seat.player_token;
      }
      this.leave();
      this.modes.playFork(this.kind, { gameId: forkId, tokens, config: { ...this.config } });
    } catch (err) {
      flash(errorText(err));
    } finally {
      this.forking = false;
      this._forkButton();
    }
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
    this.chart.rebuild();
    if (this.events.length) {
      this._buildList();
      $('replay-info').replaceChildren(...tNodes('replay.info', { kind: t(`kind.${this.kind}`), name: this.gameId }));
      this.goTo(this.seq);
    }
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
      forkable: !$('replay-fork').hidden && !$('replay-fork').disabled,
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
    $('replay-fork').addEventListener('click', () => this.forkHere());
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
