// Screen-reader announcements: one polite live region (#sr-status) for what changes
// without a focus move (the phase, whose turn it is, the result). Repeats are dropped.

let last = '';

/** Announce `text` once (the same text twice in a row is said once). */
export function announce(text) {
  const el = document.getElementById('sr-status');
  if (!el || !text || text === last) return;
  last = text;
  el.textContent = text;
}
