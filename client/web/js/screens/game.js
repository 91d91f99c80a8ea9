// The game screen of a hot-seat Life game: HUD, toolbar, canvas board, phase actions,
// hand-over screen (shown before player 1's end_turn, so "Back to player 1" is possible)
// and the winner screen.

import { BoardView } from '../board.js';
import { t } from '../i18n.js';
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
    this.board = new BoardView($('board'), {
      onStroke: (cells, mode) => this.game && this.game.draw(cells, mode),
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
    };
  }

  render() {
    const g = this.game;
    if (!g || !g.latest) return;
    const v = g.latest;
    const phase = g.phase;
    const acting = g.actingPid();
    const drawing = (phase === 'placement' || phase === 'redraw') && acting > 0;
    const name = (pid) => {
      const p = g.player(pid);
      return (p && p.name) || t(`player.${pid}`);
    };

    Object.assign(this.root.dataset, {
      phase,
      turn: String(v.turn || 0),
      generation: String(v.generation || 0),
      acting: String(acting),
      handover: String(this.handover),
    });

    for (const pid of [1, 2]) {
      const p = g.player(pid) || {};
      const el = $(`hud-p${pid}`);
      el.classList.toggle('acting', pid === acting && !this.handover);
      el.classList.toggle('out', !!p.out);
      $(`name-${pid}`).textContent = name(pid) + (phase === 'redraw' && p.ready ? ' ✓' : '');
      // While the device is handed over, the next player learns nothing of the last one's.
      const masked = this.handover && pid !== 2;
      const cells = masked ? null : g.cellsOf(pid);
      $(`cells-${pid}`).textContent = cells === null ? '?' : String(cells);
      const budget = masked ? null : g.budgetLeft(pid);
      $(`budget-${pid}`).textContent = budget === null ? '?' : String(budget);
      $(`budget-wrap-${pid}`).classList.toggle('empty', budget === 0);
    }
    $('hud-phase').textContent = t(`phase.${phase}`, { name: name(acting || v.turn || 1) });
    $('hud-generation').textContent = String(v.generation || 0);
    $('hud-stable').hidden = !v.stable;

    $('toolbar').style.visibility = drawing && !this.handover ? 'visible' : 'hidden';
    for (const b of $('toolbar').querySelectorAll('button[data-tool]')) {
      b.classList.toggle('active', b.dataset.tool === this.tool);
    }

    const busy = g.busy || this.handoverBusy;
    $('panel-placement').hidden = phase !== 'placement' || this.handover;
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
    $('btn-redraw-1').classList.toggle('active', acting === 1);
    $('btn-redraw-2').classList.toggle('active', acting === 2);

    $('overlay-handover').hidden = !this.handover;
    $('handover-text').textContent = t('handover.text', { name: name(2) });
    $('handover-accept').disabled = this.handoverBusy;
    $('handover-back').disabled = this.handoverBusy;

    const { cells, width, height } = g.displayCells();
    this.board.setBoard(cells, width, height);
    this.board.setOverlay(g.overlay);
    this.board.setZone(drawing ? g.zoneOf(acting) : null);
    this.board.setInteractive(drawing && !this.handover && !busy, acting);

    if (phase === 'finished') this._showWinner();
  }

  _showWinner() {
    const g = this.game;
    const v = g.latest;
    const box = $('overlay-winner');
    if (!box.hidden) return;
    saveGame(null); // a finished game is not resumable
    const name = (pid) => ((g.player(pid) || {}).name) || t(`player.${pid}`);
    $('winner-text').textContent = v.result === 'draw' || !v.winner
      ? t('winner.draw')
      : t('winner.wins', { name: name(v.winner) });
    $('winner-text').dataset.winner = String(v.winner || 0);
    const ul = $('winner-scores');
    ul.replaceChildren(...(v.players || []).map((p) => {
      const li = document.createElement('li');
      li.textContent = t('winner.score', { name: p.name || t(`player.${p.id}`), cells: p.cells ?? 0 });
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
        this.invalidate();
      });
      bar.append(b);
    }
    const hint = document.createElement('span');
    hint.className = 'hint';
    hint.textContent = t('tool.rmb');
    bar.append(hint);
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
    $('btn-redraw-1').addEventListener('click', () => this.game && this.game.setRedrawPid(1));
    $('btn-redraw-2').addEventListener('click', () => this.game && this.game.setRedrawPid(2));
    $('btn-ready').addEventListener('click', () => this.game && this.game.readyAll());
    $('btn-finish').addEventListener('click', async () => {
      if (this.game && await confirmDialog(t('confirm.finish')) && this.game) await this.game.finishAll();
    });
    $('winner-menu').addEventListener('click', () => this.app.toMenu({ finished: true }));
    $('winner-rematch').addEventListener('click', () => this.game && this.app.rematch(this.game.config));
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
    await g.drain();
    const last = g.pids[g.pids.length - 1];
    if (pid !== last) {
      this._setHandover(true);
    } else {
      await g.endTurn(pid);
    }
  }

  _setHandover(on) {
    this.handover = on;
    patchGame({ handover: on });
    this.invalidate();
  }

  async _acceptHandover() {
    const g = this.game;
    if (!g || this.handoverBusy) return;
    this.handoverBusy = true;
    this.invalidate();
    try {
      // The board stays covered until player 2's own (blind) view is in.
      if (g.phase === 'placement') await g.endTurn(g.actingPid());
    } finally {
      this.handoverBusy = false;
      if (g.phase !== 'placement' || g.actingPid() !== 1) this._setHandover(false);
      else this.invalidate();
    }
  }
}
