// The game screen of a Life game (hot-seat with 2 or 4 seats on this device, or online
// with one seat per browser): HUD (phase, generation, turn timer, players), the drawing
// toolbar (drawing-tools.js: tools, pattern stamps, rotation, tap mode; only in drawing
// phases), canvas board (fills what is free), phase actions, hand-over screen (shown
// before the drawing seat's end_turn, so "Back to player N" is possible), the online
// share link, the statistics chart (cells per colour over generations, live) and the
// winner screen (who, why the game ended, the scores and the chart).

import { announce } from '../a11y.js';
import { BoardView } from '../board.js';
import { renderAddBot } from '../bots.js';
import { DrawingTools } from '../drawing-tools.js';
import { gamePath, request } from '../http.js';
import { t, tn } from '../i18n.js';
import { shareLink } from '../online.js';
import { lifeEndReason } from '../result.js';
import { backfill } from '../stats/backfill.js';
import { CellChart } from '../stats/chart.js';
import { CellSeries } from '../stats/series.js';
import { Countdown } from '../timer.js';
import { TOOLS } from '../tools.js';
import { patchGame, saveGame } from '../storage.js';
import { apiErrorText, confirmDialog, errorKind, modalOpen, toast } from './dialogs.js';

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
    this.pauseWanted = false; // a space pressed while a request was in flight
    this.handover = false;
    this.handoverBusy = false;
    this.frame = 0;
    this.tools = new DrawingTools({
      bar: $('toolbar'),
      tool: app.prefs().tool in TOOLS ? app.prefs().tool : 'pencil',
      saveTool: (id) => app.savePrefs({ tool: id }),
      game: () => this.game,
      onChange: () => this.invalidate(),
      message: (text) => toast(text, 'info', 2500),
    });
    this.board = new BoardView($('board'), {
      onStroke: (cells, mode) => this.tools.draw(cells, mode),
      onStamp: (x, y) => this.tools.stamp(x, y),
      onRotate: (delta) => this.tools.rotate(delta),
      onHover: (cell) => this.tools.showCoords(cell),
    });
    this.tools.attach(this.board);
    this.series = new CellSeries({ name: 'game' });
    this.chart = new CellChart($('chart-game'), this.series);
    this.winnerChart = new CellChart($('chart-winner'), this.series);
    this.timer = new Countdown($('hud-timer'), (left) => t('timer.left', { left }));
    this.reasonToken = 0;
    this._bind();
    this._onChange = () => {
      if (this.game && this.game.latest) this.series.add(this.game.latest, undefined, this.game.latestPid);
      if (this.pauseWanted && this.game && !this.game.busy) { // a space pressed while busy
        this.pauseWanted = false;
        this._togglePause();
      }
      this.invalidate();
    };
    this._onError = (e) => toast(apiErrorText(e.detail), errorKind(e.detail));
    this._onStatus = (e) => {
      if (e.detail === 'reconnecting') toast(t('status.reconnecting'), 'info', 1500);
    };
  }

  // The toolbar's choices, as the tests and the snapshot know them.
  get pattern() { return this.tools.pattern; }

  get rotation() { return this.tools.rotation; }

  get tap() { return this.tools.tap; }

  /** Show a game (a started HotseatGame); `handover` restores a pending hand-over screen. */
  attach(game, { handover = false } = {}) {
    this.detach();
    this.game = game;
    this.pauseWanted = false;
    this.handover = handover;
    game.addEventListener('change', this._onChange);
    game.addEventListener('error', this._onError);
    game.addEventListener('status', this._onStatus);
    $('overlay-winner').hidden = true;
    this.series.reset(game.gameId);
    if (game.latest) this.series.add(game.latest, undefined, game.latestPid);
    // The generations before this page saw the game (a reload, "Continue game").
    if (game.latest && !['waiting', 'placement'].includes(game.phase) && (game.latest.generation || 0) > 0) {
      const token = game.tokens.get(game.pids[0]);
      backfill(this.series, game.gameId, { token, alive: () => this.game === game }).catch(() => {});
    }
    this.board.fit();
    this.invalidate();
    this.tools.loadCatalogue();
  }

  /** Stop showing the game (closes its streams). */
  detach() {
    if (!this.game) return;
    this.game.removeEventListener('change', this._onChange);
    this.game.removeEventListener('error', this._onError);
    this.game.removeEventListener('status', this._onStatus);
    this.game.stop();
    this.game = null;
    this.timer.stop();
    $('overlay-winner').hidden = true;
  }

  /** Re-apply texts (language switch) and colours (theme or palette switch). */
  refreshStyle() {
    this.tools.build();
    this.board.refreshColors();
    this.chart.rebuild();
    this.winnerChart.rebuild();
    if (this.game && !$('overlay-winner').hidden) {
      $('overlay-winner').hidden = true;
      this._showWinner();
    }
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
      $(`cells-label-${pid}`).textContent = tn('hud.cells', cells === null ? NaN : cells);
      const budget = masked ? null : g.budgetLeft(pid);
      $(`budget-${pid}`).textContent = budget === null ? '?' : String(budget);
      $(`budget-wrap-${pid}`).classList.toggle('empty', budget === 0);
    }
    const who = phase === 'placement' ? v.turn || 1 : acting || (g.online ? g.me : 1);
    const from = this.handover ? acting : 1;
    const next = g.pids[g.pids.indexOf(from) + 1] || 2;
    const phaseText = this.handover
      ? t('phase.handover', { name: name(next) })
      : t(`phase.${phase}`, { name: name(who) });
    $('hud-phase').textContent = phaseText;
    if (phase !== 'finished') announce(phaseText);
    this._renderOnline(g, v, seats, name);
    $('hud-generation').textContent = String(v.generation || 0);
    $('hud-stable').hidden = !v.stable;
    this.timer.set(phase === 'placement' || phase === 'redraw' ? v.turn_deadline ?? null : null);
    // The chart once there is something to count (after the blind placement).
    $('stats-game').hidden = phase === 'waiting' || phase === 'placement';

    this.tools.sync(drawing && !this.handover);

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

    if (phase === 'finished') this._showWinner();
  }

  /** Online: share link while seats are open, whose turn it is, finish proposals. */
  _renderOnline(g, v, seats, name) {
    const share = $('online-share');
    const status = $('online-status');
    if (!g.online) {
      share.hidden = true;
      status.hidden = true;
      $('online-bots').hidden = true;
      return;
    }
    const phase = g.phase;
    share.hidden = phase !== 'waiting';
    // "Add a bot" per free seat while the game waits for players (docs/bot-seats.md).
    const taken = (v.players || []).length;
    renderAddBot($('online-bots'), {
      kind: 'life', gameId: g.gameId, token: g.tokens.get(g.me), taken, seats: phase === 'waiting' ? seats : 0,
    });
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

  _showWinner() {
    const g = this.game;
    const v = g.latest;
    const box = $('overlay-winner');
    if (!box.hidden) return;
    saveGame(null); // a finished game is not resumable
    const name = (pid) => t(`player.${pid}`);
    const text = v.result === 'draw' || !v.winner ? t('winner.draw') : t('winner.wins', { name: name(v.winner) });
    $('winner-text').textContent = text;
    $('winner-text').dataset.winner = String(v.winner || 0);
    const ul = $('winner-scores');
    ul.replaceChildren(...(v.players || []).map((p) => {
      const li = document.createElement('li');
      li.textContent = tn('winner.score', p.cells ?? 0, { name: name(p.id) });
      return li;
    }));
    const why = $('winner-reason');
    why.textContent = '';
    delete why.dataset.reason;
    box.hidden = false;
    announce(text);
    this._explainEnd(g, v);
  }

  /** Why the game ended, from its log (public now); also the chart's past if this page
   * did not see the simulation. */
  async _explainEnd(g, v) {
    const my = ++this.reasonToken;
    let events = [];
    try {
      events = (await request('GET', `${gamePath(g.gameId)}/events?from_seq=0`)).events || [];
    } catch {
      events = [];
    }
    if (my !== this.reasonToken || this.game !== g) return;
    const reason = lifeEndReason(v, events);
    const why = $('winner-reason');
    why.dataset.reason = reason || 'unknown';
    why.textContent = reason ? t(`reason.${reason}`, { generations: v.max_generations ?? '' }) : '';
    if (reason) announce(`${$('winner-text').textContent} ${why.textContent}`);
    if (this.series.size <= 1 && (v.generation || 0) > 0) {
      backfill(this.series, g.gameId, { events, alive: () => this.game === g }).catch(() => {});
    }
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
    if (!g) return;
    // A request in flight (e.g. the refresh after the last "Done"): the press is kept
    // and served when it is answered, never dropped.
    this.pauseWanted = g.busy;
    if (g.busy) return;
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
