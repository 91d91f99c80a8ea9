// Drawing tools (docs/playing.md): client-side shapes that become `place` / `erase` actions.

/** id → {mode: 'place' | 'erase', size: footprint side in cells, i18n key} */
export const TOOLS = {
  pencil: { mode: 'place', size: 1, label: 'tool.pencil', icon: '✎' },
  brush: { mode: 'place', size: 3, label: 'tool.brush', icon: '▦' },
  eraser: { mode: 'erase', size: 1, label: 'tool.eraser', icon: '⌫' },
  eraser4: { mode: 'erase', size: 4, label: 'tool.eraser4', icon: '⊠' },
};

/**
 * The tool a stroke uses: the chosen one for the left button; for the right button an
 * eraser (keeping the size when an eraser is chosen, else 1×1).
 */
export function strokeTool(toolId, button) {
  const tool = TOOLS[toolId] || TOOLS.pencil;
  if (button === 2) return tool.mode === 'erase' ? tool : TOOLS.eraser;
  return tool;
}

/** The cells [x, y] a square footprint of `size` covers around (x, y) (from x-⌊(size-1)/2⌋). */
export function footprint(x, y, size) {
  const lo = -Math.floor((size - 1) / 2);
  const out = [];
  for (let dy = lo; dy < lo + size; dy++) {
    for (let dx = lo; dx < lo + size; dx++) out.push([x + dx, y + dy]);
  }
  return out;
}

/** Cells on the segment (x0, y0) → (x1, y1) (Bresenham), both ends included. */
export function line(x0, y0, x1, y1) {
  const out = [];
  const dx = Math.abs(x1 - x0);
  const dy = -Math.abs(y1 - y0);
  const sx = x0 < x1 ? 1 : -1;
  const sy = y0 < y1 ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    out.push([x0, y0]);
    if (x0 === x1 && y0 === y1) break;
    const e2 = 2 * err;
    if (e2 >= dy) { err += dy; x0 += sx; }
    if (e2 <= dx) { err += dx; y0 += sy; }
  }
  return out;
}
