// Shared bits of the mode screens (CellWar, replay, campaign): a message toast and the
// text of an API error.

import { t } from './i18n.js';

const $ = (id) => document.getElementById(id);

let flashTimer = null;
/** A short message over the mode screens (CellWar, replay, campaign). */
export function flash(text, kind = 'error', ms = 3500) {
  const el = $('modes-toast');
  el.textContent = text;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => { el.hidden = true; }, ms);
}

export function errorText(err) {
  const key = `error.${err.code}`;
  const known = t(key, { message: err.message });
  return known !== key ? known : t('error.generic', { message: `${err.code}: ${err.message}` });
}

