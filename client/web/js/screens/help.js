// "How to play" dialog of Life (rules in the current language, from i18n `help.rules`).

import { richNodes, t } from '../i18n.js';

const $ = (id) => document.getElementById(id);

/** Open the rules dialog; Escape, the button or a click beside the card closes it. */
export function openHelp() {
  const box = $('overlay-help');
  const body = $('help-body');
  body.replaceChildren(...[...t('help.rules').split('\n\n'), t('tool.keys')].map((text) => {
    const p = document.createElement('p');
    p.append(...richNodes(text));
    return p;
  }));
  box.hidden = false;
  const close = () => {
    box.hidden = true;
    document.removeEventListener('keydown', onKey, true);
    box.removeEventListener('click', onClick);
    $('help-close').removeEventListener('click', close);
  };
  const onKey = (e) => {
    if (e.key === 'Escape') close();
    if (e.key === ' ') { // space never pauses the game behind the dialog
      e.preventDefault();
      e.stopPropagation();
    }
  };
  const onClick = (e) => {
    if (e.target === box) close();
  };
  document.addEventListener('keydown', onKey, true);
  box.addEventListener('click', onClick);
  $('help-close').addEventListener('click', close);
  $('help-close').focus();
}

/** Is the rules dialog open? */
export function helpOpen() {
  const box = $('overlay-help');
  return !!box && !box.hidden;
}
