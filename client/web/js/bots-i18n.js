// Texts of the computer players (bots.js, matchmaking "Play the computer"), en and ru,
// merged into i18n.js by `addStrings` (docs/bot-seats.md).

import { addStrings } from './i18n.js';

addStrings('en', {
  'bots.label': 'Computer player:',
  'bots.add': 'Add a bot',
  'bots.addSeat': 'Add a bot to seat {n}',
  'bots.adding': 'Adding…',
  'bots.added': 'A computer player took a seat.',
  'bots.policy.trained': 'Trained (strongest)',
  'bots.policy.heuristic': 'Heuristic',
  'bots.policy.search': 'Search (slow)',
  'bots.policy.random': 'Random (easiest)',
  'mm.computer': 'Play the computer',
  'mm.computerHint': 'No waiting: computer players take the other seats at once.',
});

addStrings('ru', {
  'bots.label': 'Компьютерный игрок:',
  'bots.add': 'Добавить бота',
  'bots.addSeat': 'Добавить бота на место {n}',
  'bots.adding': 'Добавляем…',
  'bots.added': 'Компьютерный игрок занял место.',
  'bots.policy.trained': 'Обученный (сильнейший)',
  'bots.policy.heuristic': 'Эвристический',
  'bots.policy.search': 'Поиск (медленный)',
  'bots.policy.random': 'Случайный (самый лёгкий)',
  'mm.computer': 'Играть с компьютером',
  'mm.computerHint': 'Без ожидания: компьютерные игроки сразу займут остальные места.',
});
