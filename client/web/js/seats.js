// The newest view of every seat of a game played from this browser (HotseatGame,
// CellWarGame): REST answers and stream messages arrive in any order, per seat.

/**
 * Keep a seat's view unless it is older than the one held for that seat; the newest of
 * all seats becomes `game.latest`, and once it is finished the streams are closed.
 * @param {{views: Map<number, object>, latest: ?object, streams: Array<{close: () => void}>, stopped: boolean}} game
 * @param {number} pid
 * @param {?object} view
 * @param {number} [seq] the message's seq when the view carries none
 * @returns {boolean} false when the view was dropped (none, stopped game or older)
 */
export function keepView(game, pid, view, seq) {
  if (!view || game.stopped) return false;
  const s = view.seq ?? seq ?? 0;
  if (view.seq === undefined) view = { ...view, seq: s };
  const old = game.views.get(pid);
  if (old && old.seq > s) return false;
  game.views.set(pid, view);
  if (!game.latest || s >= game.latest.seq) game.latest = view;
  if (game.latest.phase === 'finished') {
    for (const st of game.streams) st.close();
    game.streams = [];
  }
  return true;
}
