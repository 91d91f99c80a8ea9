// Start screen: description, mode buttons, theme, palette and language.

import { loadGame } from '../storage.js';

/**
 * @param {{openSetup: () => void, continueGame: () => void, setTheme: (t: string) => void,
 *          setLang: (l: string) => void, setPalette: (p: string) => void, prefs: () => object}} app
 */
export function initStartScreen(app) {
  const theme = document.getElementById('pref-theme');
  const lang = document.getElementById('pref-lang');
  const palette = document.getElementById('pref-palette');
  document.getElementById('btn-hotseat').addEventListener('click', () => app.openSetup());
  document.getElementById('btn-online').addEventListener('click', () => app.openSetup('online'));
  document.getElementById('btn-continue').addEventListener('click', () => app.continueGame());
  theme.addEventListener('change', () => app.setTheme(theme.value));
  lang.addEventListener('change', () => app.setLang(lang.value));
  palette.addEventListener('change', () => app.setPalette(palette.value));
  return {
    show() {
      const p = app.prefs();
      theme.value = p.theme;
      lang.value = p.lang;
      palette.value = p.palette;
      document.getElementById('btn-continue').hidden = !loadGame();
    },
  };
}
