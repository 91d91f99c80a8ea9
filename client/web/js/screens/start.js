// Start screen: description, mode buttons, theme and language.

import { loadGame } from '../storage.js';

/**
 * @param {{openSetup: () => void, continueGame: () => void, setTheme: (t: string) => void,
 *          setLang: (l: string) => void, prefs: () => object}} app
 */
export function initStartScreen(app) {
  const theme = document.getElementById('pref-theme');
  const lang = document.getElementById('pref-lang');
  document.getElementById('btn-hotseat').addEventListener('click', () => app.openSetup());
  document.getElementById('btn-online').addEventListener('click', () => app.openSetup('online'));
  document.getElementById('btn-continue').addEventListener('click', () => app.continueGame());
  theme.addEventListener('change', () => app.setTheme(theme.value));
  lang.addEventListener('change', () => app.setLang(lang.value));
  return {
    show() {
      const p = app.prefs();
      theme.value = p.theme;
      lang.value = p.lang;
      document.getElementById('btn-continue').hidden = !loadGame();
    },
  };
}
