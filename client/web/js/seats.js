// The newest view of every seat of a game played from this browser (HotseatGame,
// CellWarGame): REST answers and stream messages arrive in any order, per seat.
//
// A view's `seq` is its seat's OWN version (how many events that seat observed: a
// blind placement or a fogged CellWar move moves only its actor's version), so seqs of
// different seats are not comparable: seat 1 at 40 may be older than seat 2 at 12.
// Views are therefore ordered per seat by `seq`, and `game.latest` (the game's newest
// public state: phase, turn, round, generation) is the newest view of the seat that got
// a newer view last — arrival order across seats —, except that it never moves back in
// what only ever moves forward (a finished game stays finished; phase waiting →
// placement → the rest; generation; CellWar round). Every seat observes every public
// event, so the last seat to hear of one carries it, and a seat whose stream lags cannot
// take the game back.

/** Phases in the order a game goes through them (the others rank with 'running'). */
const PHASE_RANK = { waiting: 0, placement: 1, finished: 3 };

function rank(phase) {
  return PHASE_RANK[phase] ?? 2;
}

/**
 * Is `view` (of another seat than `latest`) behind `latest` in what only moves
 * forward: the phase order, the generation (Life, campaign) or the round (CellWar)?
 * @param {object} view
 * @param {object} latest
 * @returns {boolean}
 */
export function behind(view, latest) {
  if (rank(view.phase) < rank(latest.phase)) return true;
  for (const k of ['generation', 'round']) {
    if (Number.isFinite(view[k]) && Number.isFinite(latest[k]) && view[k] < latest[k]) return true;
  }
  return false;
}

/**
 * Keep a seat's view unless it is older than the one held for that seat (its own
 * `seq`). It becomes `game.latest` (and `game.latestPid` its seat) when it comes from
 * the seat `latest` came from (that seat's own order holds: a campaign level restarted
 * goes back to generation 0), or when it is newer for its seat and not behind `latest`
 * (see `behind`). Once `latest` is finished the streams are closed.
 * @param {{views: Map<number, object>, latest: ?object, latestPid?: number,
 *          streams: Array<{close: () => void}>, stopped: boolean}} game
 * @param {number} pid the seat the view belongs to
 * @param {?object} view
 * @param {number} [seq] the message's seq when the view carries none
 * @returns {boolean} false when the view was dropped (none, stopped game or older for
 *   its seat)
 */
export function keepView(game, pid, view, seq) {
  if (!view || game.stopped) return false;
  const s = view.seq ?? seq ?? 0;
  if (view.seq === undefined) view = { ...view, seq: s };
  const old = game.views.get(pid);
  if (old && old.seq > s) return false;
  game.views.set(pid, view);
  // Another seat's view takes `latest` only when it is news for that seat (a repeated
  // version tells nothing new) and does not take the game back.
  const news = !old || s > old.seq;
  if (!game.latest || game.latestPid === pid || (news && !behind(view, game.latest))) {
    game.latest = view;
    game.latestPid = pid;
  }
  if (game.latest.phase === 'finished') {
    for (const st of game.streams) st.close();
    game.streams = [];
  }
  return true;
}
