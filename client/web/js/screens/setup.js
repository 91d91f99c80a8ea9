// Hot-seat settings: board size preset, torus, budget (preset or any number ≥ 0).

/** "60" → 60×60, "60x100" → width 60, height 100. */
export function parseSize(value) {
  const [w, h] = String(value).split('x').map((n) => parseInt(n, 10));
  const width = Number.isFinite(w) ? w : 60;
  return { width, height: Number.isFinite(h) ? h : width };
}

/**
 * @param {{back: () => void, start: (config: object) => void, prefs: () => object,
 *          savePrefs: (patch: object) => void}} app
 */
export function initSetupScreen(app) {
  const form = document.getElementById('setup-form');
  const size = document.getElementById('setup-size');
  const torus = document.getElementById('setup-torus');
  const budget = document.getElementById('setup-budget');
  const startBtn = document.getElementById('setup-start');
  document.getElementById('setup-back').addEventListener('click', () => app.back());
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const b = Math.max(0, Math.floor(Number(budget.value)));
    if (!Number.isFinite(b)) return;
    app.savePrefs({ size: size.value, torus: torus.checked, budget: b });
    const { width, height } = parseSize(size.value);
    startBtn.disabled = true;
    try {
      await app.start({ width, height, players: 2, budget: b, torus: torus.checked });
    } finally {
      startBtn.disabled = false;
    }
  });
  return {
    show() {
      const p = app.prefs();
      size.value = [...size.options].some((o) => o.value === String(p.size)) ? String(p.size) : '60';
      torus.checked = !!p.torus;
      budget.value = String(Number.isFinite(Number(p.budget)) ? p.budget : 100);
    },
  };
}
