// Entry point: preferences, screen switching, starting and resuming hot-seat games.

import { ApiError } from './api.js';
import { createHotseatGame, HotseatGame } from './hotseat.js';
import { setLang, t } from './i18n.js';
import { loadGame, loadPrefs, patchGame, saveGame, savePrefs } from './storage.js';
import { confirmDialog, hideToast, toast } from './screens/dialogs.js';
import { GameScreen } from './screens/game.js';
import { initSetupScreen } from './screens/setup.js';
import { initStartScreen } from './screens/start.js';

const SCREENS = ['start', 'setup', 'game'];
let current = null;

function show(name) {
  for (const s of SCREENS) document.getElementById(`screen-${s}`).hidden = s !== name;
  current = name;
  document.body.dataset.screen = name;
  if (name === 'start') start.show();
  if (name === 'setup') setup.show();
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme === 'light' ? 'light' : 'dark';
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
  async openSetup() {
    if (hasUnfinishedSave() && !(await confirmDialog(t('setup.confirmReplace')))) return;
    show('setup');
  },
  back() {
    show('start');
  },
  /** Create a new hot-seat game with this config and show it. */
  async start(config) {
    let save;
    try {
      save = await createHotseatGame(config, [t('player.1'), t('player.2')]);
    } catch (err) {
      toast(t('error.generic', { message: err.message }));
      return;
    }
    saveGame(save);
    await app.play(save);
  },
  async rematch(config) {
    game.detach();
    await app.start(config);
  },
  /** Load a saved game into the game screen; back to the menu if it is gone. */
  async play(save) {
    const g = new HotseatGame(save);
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
    game.attach(g, { handover: !!save.handover && g.phase === 'placement' && g.actingPid() === 1 });
  },
  continueGame() {
    const save = loadGame();
    if (save) app.play(save);
    else show('start');
  },
  /** Leave the game screen; an unfinished game stays saved ("Continue game"). */
  toMenu({ finished = false } = {}) {
    if (finished) saveGame(null);
    else patchGame({ suspended: true });
    game.detach();
    show('start');
  },
};

const prefs = loadPrefs();
applyTheme(prefs.theme);
setLang(prefs.lang);
const start = initStartScreen(app);
const setup = initSetupScreen(app);
const game = new GameScreen(app);

// Test and debugging hook (read-only).
window.cellwar = {
  snapshot: () => game.snapshot(),
  screen: () => current,
};

const saved = loadGame();
if (saved && !saved.suspended) app.play(saved);
else show('start');
