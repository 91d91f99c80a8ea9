// The lobby: open and running games (GET /games) with "Join" for a game still waiting for
// players (its share link's route) and "Watch", which opens the game for a
// spectator delayed by the chosen delay (js/lobby/watch.js; the server holds CellWar
// spectators at least 10 s behind).

import './i18n.js';
import { t } from '../i18n.js';
import { request } from '../http.js';
import { errorText } from '../modes-ui.js';

const $ = (id) => document.getElementById(id);

export class LobbyScreen {
  /** @param {{show: (name: string) => void, toStart: () => void, watch: (id: string, kind: string, delay: number) => void}} modes */
  constructor(modes) {
    this.modes = modes;
    this.games = [];
    this.token = 0;
    $('lobby-back').addEventListener('click', () => this.modes.toStart());
    $('lobby-refresh').addEventListener('click', () => this.load());
    $('lobby-rows').addEventListener('click', (e) => {
      const join = e.target.closest('button[data-join]');
      if (join) {
        // the share link's own route: main.js (#join=, Life) and modes.js (#cellwar=) take the seat
        location.hash = `${join.dataset.kind === 'cellwar' ? 'cellwar' : 'join'}=${encodeURIComponent(join.dataset.join)}`;
        return;
      }
      const btn = e.target.closest('button[data-watch]');
      if (btn) this.modes.watch(btn.dataset.watch, btn.dataset.kind, this.delay());
    });
  }

  /** The chosen spectator delay (seconds). */
  delay() {
    return Number($('lobby-delay').value) || 30;
  }

  async open() {
    this.modes.show('lobby');
    await this.load();
  }

  _message(text) {
    const el = $('lobby-message');
    el.textContent = text || '';
    el.hidden = !text;
  }

  async load() {
    const my = ++this.token;
    this._message(t('lobby.loading'));
    let games;
    try {
      games = (await request('GET', '/games')).games || [];
    } catch (err) {
      if (my === this.token) this._message(errorText(err));
      return;
    }
    if (my !== this.token) return;
    this.games = games;
    this._message(games.length ? '' : t('lobby.empty'));
    this.render();
  }

  render() {
    $('lobby-table').hidden = !this.games.length;
    $('lobby-rows').replaceChildren(...this.games.map((g) => {
      const tr = document.createElement('tr');
      tr.dataset.testid = `lobby-game-${g.game_id}`;
      const id = document.createElement('td');
      id.translate = false;
      id.textContent = g.game_id;
      const kind = document.createElement('td');
      kind.textContent = t(`kind.${g.kind}`);
      const phase = document.createElement('td');
      phase.textContent = t(`phase.name.${g.phase}`);
      const players = document.createElement('td');
      players.textContent = `${g.players_joined}/${g.max_players}`;
      const act = document.createElement('td');
      const btn = document.createElement('button');
      btn.textContent = t('lobby.watch');
      btn.dataset.watch = g.game_id;
      btn.dataset.kind = g.kind;
      btn.dataset.testid = `lobby-watch-${g.game_id}`;
      act.append(btn);
      if (g.phase === 'waiting' && g.players_joined < g.max_players && g.kind !== 'campaign') {
        const join = document.createElement('button');
        join.textContent = t('lobby.join');
        join.dataset.join = g.game_id;
        join.dataset.kind = g.kind;
        join.dataset.testid = `lobby-join-${g.game_id}`;
        act.append(' ', join);
      }
      tr.append(id, kind, phase, players, act);
      return tr;
    }));
  }

  refreshStyle() {
    if (this.games.length) this.render();
  }

  snapshot() {
    return { games: this.games.map((g) => g.game_id), delay: this.delay() };
  }
}
