// Why a game ended, read from its final view and its event log (public once a game is
// finished): the event just before `GameFinished` is what ended it (the end conditions of
// docs/architecture/rules.md for Life, the seed's for CellWar). The engine does not record
// a reason; these rules mirror `engine/life/game.py` (`settle`, `tick`): a drawing action
// in `redraw` can only end a game by budget deadlock, an `end_turn` in `redraw` only by an
// empty round, a generation by extinction, the generation limit or (stable board → redraw →
// deadlock) budget deadlock.

/** Life end reasons, in the words of i18n `reason.<code>`. */
export const LIFE_REASONS = [
  'extinction', 'empty_redraw', 'budget_deadlock', 'agreed', 'resign', 'generation_limit', 'left', 'disconnected',
];

const DRAWING = new Set(['place', 'erase', 'stamp', 'reset_turn']);

/** The event that ended the game: the last one before the closing `GameFinished`(s). */
function cause(events) {
  let i = (events || []).length - 1;
  while (i >= 0 && events[i].type === 'GameFinished') i--;
  return i >= 0 ? events[i] : null;
}

/**
 * Why a finished Life game ended (one of LIFE_REASONS), or null when it cannot be told
 * (not finished).
 * @param {object} view the final view (`phase` 'finished', `players[].out`, `generation`,
 *   `max_generations`, `stable`)
 * @param {Array<{type: string, payload?: object}>} [events] the whole log (optional:
 *   without it only what the view shows is used)
 * @returns {?string}
 */
export function lifeEndReason(view, events) {
  if (!view || view.phase !== 'finished') return null;
  const e = cause(events);
  if (e) {
    const p = e.payload || {};
    if (e.type === 'PlayerRemoved') return p.reason === 'disconnected' ? 'disconnected' : 'left';
    if (e.type === 'ActionApplied' && p.action) {
      if (p.action.type === 'resign') return 'resign';
      if (p.action.type === 'propose_finish') return 'agreed';
      if (DRAWING.has(p.action.type)) return 'budget_deadlock';
    }
    if (e.type === 'TurnEnded' || e.type === 'TurnTimedOut') return 'empty_redraw';
  }
  const alive = (view.players || []).filter((q) => !q.out);
  if (alive.length <= 1 && (view.generation || 0) > 0) return 'extinction';
  if (view.max_generations && (view.generation || 0) >= view.max_generations) return 'generation_limit';
  if (view.stable) return 'budget_deadlock';
  if (alive.length <= 1) return 'resign';
  return null;
}

/**
 * Why a finished CellWar game ended: 'left' / 'disconnected' (the last opponent went),
 * else 'eliminated' (the others lost their last unit).
 * @param {Array<{type: string, payload?: object}>} [events]
 * @returns {string}
 */
export function cellwarEndReason(events) {
  const e = cause(events);
  if (e && e.type === 'PlayerRemoved') return (e.payload || {}).reason === 'disconnected' ? 'disconnected' : 'left';
  return 'eliminated';
}
