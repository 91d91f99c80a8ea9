// Modal confirmation and a short toast message.

import { t } from '../i18n.js';
import '../errors-i18n.js';

/** Ask a yes/no question in the confirm overlay; resolves true for "Yes". */
export function confirmDialog(text) {
  const box = document.getElementById('overlay-confirm');
  const yes = document.getElementById('confirm-yes');
  const no = document.getElementById('confirm-no');
  document.getElementById('confirm-text').textContent = text;
  yes.textContent = t('confirm.yes');
  no.textContent = t('confirm.no');
  box.hidden = false;
  return new Promise((resolve) => {
    const done = (answer) => {
      box.hidden = true;
      yes.removeEventListener('click', onYes);
      no.removeEventListener('click', onNo);
      document.removeEventListener('keydown', onKey, true);
      resolve(answer);
    };
    const onYes = () => done(true);
    const onNo = () => done(false);
    const onKey = (e) => {
      if (e.key === 'Escape') done(false);
      if (e.key === ' ') { // space does nothing under the dialog (no pause, no accidental "Yes")
        e.preventDefault();
        e.stopPropagation();
      }
    };
    yes.addEventListener('click', onYes);
    no.addEventListener('click', onNo);
    document.addEventListener('keydown', onKey, true);
    yes.focus();
  });
}

/** Is a modal overlay open (space and shortcuts are ignored then)? */
export function modalOpen() {
  const help = document.getElementById('overlay-help');
  return !document.getElementById('overlay-confirm').hidden || (!!help && !help.hidden);
}

let toastTimer = null;

/**
 * Show a message for a few seconds; kind 'error' (default) or 'info'. The toast lies
 * outside every screen (visible on whichever is shown); a click dismisses it.
 */
export function toast(text, kind = 'error', ms = 3500) {
  const el = document.getElementById('toast');
  el.textContent = text;
  el.className = `toast ${kind}`;
  el.dataset.kind = kind;
  el.hidden = false;
  el.onclick = hideToast;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, ms);
}

/** The code of an answer without the API's error body (a proxy's page), by HTTP status. */
const CODE_BY_STATUS = { 404: 'GAME_NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE', 429: 'RATE_LIMITED', 500: 'INTERNAL', 502: 'UNAVAILABLE', 503: 'UNAVAILABLE', 504: 'UNAVAILABLE' };

/**
 * The text of an API error in the player's language: the machine code's text
 * (`error.<CODE>`: i18n.js, errors-i18n.js, modes-i18n.js), else by HTTP status, else
 * "Error: CODE: message".
 * @param {{code?: string, status?: number, message?: string}} err an ApiError
 * @returns {string}
 */
export function apiErrorText(err) {
  const code = err && err.code;
  for (const c of [code, err && CODE_BY_STATUS[err.status]]) {
    const key = `error.${c}`;
    const known = c ? t(key, { message: err.message }) : key;
    if (known !== key) return known;
  }
  return t('error.generic', { message: code ? `${code}: ${err.message}` : String(err && err.message) });
}

/** How to show an API error: 'info' for a refused no-op (NO_CHANGE: nothing was lost),
 * else 'error'. */
export function errorKind(err) {
  return err && err.code === 'NO_CHANGE' ? 'info' : 'error';
}

/** Hide the toast now. */
export function hideToast() {
  clearTimeout(toastTimer);
  document.getElementById('toast').hidden = true;
}
