// Online play: one seat of a Life game per browser (its own token in localStorage), the
// others join with a share link (`/#join=<game_id>`). Same model as the hot-seat game,
// but this browser only ever acts, draws and sees as its own seat (blind placement is
// the server's view), and waits for the others' turns over the WebSocket stream.

import { api } from './api.js';
import { HotseatGame } from './hotseat.js';

/** Create a Life game and take seat 1; returns the save record. */
export async function createOnlineGame(config, name) {
  const { game_id: gameId } = await api.createGame('life', config);
  return joinOnlineGame(gameId, name, config);
}

/** Take the next free seat of a game; returns the save record. */
export async function joinOnlineGame(gameId, name, config = null) {
  const seat = await api.join(gameId, name);
  return {
    mode: 'online',
    gameId,
    me: seat.player_id,
    tokens: { [seat.player_id]: seat.player_token },
    config: config || {},
  };
}

/** The link that lets another browser join the game. */
export function shareLink(gameId) {
  return `${location.origin}${location.pathname}#join=${encodeURIComponent(gameId)}`;
}

/** The game id of a share link in the current URL (`#join=` or `?join=`), or null. */
export function joinIdFromUrl() {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  const query = new URLSearchParams(location.search);
  const id = hash.get('join') || query.get('join');
  return id && /^[\w-]{1,64}$/.test(id) ? id : null;
}

/** Drop the join parameter from the address bar (a reload must not join again). */
export function clearJoinFromUrl() {
  const url = new URL(location.href);
  url.searchParams.delete('join');
  url.hash = '';
  history.replaceState(null, '', url.pathname + url.search);
}

export class OnlineGame extends HotseatGame {
  constructor(save) {
    super(save);
    this.online = true;
    this.me = Number(save.me) || this.pids[0];
    this.redrawPid = this.me;
  }

  /** This seat while it may draw (its placement turn; redraw until it said ready). */
  actingPid() {
    const p = this.player(this.me) || {};
    if (p.out) return 0;
    if (this.phase === 'placement') return this.latest.turn === this.me ? this.me : 0;
    if (this.phase === 'redraw') return p.ready || this.readyInRound.has(this.me) ? 0 : this.me;
    return 0;
  }

  displayPid() {
    return this.me;
  }

  anyActivePid() {
    return this.me;
  }

  setRedrawPid() {}

  /** Redraw: this seat is ready. */
  readyAll() {
    return this._command(async () => {
      await this.drain();
      if (this.phase !== 'redraw') return;
      const res = await api.endTurn(this.gameId, this.tokens.get(this.me));
      this._markReady(this.me, res);
      this.applyView(this.me, res.view, res.seq);
    });
  }

  /** This seat proposes to finish; the game ends once every remaining seat agrees. */
  finishAll() {
    return this._command(async () => {
      await this.drain();
      const p = this.player(this.me) || {};
      if (this.phase === 'finished' || p.proposed_finish) return;
      const res = await api.action(this.gameId, this.tokens.get(this.me), { type: 'propose_finish' });
      this.applyView(this.me, res.view, res.seq);
    });
  }

  /** Placement: end this seat's turn (the next player draws in their own browser). */
  endMyTurn() {
    return this.endTurn(this.me);
  }
}
