// Modal confirmation and a short toast message.

import { t } from '../i18n.js';

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

/** Show a message for a few seconds; kind 'error' (default) or 'info'. */
export function toast(text, kind = 'error', ms = 3500) {
  const el = document.getElementById('toast');
  el.textContent = text;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, ms);
}

/** Hide the toast now. */
export function hideToast() {
  clearTimeout(toastTimer);
  document.getElementById('toast').hidden = true;
}
