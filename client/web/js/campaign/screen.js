// Campaign: a profile (POST /profiles, token kept in localStorage), the level list
// (GET /campaign/levels), a level played with the Life board and every drawing tool of
// Life (HotseatGame with one seat + BoardView + DrawingTools: pencil, brush, erasers,
// stamps with rotation, tap mode, the keyboard; green cells are skipped by every tool),
// the statistics chart (red and green cells over generations), parking a level for
// "Continue", and the end screen (Next level / Levels / Restart / Watch replay, the
// chart). Its tool choice is stored under its own key, never in the preferences of
// ordinary games.

import { announce } from '../a11y.js';
import { BoardView } from '../board.js';
import { DrawingTools } from '../drawing-tools.js';
import { HotseatGame } from '../hotseat.js';
import { getLang, t, tn } from '../i18n.js';
import { gamePath, request } from '../http.js';
import { errorText, flash } from '../modes-ui.js';
import { confirmDialog, errorKind } from '../screens/dialogs.js';
import { backfill } from '../stats/backfill.js';
import { CellChart } from '../stats/chart.js';
import { CellSeries } from '../stats/series.js';

const $ = (id) => document.getElementById(id);
const STORE = 'cellwar.campaign.v1';

/** {profileId, profileToken, parked: {gameId, token, level, name, suspended}, tool} */
export function loadCampaign() {
  try {
    const d = JSON.parse(localStorage.getItem(STORE) || '{}');
    return d && typeof d === 'object' ? d : {};
  } catch {
    return {};
  }
}

function patchCampaign(patch) {
  const d = { ...loadCampaign(), ...patch };
  try {
    localStorage.setItem(STORE, JSON.stringify(d));
  } catch { /* storage disabled */ }
  return d;
}

const localName = (o) => (o && typeof o === 'object' ? o[getLang()] || o.en || '' : String(o || ''));

function bestText(best) {
  if (!best || typeof best !== 'object') return '';
  if (best.result === 'win') return tn('camp.bestWin', best.generation ?? NaN, { left: best.budget_left ?? '?' });
  return t('camp.bestLoss');
}

export class CampaignScreen {
  /** @param {{show: (name: string) => void, toStart: () => void, openReplay: (id: string) => void}} modes */
  constructor(modes) {
    this.modes = modes;
    this.levels = [];
    this.game = null;
    this.level = null; // level number on screen
    this.frame = 0;
    this.tools = new DrawingTools({
      bar: $('camp-toolbar'),
      prefix: 'camp-',
      tool: loadCampaign().tool,
      saveTool: (id) => patchCampaign({ tool: id }),
      game: () => this.game,
      onChange: () => this.invalidate(),
      message: (text) => flash(text, 'info', 2500),
    });
    this.board = new BoardView($('camp-board'), {
      onStroke: (cells, mode) => this.tools.draw(cells, mode),
      onStamp: (x, y) => this.tools.stamp(x, y),
      onRotate: (delta) => this.tools.rotate(delta),
      onHover: (cell) => this.tools.showCoords(cell),
    });
    this.tools.attach(this.board);
    const names = (pid) => (pid === 1 ? t('camp.you') : t('camp.enemyName'));
    this.series = new CellSeries({ name: 'campaign', resetOnRewind: true });
    this.chart = new CellChart($('chart-camp'), this.series, { name: names });
    this.endChart = new CellChart($('chart-camp-end'), this.series, { name: names });
    this._onChange = () => {
      if (this.game && this.game.latest) this.series.add(this.game.latest, undefined, this.game.latestPid);
      this.invalidate();
    };
    this._onError = (e) => flash(errorText(e.detail), errorKind(e.detail));
    this._bind();
  }

  get tool() { return this.tools.tool; }

  // ----- profile and level list -----

  async _profileToken({ fresh = false } = {}) {
    const d = loadCampaign();
    if (d.profileToken && !fresh) return d.profileToken;
    const res = await request('POST', '/profiles', { body: {} });
    patchCampaign({ profileId: res.profile_id, profileToken: res.profile_token });
    return res.profile_token;
  }

  async _fetchLevels() {
    let token = await this._profileToken();
    try {
      return await request('GET', '/campaign/levels', { token });
    } catch (err) {
      if (err.status !== 401 && err.status !== 404) throw err;
      if (err.status === 404 && err.code !== 'PROFILE_NOT_FOUND') throw err;
      token = await this._profileToken({ fresh: true }); // the server forgot us: a new profile
      return request('GET', '/campaign/levels', { token });
    }
  }

  async openLevels() {
    this.modes.show('campaign-levels');
    this._renderContinue();
    $('camp-message').hidden = true;
    try {
      const data = await this._fetchLevels();
      this.levels = Array.isArray(data) ? data : (data && data.levels) || [];
    } catch (err) {
      $('camp-message').textContent = t('camp.unavailable', { message: err.message || err.code });
      $('camp-message').hidden = false;
      return;
    }
    this._renderLevels();
  }

  _renderContinue() {
    const p = loadCampaign().parked;
    const btn = $('camp-continue');
    btn.hidden = !p;
    if (p) btn.textContent = t('camp.continue', { n: p.level, name: localName(p.name) });
  }

  _renderLevels() {
    const ol = $('camp-levels');
    ol.replaceChildren(...this.levels.map((lv) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'level';
      b.dataset.testid = `camp-level-${lv.number}`;
      b.dataset.level = String(lv.number);
      b.dataset.locked = String(!lv.unlocked);
      b.classList.toggle('locked', !lv.unlocked);
      b.classList.toggle('solved', !!lv.best && lv.best.result === 'win');
      const num = document.createElement('span');
      num.className = 'num';
      num.textContent = String(lv.number);
      const nm = document.createElement('span');
      nm.className = 'lname';
      nm.textContent = localName(lv.name);
      const info = document.createElement('small');
      const bits = [`${lv.width}×${lv.height}`, `${t('hud.budget')} ${lv.budget}`];
      if (lv.hopeless) bits.push(t('camp.hopeless'));
      if (!lv.unlocked) bits.unshift(t('camp.locked'));
      else if (lv.best) bits.unshift(bestText(lv.best));
      info.textContent = bits.join(' · ');
      b.append(num, nm, info);
      b.title = localName(lv.hint);
      b.addEventListener('click', () => {
        if (!lv.unlocked) flash(t('camp.lockedToast'), 'info', 2000);
        else this.playLevel(lv.number);
      });
      li.append(b);
      return li;
    }));
  }

  // ----- a level -----

  async playLevel(n) {
    try {
      const token = await this._profileToken();
      const { game_id: gameId } = await request('POST', '/game/create', {
        body: { kind: 'campaign', config: { level: n } },
        headers: { 'X-Profile-Token': token },
      });
      const seat = await request('POST', `${gamePath(gameId)}/join`, { body: { name: t('player.1') } });
      const parked = { gameId, token: seat.player_token, level: n, name: null, suspended: false };
      patchCampaign({ parked });
      await this._attach(parked);
    } catch (err) {
      flash(errorText(err));
    }
  }

  /** Show a parked level (back to the start screen when the server forgot it). */
  async resume() {
    const p = loadCampaign().parked;
    if (!p) return this.openLevels();
    return this._attach(p);
  }

  hasParked() {
    return !!loadCampaign().parked;
  }

  parkedActive() {
    const p = loadCampaign().parked;
    return !!p && !p.suspended;
  }

  async _attach(parked) {
    this.detach();
    const g = new HotseatGame({ gameId: parked.gameId, tokens: { 1: parked.token }, config: { level: parked.level } });
    try {
      await g.start();
    } catch (err) {
      g.stop();
      if ([401, 403, 404].includes(err.status)) patchCampaign({ parked: null });
      this.modes.toStart();
      flash(errorText(err));
      return;
    }
    this.game = g;
    this.parked = parked;
    g.addEventListener('change', this._onChange);
    g.addEventListener('error', this._onError);
    $('camp-end').hidden = true;
    this.series.reset(g.gameId);
    this.series.add(g.latest, undefined, g.latestPid);
    if ((g.latest.generation || 0) > 0) {
      backfill(this.series, g.gameId, { token: parked.token, alive: () => this.game === g }).catch(() => {});
    }
    this.tools.loadCatalogue();
    this.modes.show('campaign');
    const v = g.latest;
    patchCampaign({ parked: { ...parked, name: v.level_name || null, suspended: false } });
    this.board.fit();
    this.invalidate();
  }

  detach() {
    if (!this.game) return;
    this.game.removeEventListener('change', this._onChange);
    this.game.removeEventListener('error', this._onError);
    this.game.stop();
    this.game = null;
    $('camp-end').hidden = true;
  }

  refreshStyle() {
    this.tools.build();
    this.board.refreshColors();
    this.chart.rebuild();
    this.endChart.rebuild();
    if (this.levels.length && !$('screen-campaign-levels').hidden) this._renderLevels();
    this.invalidate();
  }

  invalidate() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  snapshot() {
    const g = this.game;
    if (!g || !g.latest) return null;
    const v = g.latest;
    return {
      gameId: g.gameId, level: v.level, phase: g.phase, generation: v.generation, result: v.result,
      winner: v.winner, enemy: v.enemy_cells, budget: g.budgetLeft(1), board: v.board, width: v.width,
      height: v.height, zone: g.zoneOf(1), busy: g.busy, seq: v.seq,
      pattern: this.tools.pattern, rotation: this.tools.rotation, tap: this.tools.tap,
      pending: g.overlay.size > 0 || !!g.inflight || g.queue.length > 0,
    };
  }

  render() {
    const g = this.game;
    if (!g || !g.latest) return;
    const v = g.latest;
    const phase = g.phase;
    const drawing = phase === 'placement' || phase === 'redraw';
    $('screen-campaign').dataset.phase = phase;
    $('camp-level').textContent = t('camp.level', { n: v.level, total: v.levels_total || 103 });
    $('camp-name').textContent = localName(v.level_name);
    $('camp-hint').textContent = localName(v.hint);
    $('camp-phase').textContent = t(`camp.phase.${phase}`);
    if (phase !== 'finished') announce(t(`camp.phase.${phase}`));
    $('stats-camp').hidden = this.series.size === 0;
    $('camp-generation').textContent = String(v.generation || 0);
    $('camp-enemy').textContent = String(v.enemy_cells ?? '?');
    $('camp-stable').hidden = !v.stable || phase === 'finished';
    const budget = g.budgetLeft(1);
    $('camp-budget').textContent = budget === null ? '?' : String(budget);
    $('camp-budget-wrap').classList.toggle('empty', budget === 0);

    this.tools.sync(drawing);
    const busy = g.busy;
    $('camp-ready').hidden = !drawing;
    $('camp-reset').hidden = !drawing;
    $('camp-run').hidden = phase !== 'running' && phase !== 'paused';
    $('camp-pause').textContent = t(phase === 'paused' ? 'action.resume' : 'action.pause');
    for (const id of ['camp-ready', 'camp-reset', 'camp-restart', 'camp-pause']) $(id).disabled = busy;
    for (const b of document.querySelectorAll('[data-cspeed]')) {
      b.classList.toggle('active', Number(b.dataset.cspeed) === (v.speed || 1));
    }

    const { cells, width, height } = g.displayCells();
    this.board.setBoard(cells, width, height);
    this.board.setOverlay(g.overlay);
    this.board.setZone(phase === 'finished' ? null : g.zoneOf(1));
    this.board.setInteractive(drawing && !busy, 1);

    if (phase === 'finished') this._showEnd();
    else $('camp-end').hidden = true;
  }

  _showEnd() {
    const box = $('camp-end');
    if (!box.hidden) return;
    const v = this.game.latest;
    const win = v.result === 'win';
    patchCampaign({ parked: null });
    $('camp-end-title').textContent = t(win ? 'camp.win' : 'camp.loss');
    $('camp-end-title').dataset.result = v.result || '';
    $('camp-end-text').textContent = win ? tn('camp.winText', v.generation || 0) : t('camp.lossText');
    announce(`${$('camp-end-title').textContent} ${$('camp-end-text').textContent}`);
    $('camp-end-next').hidden = !win || v.level >= (v.levels_total || 103);
    box.hidden = false;
  }

  async _ready() {
    const g = this.game;
    if (!g || g.busy) return;
    await g.drain();
    if (g.phase === 'placement') await g.endTurn(1);
    else if (g.phase === 'redraw') await g.readyAll();
  }

  async _restart({ confirm = true } = {}) {
    const g = this.game;
    if (!g || g.busy) return;
    if (confirm && !(await confirmDialog(t('camp.confirmRestart')))) return;
    if (this.game !== g) return;
    const wasFinished = g.phase === 'finished';
    const res = await g.action(1, { type: 'restart' });
    if (res && wasFinished) await this._attach(this.parked); // the stream ended with the level
    else if (res) patchCampaign({ parked: { ...this.parked, suspended: false } });
  }

  _bind() {
    $('camp-levels-back').addEventListener('click', () => this.modes.toStart());
    $('camp-continue').addEventListener('click', () => this.resume());
    $('camp-menu').addEventListener('click', () => {
      const p = loadCampaign().parked;
      if (p) patchCampaign({ parked: { ...p, suspended: true } });
      this.detach();
      this.modes.toStart();
    });
    $('camp-ready').addEventListener('click', () => this._ready());
    $('camp-reset').addEventListener('click', () => this.game && this.game.resetTurn());
    $('camp-restart').addEventListener('click', () => this._restart());
    $('camp-pause').addEventListener('click', () => {
      const g = this.game;
      if (!g || g.busy) return;
      if (g.phase === 'running') g.pause();
      else if (g.phase === 'paused') g.resume();
    });
    for (const b of document.querySelectorAll('[data-cspeed]')) {
      b.addEventListener('click', () => this.game && this.game.speed(Number(b.dataset.cspeed)));
    }
    $('camp-end-levels').addEventListener('click', () => {
      this.detach();
      this.openLevels();
    });
    $('camp-end-restart').addEventListener('click', () => this._restart({ confirm: false }));
    $('camp-end-next').addEventListener('click', () => {
      const n = this.game && this.game.latest.level;
      this.detach();
      if (n) this.playLevel(n + 1);
    });
    $('camp-end-replay').addEventListener('click', () => {
      const id = this.game && this.game.gameId;
      this.detach();
      if (id) this.modes.openReplay(id);
    });
  }
}
