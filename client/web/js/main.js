// Entry point: preferences, screen switching, starting and resuming hot-seat games.

import { ApiError } from './api.js';
import { createHotseatGame, HotseatGame } from './hotseat.js';
import { clearJoinFromUrl, createOnlineGame, joinIdFromUrl, joinOnlineGame, OnlineGame } from './online.js';
import { setLang, t } from './i18n.js';
import { loadGame, loadPrefs, patchGame, saveGame, savePrefs } from './storage.js';
import { apiErrorText, confirmDialog, hideToast, toast } from './screens/dialogs.js';
import { GameScreen } from './screens/game.js';
import { initSetupScreen } from './screens/setup.js';
import { initStartScreen } from './screens/start.js';
import { initModes } from './modes.js';
import './play-i18n.js';

const SCREENS = ['start', 'setup', 'game'];
let current = null;
let modes = null; // CellWar, replay and campaign screens (js/modes.js)

function show(name) {
  // Leaving the game screen some other way than "Menu" (a shared link opened in this
  // tab): the game stays saved for "Continue game", its streams close.
  if (current === 'game' && name !== 'game' && game.game) {
    patchGame({ suspended: true });
    game.detach();
  }
  for (const s of SCREENS) document.getElementById(`screen-${s}`).hidden = s !== name;
  if (modes) modes.show(name); // hides the mode screens that are not `name`
  current = name;
  document.body.dataset.screen = name;
  if (name === 'start') start.show();
  if (name === 'setup') setup.show();
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme === 'light' ? 'light' : 'dark';
}

/** The board palette: 'standard' or 'cb' (colour-blind safe, marked cells). */
function applyPalette(palette) {
  document.documentElement.dataset.palette = palette === 'cb' ? 'cb' : 'standard';
}

/** A saved game that has not been finished (the menu offers "Continue game"). */
function hasUnfinishedSave() {
  return !!loadGame();
}

const app = {
  prefs: loadPrefs,
  savePrefs,
  setTheme(theme) {
    savePrefs({ theme });
    applyTheme(theme);
    game.refreshStyle();
  },
  setLang(lang) {
    savePrefs({ lang });
    setLang(lang);
    game.refreshStyle();
  },
  setPalette(palette) {
    savePrefs({ palette });
    applyPalette(palette);
    game.refreshStyle();
  },
  /** @param {'hotseat'|'online'} [mode] */
  async openSetup(mode = 'hotseat') {
    if (hasUnfinishedSave() && !(await confirmDialog(t('setup.confirmReplace')))) return;
    show('setup');
    setup.show(mode);
  },
  back() {
    show('start');
  },
  /**
   * Create a new hot-seat (or online: seat 1 here, a share link for the others) game.
   * Any error (422 INVALID_CONFIG, 409, 503, network) is shown in the toast, which is
   * visible on every screen; `onCreated` runs only once the game exists.
   */
  async start(config, mode = 'hotseat', { onCreated = () => {} } = {}) {
    let save;
    try {
      save = mode === 'online'
        ? await createOnlineGame(config, t('player.1'))
        : await createHotseatGame(config, [1, 2, 3, 4].map((i) => t(`player.${i}`)));
    } catch (err) {
      toast(t('setup.createFailed', { message: apiErrorText(err) }), 'error', 8000);
      return false;
    }
    onCreated();
    saveGame(save);
    await app.play(save);
    return true;
  },
  async rematch(config, mode = 'hotseat') {
    game.detach();
    await app.start(config, mode);
  },
  /** Take a seat of a shared game (a `#join=<id>` link); resumes it when this browser already plays it. */
  async joinByLink(gameId) {
    const saved = loadGame();
    if (saved && saved.gameId === gameId) {
      await app.play(saved);
      return;
    }
    // On failure stay on the screen already shown (a link opened in a running tab), or
    // land on the start screen (a link that opened the page); the toast shows on both.
    const stay = () => { if (!current) show('start'); };
    if (saved && !(await confirmDialog(t('online.joinConfirm')))) {
      stay();
      return;
    }
    let save;
    try {
      save = await joinOnlineGame(gameId, t('player.2'));
    } catch (err) {
      toast(t('online.joinFailed', { message: apiErrorText(err) }), 'error', 10000);
      stay();
      return;
    }
    saveGame(save);
    await app.play(save);
  },
  /** Load a saved game into the game screen; back to the menu if it is gone. */
  async play(save) {
    const g = save.mode === 'online' ? new OnlineGame(save) : new HotseatGame(save);
    try {
      await g.start();
    } catch (err) {
      g.stop();
      if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
        saveGame(null);
        toast(t('error.gone'));
      } else {
        toast(t('error.network', { message: err.message }));
      }
      show('start');
      return;
    }
    patchGame({ suspended: false });
    hideToast();
    show('game');
    const handoverPid = save.handover === true ? 1 : Number(save.handover) || 0;
    game.attach(g, { handover: !g.online && handoverPid > 0 && g.phase === 'placement' && g.actingPid() === handoverPid });
  },
  continueGame() {
    const save = loadGame();
    if (save) app.play(save);
    else show('start');
  },
  /** Leave the game screen; an unfinished game stays saved ("Continue game"). */
  toMenu({ finished = false } = {}) {
    if (finished && (game.game || !current || current === 'game')) saveGame(null);
    else patchGame({ suspended: true });
    game.detach();
    show('start');
  },
};

const prefs = loadPrefs();
applyTheme(prefs.theme);
applyPalette(prefs.palette);
setLang(prefs.lang);
const start = initStartScreen(app);
const setup = initSetupScreen(app);
const game = new GameScreen(app);
modes = initModes({
  show,
  toMenu: () => app.toMenu({ finished: true }),
  lifeGameId: () => game.game && game.game.gameId,
  playLife: (save) => {
    saveGame(save);
    app.play(save);
  },
});

// Test and debugging hook (read-only).
window.cellwar = {
  snapshot: () => game.snapshot(),
  screen: () => current,
};

/** The start screen's controls work from now on (index.html keeps them inert until
 * this module has wired them); a reload after a failed load counts from zero again. */
function bootDone() {
  for (const el of document.querySelectorAll('[data-boot]')) el.inert = false;
  try { sessionStorage.removeItem('cellwar.boot.retries'); } catch { /* no storage */ }
}

const joinId = joinIdFromUrl();
const saved = loadGame();
// A share link typed or pasted into an open tab only changes the hash: act on it too
// (`#join=` here, `#cellwar=` / `#replay=` in modes.js).
window.addEventListener('hashchange', () => {
  const id = joinIdFromUrl();
  if (!id) return;
  clearJoinFromUrl();
  app.joinByLink(id);
});
// The page shows the start screen by itself (index.html); a game being joined or
// resumed replaces it as soon as it is loaded (until then nothing is shown, as the
// start screen's buttons would be taken away under the finger).
if (joinId) {
  clearJoinFromUrl();
  document.getElementById('screen-start').hidden = true;
  app.joinByLink(joinId);
} else if (saved && !saved.suspended && saved.mode !== undefined && saved.mode !== 'hotseat' && saved.mode !== 'online') {
  show('start'); // a save of another mode: its own screen resumes it
} else if (saved && !saved.suspended) {
  document.getElementById('screen-start').hidden = true;
  app.play(saved);
} else show('start');
bootDone();
