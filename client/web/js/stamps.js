// Stamps (the pattern library, docs/playing.md "Life"): the catalogue from GET /patterns,
// rotation on the client (the same as the server's: the live box turned `rotation` quarter
// turns clockwise, its top-left at the click) and the cells a stamp would place.

import { getLang } from './i18n.js';

/** The five categories in display order (GET /patterns `categories`). */
export const CATEGORIES = ['still_lifes', 'oscillators', 'spaceships', 'methuselahs', 'guns'];

const RU_NAMES = {
  block: 'Блок',
  beehive: 'Улей',
  tub: 'Ванна',
  boat: 'Лодка',
  ship: 'Кораблик',
  loaf: 'Каравай',
  eater: 'Пожиратель',
  pond: 'Пруд',
  aircraft_carrier: 'Авианосец',
  long_boat: 'Длинная лодка',
  canoe: 'Каноэ',
  blinker: 'Мигалка',
  toad: 'Жаба',
  beacon: 'Маяк',
  clock: 'Часы',
  pulsar: 'Пульсар',
  pentadecathlon: 'Пентадекатлон',
  glider: 'Глайдер',
  lwss: 'LWSS',
  mwss: 'MWSS',
  hwss: 'HWSS',
  loafer: 'Loafer',
  r_pentomino: 'R-пентамино',
  acorn: 'Жёлудь',
  diehard: 'Diehard',
  thunderbird: 'Громовая птица',
  rabbits: 'Кролики',
  gosper_glider_gun: 'Ружьё Госпера',
  simkin_glider_gun: 'Ружьё Симкина',
};

let catalogue = null; // Promise<{categories, patterns: Map<id, pattern>} | null>

/**
 * The pattern catalogue (fetched once). Resolves null when the server has none, so the
 * toolbar simply shows no pattern picker.
 */
export function loadPatterns() {
  if (!catalogue) {
    catalogue = fetch('/patterns', { headers: { Accept: 'application/json' } })
      .then((res) => (res.ok ? res.json() : null))
      .then((data) => {
        if (!data || !Array.isArray(data.patterns)) return null;
        const patterns = new Map();
        for (const p of data.patterns) {
          if (p && typeof p.id === 'string' && Array.isArray(p.cells)) patterns.set(p.id, p);
        }
        const categories = {};
        for (const cat of CATEGORIES) {
          const ids = (data.categories && data.categories[cat])
            || [...patterns.values()].filter((p) => p.category === cat).map((p) => p.id);
          categories[cat] = ids.filter((id) => patterns.has(id));
        }
        return { categories, patterns };
      })
      .catch(() => {
        catalogue = null; // try again next time
        return null;
      });
  }
  return catalogue;
}

/** The display name of a pattern in the current language. */
export function patternName(p) {
  if (getLang() === 'ru' && RU_NAMES[p.id]) return RU_NAMES[p.id];
  return p.name || p.id;
}

/**
 * The live cells of a pattern turned `rotation` quarter turns clockwise, moved so that
 * the top-left of their bounding box is (0, 0). Returns {cells, width, height}.
 */
export function rotatePattern(cells, rotation) {
  let pts = cells.map(([x, y]) => [x, y]);
  const r = ((rotation % 4) + 4) % 4;
  for (let k = 0; k < r; k++) {
    const maxY = pts.reduce((m, p) => Math.max(m, p[1]), 0);
    pts = pts.map(([x, y]) => [maxY - y, x]); // clockwise: (x, y) → (h-1-y, x)
  }
  if (!pts.length) return { cells: [], width: 0, height: 0 };
  const minX = Math.min(...pts.map((p) => p[0]));
  const minY = Math.min(...pts.map((p) => p[1]));
  pts = pts.map(([x, y]) => [x - minX, y - minY]);
  return {
    cells: pts,
    width: Math.max(...pts.map((p) => p[0])) + 1,
    height: Math.max(...pts.map((p) => p[1])) + 1,
  };
}

/**
 * Classify the cells of a stamp at (x, y): `place` (inside the zone, dead), `skip`
 * (on a live cell) or `out` (outside the zone or the board).
 * @param {number[][]} cells rotated stamp cells
 * @param {number[]|null} zone [x0, y0, x1, y1)
 * @param {(i: number) => number} stateAt state of board cell index i
 */
export function classifyStamp(cells, x, y, zone, width, height, stateAt) {
  const out = [];
  for (const [dx, dy] of cells) {
    const cx = x + dx;
    const cy = y + dy;
    let kind = 'place';
    if (cx < 0 || cy < 0 || cx >= width || cy >= height) kind = 'off';
    else if (zone && (cx < zone[0] || cx >= zone[2] || cy < zone[1] || cy >= zone[3])) kind = 'out';
    else if (stateAt(cy * width + cx) !== 0) kind = 'skip';
    out.push([cx, cy, kind]);
  }
  return out;
}
