// Turn timers (docs/playing.md "Turn timers": config `turn_time_s`, the deadline in the
// view): the view's `turn_deadline` is an ISO 8601 time or epoch seconds (number or numeric
// string); the screen shows a countdown while it is in the future.

/**
 * The deadline as epoch milliseconds, or null when absent or unreadable.
 * @param {string|number|null|undefined} value
 * @returns {?number}
 */
export function deadlineMs(value) {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value * 1000 : null;
  const text = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/** Whole seconds left as "m:ss" (never negative). */
export function formatLeft(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** A countdown element: `set(deadline)` shows it (null hides it); it ticks by itself. */
export class Countdown {
  /** @param {HTMLElement} el  @param {(left: string) => string} label the text shown */
  constructor(el, label = (left) => left) {
    this.el = el;
    this.label = label;
    this.deadline = null;
    this.timer = null;
  }

  /** @param {string|number|null} deadline the view's `turn_deadline` (null: no timer) */
  set(deadline) {
    const ms = deadlineMs(deadline);
    if (ms === this.deadline) return;
    this.deadline = ms;
    clearInterval(this.timer);
    this.timer = null;
    if (ms === null) {
      this.el.hidden = true;
      delete this.el.dataset.left;
      return;
    }
    this._tick();
    this.timer = setInterval(() => this._tick(), 250);
  }

  _tick() {
    const left = this.deadline - Date.now();
    this.el.hidden = false;
    this.el.dataset.left = String(Math.max(0, Math.ceil(left / 1000)));
    this.el.textContent = this.label(formatLeft(left));
    this.el.classList.toggle('urgent', left < 10_000);
    if (left <= 0) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  stop() {
    this.set(null);
  }
}
