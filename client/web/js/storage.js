// localStorage persistence: preferences and the current (resumable) game.
// Broken or old data is ignored (the app then starts at the menu).

const KEY = 'cellwar.v1';

const DEFAULT_PREFS = {
  theme: 'dark',
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

/** Preferences merged over the defaults. */
export function loadPrefs() {
  const p = readAll().prefs;
  return { ...DEFAULT_PREFS, ...(p && typeof p === 'object' ? p : {}) };
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
  if (!g || typeof g !== 'object' || typeof g.gameId !== 'string' || !g.tokens || typeof g.tokens !== 'object') {
    return null;
  }
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
