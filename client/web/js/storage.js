// localStorage persistence: preferences (theme, palette, language, game settings, tool)
// and the current (resumable) game.
// Broken or old data is ignored (the app then starts at the menu).

const KEY = 'cellwar.v1';

const DEFAULT_PREFS = {
  theme: 'dark',
  palette: 'standard',
  lang: 'en',
  size: '60',
  torus: false,
  budget: 100,
  tool: 'pencil',
};

function readAll() {
  try {
    const data = JSON.parse(localStorage.getItem(KEY) || '{}');
    return data && typeof data === 'object' ? data : {};
  } catch {
    return {};
  }
}

function writeAll(data) {
  try {
    localStorage.setItem(KEY, JSON.stringify(data));
  } catch {
    // storage full or disabled: the game still works, it just won't resume
  }
}

/** The browser's language when we have it (Russian or English). */
function browserLang() {
  const langs = (typeof navigator !== 'undefined' && (navigator.languages || [navigator.language])) || [];
  for (const l of langs) {
    const code = String(l || '').slice(0, 2).toLowerCase();
    if (code === 'ru' || code === 'en') return code;
  }
  return 'en';
}

/** Preferences merged over the defaults (unknown or broken values → defaults). */
export function loadPrefs() {
  const p = readAll().prefs;
  const out = { ...DEFAULT_PREFS, lang: browserLang(), ...(p && typeof p === 'object' && !Array.isArray(p) ? p : {}) };
  if (out.theme !== 'dark' && out.theme !== 'light') out.theme = DEFAULT_PREFS.theme;
  if (out.palette !== 'standard' && out.palette !== 'cb') out.palette = DEFAULT_PREFS.palette;
  if (out.lang !== 'en' && out.lang !== 'ru') out.lang = browserLang();
  if (typeof out.size !== 'string' && typeof out.size !== 'number') out.size = DEFAULT_PREFS.size;
  // A whole number the server takes (0..2^31-1); anything else (an old saved 1e12) → default.
  const budget = Number(out.budget);
  out.budget = Number.isSafeInteger(budget) && budget >= 0 && budget <= 2147483647 ? budget : DEFAULT_PREFS.budget;
  if (out.players !== 2 && out.players !== 4) out.players = 2;
  out.torus = !!out.torus;
  return out;
}

/** Merge a patch into the saved preferences. */
export function savePrefs(patch) {
  const all = readAll();
  all.prefs = { ...loadPrefs(), ...patch };
  writeAll(all);
  return all.prefs;
}

/**
 * The saved game: {mode: 'hotseat', gameId, tokens: {"1": tok, "2": tok}, config,
 * handover?: bool} or null.
 */
export function loadGame() {
  const g = readAll().game;
  if (!g || typeof g !== 'object' || typeof g.gameId !== 'string' || !/^[\w-]{1,64}$/.test(g.gameId)
      || !g.tokens || typeof g.tokens !== 'object' || Array.isArray(g.tokens)) {
    return null;
  }
  if (g.mode !== undefined && typeof g.mode !== 'string') return null;
  const seats = Object.entries(g.tokens);
  if (!seats.length || seats.some(([k, v]) => !/^[1-4]$/.test(k) || typeof v !== 'string' || !v)) return null;
  if (g.config !== undefined && (!g.config || typeof g.config !== 'object')) return null;
  return g;
}

/** Save (or with null, forget) the current game. */
export function saveGame(game) {
  const all = readAll();
  if (game) all.game = game;
  else delete all.game;
  writeAll(all);
}

/** Patch the saved game in place (no-op without one). */
export function patchGame(patch) {
  const g = loadGame();
  if (g) saveGame({ ...g, ...patch });
}
