// CellWar screens: settings (size, players, hot-seat or online) and the game (HUD, board,
// unit selection with highlighted legal targets, End turn, hand-over between hot-seat
// players, winner screen with "Watch replay").

import { t } from '../i18n.js';
import { errorText, flash } from '../modes-ui.js';
import { confirmDialog } from '../screens/dialogs.js';
import { CellWarBoard } from './render.js';
import { CellWarGame, createCellWar, joinCellWar, loadCellWar, patchCellWar, saveCellWar } from './game.js';

const $ = (id) => document.getElementById(id);
const PREFS = 'cellwar.cw.prefs.v1';

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
    this.board = new CellWarBoard($('cw-board'), { onCell: (x, y) => this._click(x, y) });
    this._onChange = () => this.invalidate();
    this._onError = (e) => flash(errorText(e.detail));
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
    const clamp = (v) => Math.min(32, Math.max(8, Math.floor(Number(v)) || 12));
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
    this.board.fit();
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
    $('cw-winner').hidden = true;
  }

  refreshStyle() {
    this.board.refreshColors();
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
    if (g.phase === 'finished') return g.pids[0];
    if (this.handoverPending()) return null;
    if (g.ownsTurn()) return g.turn;
    return null;
  }

  name(pid) {
    const p = this.game && this.game.player(pid);
    return (p && p.name) || t(`player.${pid}`);
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

    // HUD: players, whose turn, round, units left.
    const ul = $('cw-players-list');
    ul.replaceChildren(...(latest.players || []).map((p) => {
      const li = document.createElement('li');
      li.className = `cw-player p${p.id}`;
      li.dataset.testid = `cw-player-${p.id}`;
      li.classList.toggle('acting', g.phase === 'playing' && p.id === g.turn);
      li.classList.toggle('out', !!p.out);
      li.classList.toggle('disconnected', !p.connected);
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = this.board.players[p.id] || '#888';
      const nm = document.createElement('span');
      nm.className = 'name';
      nm.textContent = p.name || t(`player.${p.id}`);
      li.append(sw, nm);
      const tags = [];
      if (g.mode === 'online' && g.tokens.has(p.id)) tags.push(t('cw.you'));
      if (p.out) tags.push(t('cw.out'));
      else if (!p.connected) tags.push(t('cw.disconnected'));
      if (tags.length) {
        const tg = document.createElement('small');
        tg.className = 'tag';
        tg.textContent = tags.join(', ');
        li.append(tg);
      }
      return li;
    }));
    let turnText;
    if (g.phase === 'waiting') {
      turnText = t('cw.turn.waiting', { n: (latest.players || []).length, total: g.config.players || '?' });
    } else if (g.phase === 'finished') {
      turnText = t('cw.turn.finished');
    } else if (myTurn) {
      turnText = t('cw.turn.yours', { name: this.name(g.turn) });
    } else {
      turnText = t('cw.turn.other', { name: this.name(g.turn) });
    }
    $('cw-turn').textContent = turnText;
    $('cw-round').textContent = String(latest.round || 0);
    const own = v && v.units ? v.units.filter((u) => u.owner === pid && u.id !== null) : [];
    const left = myTurn ? own.filter((u) => !u.acted).length : 0;
    $('cw-left').textContent = pid ? String(left) : '–';

    // Share link (online, while seats are open).
    const share = g.mode === 'online' && g.phase === 'waiting';
    $('cw-share').hidden = !share;
    if (share) $('cw-share-link').value = `${location.origin}${location.pathname}#cellwar=${encodeURIComponent(g.gameId)}`;

    // Hand-over.
    $('cw-handover').hidden = !handover;
    if (handover) {
      const name = this.name(g.turn);
      $('cw-handover-title').textContent = t('cw.handover.title', { name });
      $('cw-handover-text').textContent = t('cw.handover.text', { name });
      $('cw-handover-accept').textContent = t('cw.handover.accept', { name });
    }

    // Hint and End turn.
    let hint = '';
    if (myTurn) {
      if (this.hint) hint = this.hint;
      else if (this.selected) hint = t('cw.hint.target');
      else hint = left ? t('cw.hint.select') : t('cw.hint.done');
    }
    $('cw-hint').textContent = hint;
    $('cw-end-turn').hidden = g.phase !== 'playing';
    $('cw-end-turn').disabled = !myTurn || g.busy;

    if (!myTurn && this.selected) this._clearSelection();
    this.board.setView(v || latest, {
      selected: this.selected ? this.selected.unitId : null,
      targets: this.targets,
      interactive: myTurn && !g.busy,
      hidden: !v,
    });

    if (g.phase === 'finished') this._showWinner();
  }

  _showWinner() {
    const box = $('cw-winner');
    if (!box.hidden) return;
    saveCellWar(null);
    const v = this.game.latest;
    $('cw-winner-text').textContent = v.winner ? t('cw.wins', { name: this.name(v.winner) }) : t('winner.draw');
    $('cw-winner-text').dataset.winner = String(v.winner || 0);
    $('cw-winner-rematch').hidden = this.game.mode !== 'hotseat';
    box.hidden = false;
  }

  _clearSelection() {
    this.selected = null;
    this.targets = new Map();
    this.hint = '';
  }

  async _click(x, y) {
    const g = this.game;
    const pid = this.shownPid();
    if (!g || !pid || g.busy || !g.ownsTurn() || g.turn !== pid) return;
    const key = `${x},${y}`;
    const target = this.targets.get(key);
    if (target) {
      const { unit_id: unitId, dx, dy } = target;
      this._clearSelection();
      this.invalidate();
      await g.act(pid, { unit_id: unitId, dx, dy });
      return;
    }
    const v = g.view(pid);
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
    } catch (err) {
      this._clearSelection();
      flash(errorText(err));
    }
    this.invalidate();

    function left(view, p) {
      return (view.units || []).filter((u) => u.owner === p && !u.acted && u.type !== 'factory').length;
    }
  }

  _acceptHandover() {
    this.accepted = this._turnKey();
    patchCellWar({ accepted: this.accepted });
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
