// Shared bits of the mode screens (CellWar, replay, campaign): a message toast and the
// text of an API error.

import { apiErrorText } from './screens/dialogs.js';

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

/** The text of an API error (screens/dialogs.js `apiErrorText`). */
export function errorText(err) {
  return apiErrorText(err);
}

