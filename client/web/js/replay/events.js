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
 * What an event did, in words, as DOM nodes (may be empty): a Life action (`place` ×3 →
 * "3 cells placed"), a CellWar unit's step, generations run, a join, a removal, the end.
 * @param {{type: string, actor?: number, payload?: object}} e
 * @param {(pid: number) => string} nameOf a player's display name
 * @returns {Node[]}
 */
export function eventDetail(e, nameOf) {
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
