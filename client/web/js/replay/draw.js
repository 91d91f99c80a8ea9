// One view of a finished or watched game drawn on a board, with its stats line: Life and
// campaign views by BoardView, CellWar views by CellWarBoard. Shared by the replay viewer
// and the delayed spectator screen (js/lobby/watch.js).

import { t, tn, tNodes } from '../i18n.js';
import { decodeBoard } from '../rle.js';

/**
 * Draw `view` and fill `statsEl` with "generation · each player's cells · phase" (Life)
 * or "round · each player's units · phase" (CellWar).
 * @param {object} view a view of GET /replay or of a spectator's stream
 * @param {{life: object, cw: object, lifeCanvas: HTMLElement, cwCanvas: HTMLElement,
 *          statsEl: HTMLElement, nameOf: (pid: number) => string}} where
 */
export function drawView(view, { life, cw, lifeCanvas, cwCanvas, statsEl, nameOf }) {
  const isCw = view.kind === 'cellwar';
  cwCanvas.hidden = !isCw;
  lifeCanvas.hidden = isCw;
  const parts = []; // Node[] per item, joined by " · "
  const txt = (s) => [document.createTextNode(s)];
  if (isCw) {
    cw.setView(view, {});
    cw.fit();
    if (view.phase === 'playing') parts.push(tNodes('replay.round', { round: view.round, name: nameOf(view.turn) }));
    for (const p of view.players || []) {
      const units = Number.isFinite(p.units) ? tn('cw.unitsCount', p.units) : t('stats.hidden');
      parts.push(tNodes('replay.player', { name: nameOf(p.id), what: units + (p.out ? ` (${t('cw.out')})` : '') }));
    }
  } else {
    const cells = decodeBoard(view.board || '', view.width, view.height);
    life.setBoard(cells, view.width, view.height);
    life.setZone(null);
    life.setInteractive(false);
    life.fit();
    parts.push(txt(t('replay.generation', { n: view.generation ?? 0 })));
    for (const p of view.players || []) {
      const what = Number.isFinite(p.cells) ? tn('stats.cells', p.cells) : t('stats.hidden');
      parts.push(tNodes('replay.player', { name: nameOf(p.id), what }));
    }
    if (view.kind === 'campaign' && Number.isFinite(view.enemy_cells)) {
      parts.push(tNodes('replay.player', { name: t('camp.enemyName'), what: tn('stats.cells', view.enemy_cells) }));
    }
  }
  parts.push(txt(t('replay.phase', { phase: t(`phase.name.${view.phase}`) })));
  statsEl.replaceChildren();
  parts.forEach((nodes, i) => {
    if (i) statsEl.append(' · ');
    statsEl.append(...nodes);
  });
  statsEl.dataset.generation = String(view.generation ?? '');
}
