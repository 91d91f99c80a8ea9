// The REST + WebSocket API of the gateway (docs/api/index.md, docs/api/websocket.md), same
// origin only.

import { ApiError, gamePath, request } from './http.js';

export { ApiError };

export const api = {
  /** POST /game/create → {game_id} */
  createGame: (kind, config) => request('POST', '/game/create', { body: { kind, config } }),
  /** POST /game/{id}/join → {player_id, player_token} */
  join: (gameId, name) => request('POST', `${gamePath(gameId)}/join`, { body: { name } }),
  /** GET /game/{id}/state → the player's view */
  state: (gameId, token) => request('GET', `${gamePath(gameId)}/state`, { token }),
  /** POST /game/{id}/action → {seq, view} */
  action: (gameId, token, action) => request('POST', `${gamePath(gameId)}/action`, { token, body: action }),
  /** POST /game/{id}/end_turn → {seq, view} */
  endTurn: (gameId, token) => request('POST', `${gamePath(gameId)}/end_turn`, { token, body: {} }),
  /** POST /game/{id}/bots → {game_id, player_id, policy, name}: a computer player joins */
  addBot: (gameId, token, policy) => request('POST', `${gamePath(gameId)}/bots`, { token, body: { policy } }),
};

/**
 * Open the game's WebSocket stream for one player token and keep it open (reconnects
 * with back-off until close() is called). The token travels as the subprotocol
 * `bearer.<token>` beside `cellwar.v1` (gateway/routes/stream.py), never in the URL, so
 * no proxy or server log sees it.
 * @param {string} gameId
 * @param {string} token
 * @param {{onMessage: (msg: object) => void, onStatus?: (status: string) => void}} handlers
 *   status is 'open', 'reconnecting' or 'closed'
 * @returns {{close: () => void}}
 */
export function openStream(gameId, token, handlers) {
  // the token travels as the bearer subprotocol, never in the URL (it would reach logs)
  return keepSocket(`${gamePath(gameId)}/stream`, token, handlers);
}

/**
 * A delayed spectator's stream of a game (`?spectate=1&delay_s=N`, no token): the same
 * messages, showing the game as it was `delaySeconds` ago; reconnects like openStream.
 * @returns {{close: () => void}}
 */
export function openSpectatorStream(gameId, delaySeconds, handlers) {
  return keepSocket(`${gamePath(gameId)}/stream?spectate=1&delay_s=${encodeURIComponent(delaySeconds)}`, null, handlers);
}

/**
 * A WebSocket to `path` of this origin kept open until close() or the game's end;
 * `token` (or null for a spectator) is offered as the subprotocol `bearer.<token>`.
 */
function keepSocket(path, token, { onMessage, onStatus = () => {} }) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${proto}//${location.host}${path}`;
  const protocols = token ? ['cellwar.v1', `bearer.${token}`] : ['cellwar.v1'];
  let ws = null;
  let closed = false;
  let delay = 250;
  let timer = null;

  const connect = () => {
    if (closed) return;
    ws = new WebSocket(url, protocols);
    ws.onopen = () => {
      delay = 250;
      onStatus('open');
    };
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === 'finished') closed = true; // the game is over: no reconnect
      onMessage(msg);
    };
    ws.onclose = (ev) => {
      ws = null;
      // 4401/4403/4404 (bad token, other game, unknown game) and 1000 after the end: stop.
      if (closed || (ev.code >= 4400 && ev.code < 4500)) {
        closed = true;
        onStatus('closed');
        return;
      }
      onStatus('reconnecting');
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 4000);
    };
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (ws && ws.readyState <= 1) ws.close(1000);
    },
  };
}
