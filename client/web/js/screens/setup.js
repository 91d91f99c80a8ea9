// Life game settings (hot-seat or online): board size preset, torus, budget (preset or
// any whole number 0..2147483647, checked here with a message under the field), players
// 2 or 4, and the "How to play" dialog. The settings are saved to the preferences only
// once the server created the game (an invalid value never is).

import { t } from '../i18n.js';
import { openHelp } from './help.js';

/** The largest budget the server takes (an int32, as on the wire). */
export const MAX_BUDGET = 2147483647;

/** A budget field value as a whole number in 0..MAX_BUDGET, or null. */
export function parseBudget(value) {
  const text = String(value ?? '').trim();
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n <= MAX_BUDGET ? n : null;
}

/** "60" → 60×60, "60x100" → width 60, height 100. */
export function parseSize(value) {
  const [w, h] = String(value).split('x').map((n) => parseInt(n, 10));
  const width = Number.isFinite(w) ? w : 60;
  return { width, height: Number.isFinite(h) ? h : width };
}

/**
 * @param {{back: () => void, start: (config: object, mode: string) => void,
 *          prefs: () => object, savePrefs: (patch: object) => void}} app
 */
export function initSetupScreen(app) {
  const form = document.getElementById('setup-form');
  const size = document.getElementById('setup-size');
  const torus = document.getElementById('setup-torus');
  const budget = document.getElementById('setup-budget');
  const players = document.getElementById('setup-players');
  const startBtn = document.getElementById('setup-start');
  const title = document.getElementById('setup-title');
  let mode = 'hotseat';
  document.getElementById('setup-back').addEventListener('click', () => app.back());
  document.getElementById('setup-help').addEventListener('click', () => openHelp());
  const labels = () => {
    title.dataset.i18n = mode === 'online' ? 'setup.title.online' : 'setup.title';
    title.textContent = t(title.dataset.i18n);
    startBtn.dataset.i18n = mode === 'online' ? 'setup.start.online' : 'setup.start';
    startBtn.textContent = t(startBtn.dataset.i18n);
    form.dataset.mode = mode;
  };
  const budgetError = document.getElementById('setup-budget-error');
  /** Show or clear the message under the budget field; returns the valid budget or null. */
  const checkBudget = () => {
    const b = budget.validity.badInput ? null : parseBudget(budget.value);
    budget.setAttribute('aria-invalid', String(b === null));
    budgetError.textContent = b === null ? t('setup.budget.invalid') : '';
    budgetError.hidden = b !== null;
    return b;
  };
  budget.addEventListener('input', checkBudget);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (startBtn.disabled) return;
    const b = checkBudget();
    if (b === null) {
      budget.focus();
      return;
    }
    const n = players.value === '4' ? 4 : 2;
    const prefs = { size: size.value, torus: torus.checked, budget: b, players: n };
    const { width, height } = parseSize(size.value);
    startBtn.disabled = true;
    try {
      await app.start({ width, height, players: n, budget: b, torus: torus.checked }, mode,
        { onCreated: () => app.savePrefs(prefs) });
    } finally {
      startBtn.disabled = false;
    }
  });
  return {
    /** @param {'hotseat'|'online'} m */
    show(m = mode) {
      mode = m === 'online' ? 'online' : 'hotseat';
      labels();
      const p = app.prefs();
      size.value = [...size.options].some((o) => o.value === String(p.size)) ? String(p.size) : '60';
      torus.checked = !!p.torus;
      budget.value = String(parseBudget(p.budget) ?? 100);
      players.value = String(p.players === 4 ? 4 : 2);
      checkBudget();
    },
    get mode() {
      return mode;
    },
  };
}
