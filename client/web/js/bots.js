// "Add a bot": while an online game waits for players, one button per free seat asks
// the server for a computer player (POST /game/{id}/bots with this seat's token; the
// platform's bot runner joins and plays through the public API, docs/bot-seats.md).
// Used by the online Life game (screens/game.js), the online CellWar game
// (cellwar/screen.js) and quick match's "Play the computer" (matchmaking/screen.js).

import './bots-i18n.js';
import { api } from './api.js';
import { getLang, t } from './i18n.js';
import { apiErrorText, errorKind, toast } from './screens/dialogs.js';

/** The policies offered per game kind, strongest first (client/seats/runner.py). */
export const BOT_POLICIES = {
  life: ['heuristic', 'random'],
  cellwar: ['trained', 'heuristic', 'search', 'random'],
};

/**
 * Show the "Add a bot" controls of a waiting game in `box` (hidden when no seat is free).
 * Re-renders only when the game, the free seats or the language change, so a choice in
 * the select survives the views that arrive meanwhile.
 * @param {HTMLElement} box
 * @param {{kind: 'life'|'cellwar', gameId: string, token: string, taken: number, seats: number}} game
 */
export function renderAddBot(box, { kind, gameId, token, taken, seats }) {
  const free = Math.max(0, seats - taken);
  box.hidden = free === 0 || !token;
  if (box.hidden) return;
  const key = `${gameId}|${taken}|${seats}|${getLang()}`;
  if (box.dataset.key === key) return;
  const previous = box.querySelector('select');
  const chosen = previous ? previous.value : '';
  box.dataset.key = key;
  const id = `${box.id}-policy`;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = t('bots.label');
  const select = document.createElement('select');
  select.id = id;
  select.dataset.testid = `${box.id}-policy`;
  for (const policy of BOT_POLICIES[kind] || BOT_POLICIES.life) {
    const option = document.createElement('option');
    option.value = policy;
    option.textContent = t(`bots.policy.${policy}`);
    select.append(option);
  }
  if (chosen && [...select.options].some((o) => o.value === chosen)) select.value = chosen;
  const buttons = [];
  for (let seat = taken + 1; seat <= seats; seat += 1) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'add-bot';
    button.dataset.testid = 'add-bot';
    button.dataset.seat = String(seat);
    button.textContent = free > 1 ? t('bots.addSeat', { n: seat }) : t('bots.add');
    button.addEventListener('click', async () => {
      for (const b of buttons) b.disabled = true;
      button.textContent = t('bots.adding');
      try {
        await addBot(gameId, token, select.value);
        toast(t('bots.added'), 'info');
      } catch (err) {
        toast(apiErrorText(err), errorKind(err));
        box.dataset.key = ''; // draw the buttons again
        renderAddBot(box, { kind, gameId, token, taken, seats });
      }
    });
    buttons.push(button);
  }
  box.replaceChildren(label, select, ...buttons);
}

/** POST /game/{id}/bots → {game_id, player_id, policy, name}; rejects with an ApiError. */
export function addBot(gameId, token, policy) {
  return api.addBot(gameId, token, policy);
}
