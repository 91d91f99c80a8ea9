// Events of a game log in the player's language (the replay's event list, CellWar's
// combat log): the event type's name (i18n `event.<Type>`) and what it did (`ev.*`),
// never the raw type or action names. Player names (from the log's `PlayerJoined`
// events, or the screen's) are marked as names (`<bdi translate="no">`).

import { t, tNodes } from '../i18n.js';
import { patternName } from '../stamps.js';

/** Player id → name, from the `PlayerJoined` events of a log. */
export function namesFromLog(events) {
  const names = new Map();
  for (const e of events || []) {
    if (e.type === 'PlayerJoined' && e.payload && e.payload.player_id) names.set(e.payload.player_id, e.payload.name);
  }
  return names;
}

/** The translated name of an event type (an unknown type: "Event"). */
export function eventTypeName(type) {
  const key = `event.${type}`;
  const s = t(key);
  return s === key ? t('event.unknown') : s;
}

/** A direction (dx, dy) as an arrow. */
export function arrow(dx, dy) {
  const arrows = { '-1,-1': '↖', '0,-1': '↑', '1,-1': '↗', '-1,0': '←', '0,0': '•', '1,0': '→', '-1,1': '↙', '0,1': '↓', '1,1': '↘' };
  return arrows[`${Math.sign(dx)},${Math.sign(dy)}`] || '';
}

const cell = (xy) => `(${xy[0]}, ${xy[1]})`;

/**
 * What a CellWar unit's vector action did, as the engine decides it (engine/cellwar/actions.py,
 * from the seed's "Правила атаки"): "fortify", "stand", "become_factory", "produce", "move"
 * or "attack" (the target cell held a unit of another player). Decided from the units of
 * a view before the action (a finished game's replay view holds every unit; a player's
 * view holds what it saw); null when that view does not show the unit.
 * @param {Array<{id: number, owner: number, type: string, x: number, y: number, standing?: number}>} units
 * @param {{unit_id: number, dx: number, dy: number}} a
 * @returns {{kind: string, unit: object, from: number[], to: number[], target: object|null}|null}
 */
export function cwAction(units, a) {
  if (!Array.isArray(units) || !a || !Number.isFinite(a.unit_id)) return null;
  const unit = units.find((u) => u.id === a.unit_id);
  if (!unit) return null;
  const dx = a.dx || 0;
  const dy = a.dy || 0;
  const from = [unit.x, unit.y];
  const to = [unit.x + dx, unit.y + dy];
  const target = dx || dy ? units.find((u) => u.x === to[0] && u.y === to[1]) || null : null;
  let kind;
  if (!dx && !dy) {
    if (unit.type === 'infantry') kind = 'fortify';
    else kind = (unit.standing || 1) + 1 >= 3 ? 'become_factory' : 'stand';
  } else if (unit.type === 'factory') kind = 'produce';
  else kind = target && target.owner !== unit.owner ? 'attack' : 'move';
  return { kind, unit, from, to, target: kind === 'attack' ? target : null };
}

/** A CellWar action's words from {@link cwAction}: "infantry #1 attacked the factory at (3, 4)". */
export function cwActionText(act) {
  const type = (u) => t(`cw.type.${u}`);
  return t(`ev.cw.${act.kind}`, {
    unit: t('ev.cw.unit', { type: type(act.unit.type), id: act.unit.id }),
    from: cell(act.from),
    to: cell(act.to),
    target: act.target ? type(act.target.type) : '',
  });
}

/**
 * What an event did, in words, as DOM nodes (may be empty): a Life action (`place` ×3 →
 * "3 cells placed"), a CellWar unit's step (a move, an attack, a fortify... when `before`,
 * the view just before the event, shows the unit; else its arrow), generations run, a
 * join, a removal, the end.
 * @param {{type: string, actor?: number, payload?: object}} e
 * @param {(pid: number) => string} nameOf a player's display name
 * @param {{units?: object[]}|null} [before] the game's view before the event (CellWar)
 * @returns {Node[]}
 */
export function eventDetail(e, nameOf, before = null) {
  const p = e.payload || {};
  const text = (s) => [document.createTextNode(s)];
  switch (e.type) {
    case 'GameCreated': {
      const c = p.config || {};
      const kind = t(`kind.${p.kind}`);
      return text(c.width ? t('ev.created', { kind, width: c.width, height: c.height, players: c.players ?? 1 }) : kind);
    }
    case 'GameForked':
      return tNodes('ev.forked', { name: p.from_game || '?', seq: p.from_seq ?? '?' });
    case 'PlayerJoined':
      return tNodes('ev.joined', { name: p.name ?? nameOf(p.player_id) });
    case 'GenerationsTicked':
      return tNodes('ev.generations', { n: p.count ?? 0 }, { plural: true });
    case 'ControlChanged':
    case 'ActionApplied': {
      const a = p.action || {};
      if (a.type === 'place') return tNodes('ev.place', { n: (a.cells || []).length }, { plural: true });
      if (a.type === 'erase') return tNodes('ev.erase', { n: (a.cells || []).length }, { plural: true });
      if (a.type === 'stamp') {
        return a.pattern ? tNodes('ev.stamp', { name: patternName({ id: a.pattern, name: a.pattern.replace(/_/g, ' ') }), x: a.x, y: a.y }) : text(t('ev.stampRle', { x: a.x, y: a.y }));
      }
      if (a.type === 'speed') return text(t('ev.speed', { n: a.multiplier }));
      if (a.type) {
        const key = `ev.action.${a.type}`;
        const s = t(key);
        return text(s === key ? t('ev.action') : s);
      }
      if ('dx' in a) {
        const act = before ? cwAction(before.units, a) : null;
        if (act) return text(cwActionText(act));
        const who = 'unit_id' in a ? t('ev.unit', { id: a.unit_id }) : t('ev.someUnit');
        const where = `${p.from ? ` ${cell(p.from)}` : ''}${p.to ? ` → ${cell(p.to)}` : ''}`;
        return text(`${who} ${arrow(a.dx, a.dy)}${where}`);
      }
      return [];
    }
    case 'TurnEnded':
      return e.actor ? tNodes('ev.turnEnded', { name: nameOf(e.actor) }) : [];
    case 'TurnTimedOut':
      return e.actor ? tNodes('ev.timedOut', { name: nameOf(e.actor) }) : [];
    case 'PlayerRemoved': {
      const key = { disconnected: 'ev.removed.disconnected', left: 'ev.removed.left' }[p.reason] || 'ev.removed';
      return tNodes(key, { name: nameOf(p.player_id) });
    }
    case 'RolledBack':
      return text(t('ev.rolledBack', { seq: p.to_seq ?? '?' }));
    case 'GameFinished':
      if (p.result === 'draw') return text(t('winner.draw'));
      if (p.result === 'loss') return text(t('camp.loss'));
      return p.winner ? tNodes('ev.winner', { name: nameOf(p.winner) }) : [];
    default:
      return [];
  }
}
