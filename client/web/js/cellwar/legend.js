// CellWar's legend: the unit types as the board draws them and what each action does
// (the highlight colours of the targets), in the current language.

import { t } from '../i18n.js';
import { drawUnit } from './render.js';

/** Fill `list` with the legend; `board` gives the colours (a CellWarBoard). */
export function buildLegend(list, board) {
  const icon = (draw) => {
    const c = document.createElement('canvas');
    const dpr = window.devicePixelRatio || 1;
    c.width = 22 * dpr;
    c.height = 22 * dpr;
    c.setAttribute('aria-hidden', 'true');
    draw(c.getContext('2d'), 22 * dpr);
    return c;
  };
  const unit = (type, standing) => icon((ctx, s) => drawUnit(ctx, { type, standing }, s / 2, s / 2, s,
    { fill: board.players[1], outline: board.colors.outline, text: board.colors.text }));
  const target = (cls) => icon((ctx, s) => {
    ctx.globalAlpha = 0.35;
    ctx.fillStyle = board.colors[cls];
    ctx.fillRect(0, 0, s, s);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = board.colors[cls];
    ctx.lineWidth = s / 8;
    ctx.strokeRect(s / 16, s / 16, s - s / 8, s - s / 8);
  });
  const fog = icon((ctx, s) => {
    ctx.fillStyle = board.colors.fog;
    ctx.fillRect(0, 0, s, s);
    ctx.strokeStyle = board.colors.hatch;
    ctx.lineWidth = s / 12;
    for (let d = -s; d < s; d += s / 4) {
      ctx.beginPath();
      ctx.moveTo(d, s);
      ctx.lineTo(d + s, 0);
      ctx.stroke();
    }
  });
  const rows = [
    ['infantry', unit('infantry')],
    ['fortification', unit('fortification', 2)],
    ['factory', unit('factory')],
    ['move', target('move')],
    ['attack', target('attack')],
    ['stay', target('stay')],
    ['produce', target('produce')],
    ['fog', fog],
  ];
  list.replaceChildren(...rows.map(([key, pic]) => {
    const li = document.createElement('li');
    li.dataset.key = key;
    const text = document.createElement('span');
    text.textContent = t(`cw.legend.${key}`);
    li.append(pic, text);
    return li;
  }));
}
