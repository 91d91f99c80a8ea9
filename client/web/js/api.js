// The REST + WebSocket API of the gateway (docs/api/index.md, docs/api/websocket.md), same
// origin only.

import { ApiError, gamePath, newId, request } from './http.js';

export { ApiError };

export const api = {
  /** POST /game/create → {game_id} */
  createGame: (kind, config) => request('POST', '/game/create', { body: { kind, config } }),
  /** POST /game/{id}/join → {player_id, player_token} */
  join: (gameId, name) => request('POST', `${gamePath(gameId)}/join`, { body: { name } }),
  /** GET /game/{id}/state → the player's view */
  state: (gameId, token) => request('GET', `${gamePath(gameId)}/state`, { token }),
  /** An action → {seq, view}: over the seat's open stream, else POST /game/{id}/action */
  action: (gameId, token, action) => command(gameId, token, { type: 'action', action }),
  /** End the turn → {seq, view}: over the seat's open stream, else POST /game/{id}/end_turn */
  endTurn: (gameId, token) => command(gameId, token, { type: 'end_turn' }),
  /** CellWar: a unit's legal moves → {actions}: over the seat's open stream, else
   * GET /game/{id}/valid_actions?unit_id= */
  validActions: (gameId, token, unitId) => command(gameId, token, { type: 'valid_actions', unit_id: unitId }),
  /** POST /game/{id}/bots → {game_id, player_id, policy, name}: a computer player joins */
  addBot: (gameId, token, policy) => request('POST', `${gamePath(gameId)}/bots`, { token, body: { policy } }),
};

/** Milliseconds a command sent over the stream waits for its answer before it goes by REST. */
const COMMAND_TIMEOUT_MS = 10000;
/** Largest command frame sent over the stream (bytes: the gateway's default
 * CELLWAR_WS_MAX_MESSAGE_BYTES, whose 413 answer cannot name the frame's id); a larger
 * command goes by REST at once. */
const COMMAND_FRAME_BYTES = 4096;

/** The open player streams, by `gameId + ' ' + token` (commands go over them). */
const streams = new Map();

/**
 * Send one command of seat `token` in game `gameId`: as a frame over the seat's stream
 * when it is open (`{"type": "action"|"end_turn"|"valid_actions", "id", ...}`, answered
 * by a `result`, `valid_actions` or `error` frame with the same id,
 * docs/api/websocket.md), else — or when the socket closes or does not answer in time —
 * by REST with the same id as its Idempotency-Key, so a command is applied once however
 * it travels (`valid_actions` is a read: asked again by REST).
 * @returns {Promise<{seq: number, view: object}|{actions: object[]}>}
 * @throws {ApiError}
 */
export function command(gameId, token, frame) {
  const id = newId();
  const path = gamePath(gameId);
  const rest = () => {
    if (frame.type === 'valid_actions') {
      return request('GET', `${path}/valid_actions?unit_id=${encodeURIComponent(frame.unit_id)}`, { token });
    }
    return frame.type === 'action'
      ? request('POST', `${path}/action`, { token, body: frame.action, idempotencyKey: id })
      : request('POST', `${path}/end_turn`, { token, body: {}, idempotencyKey: id });
  };
  const stream = streams.get(`${gameId} ${token}`);
  const size = new TextEncoder().encode(JSON.stringify({ ...frame, id })).length;
  if (!stream || !stream.isOpen() || size > COMMAND_FRAME_BYTES) return rest();
  return stream.send({ ...frame, id }).catch((err) => {
    if (err instanceof ApiError) throw err;
    return rest(); // the socket closed or timed out: the same id by REST
  });
}

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
  const key = `${gameId} ${token}`;
  const socket = keepSocket(`${gamePath(gameId)}/stream`, token, handlers);
  streams.set(key, socket);
  return {
    close() {
      if (streams.get(key) === socket) streams.delete(key);
      socket.close();
    },
  };
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
  const pending = new Map(); // command id → {frame, resolve, reject, timer}

  const settle = (id, fn) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    clearTimeout(p.timer);
    fn(p);
  };
  const dropAll = () => {
    for (const id of [...pending.keys()]) settle(id, (p) => p.reject(new Error('stream closed')));
  };

  const connect = () => {
    if (closed) return;
    ws = new WebSocket(url, protocols);
    ws.onopen = () => {
      delay = 250;
      onStatus('open');
      for (const p of pending.values()) ws.send(JSON.stringify(p.frame)); // resent: same id, applied once
    };
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if ((msg.type === 'result' || msg.type === 'valid_actions' || msg.type === 'error')
          && msg.id && pending.has(msg.id)) {
        settle(msg.id, (p) => {
          if (msg.type === 'result') p.resolve({ seq: msg.seq, view: msg.view });
          else if (msg.type === 'valid_actions') p.resolve({ actions: msg.actions });
          else p.reject(new ApiError(msg.status || 0, msg.error?.code || 'ERROR', msg.error?.message));
        });
        return;
      }
      if (msg.type === 'error' && msg.id == null && msg.status === 413 && pending.size) {
        // a frame too large for the server (its id unread): the oldest waiting command, as
        // the server answers in order; it goes by REST
        settle(pending.keys().next().value, (p) => p.reject(new Error('frame too large')));
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
        dropAll();
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
    isOpen: () => !closed && ws !== null && ws.readyState === WebSocket.OPEN,
    /** Send a command frame; resolves with its answer, rejects with its ApiError (or an
     * Error when the socket closes or the answer takes over COMMAND_TIMEOUT_MS). */
    send(frame) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => settle(frame.id, (p) => p.reject(new Error('timeout'))), COMMAND_TIMEOUT_MS);
        pending.set(frame.id, { frame, resolve, reject, timer: t });
        ws.send(JSON.stringify(frame));
      });
    },
    close() {
      closed = true;
      clearTimeout(timer);
      dropAll();
      if (ws && ws.readyState <= 1) ws.close(1000);
    },
  };
}
