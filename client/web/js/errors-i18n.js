// The texts of the API's machine codes (proto/cellwar/v1/codes.py ErrorCode, and the
// gateway's own: gateway/errors.py Code, and ERROR), en and ru, merged into i18n.js by
// `addStrings`. `apiErrorText` (screens/dialogs.js) looks them up as `error.<CODE>`;
// tests/browser/test_error_texts.py fails on a code of the enum that has no text here,
// in i18n.js or in modes-i18n.js. The Russian texts carry no server message (it is
// English).

import { addStrings } from './i18n.js';

addStrings('en', {
  'error.MALFORMED': 'The server could not read this request.',
  'error.IDEMPOTENCY_KEY_REUSED': 'This request was already sent with other contents. Try again.',
  'error.OUT_OF_ZONE': 'Outside your zone: you may only draw in your own zone.',
  'error.BUDGET_EXCEEDED': 'Not enough budget left for that.',
  'error.WRONG_PHASE': 'Not possible in this phase of the game.',
  'error.GAME_FINISHED': 'The game is already over.',
  'error.NO_CHANGE': 'Nothing to do: that would change nothing.',
  'error.UNKNOWN_PLAYER': 'This player is not in the game.',
  'error.LEVEL_LOCKED': 'This level is still locked: win the levels before it first.',
  'error.ALREADY_QUEUED': 'You are already waiting for a match.',
  'error.ALREADY_MATCHED': 'This ticket has already found its game.',
  'error.PROFILE_NOT_FOUND': 'Your campaign profile no longer exists.',
  'error.TICKET_NOT_FOUND': 'The match ticket no longer exists.',
  'error.UNAUTHORIZED': 'Your seat was not recognised (the game may be gone).',
  'error.FORBIDDEN': 'You may not do that in this game.',
  'error.CONFLICT': 'The game changed at the same moment. Try again.',
  'error.RATE_LIMITED': 'Too many requests: wait a moment and try again.',
  'error.PAYLOAD_TOO_LARGE': 'The request is too large.',
  'error.GAME_BROKEN': 'This game\'s record is damaged: it cannot go on.',
  'error.INTERNAL': 'Something went wrong on the server. Try again.',
  'error.NOT_FOUND': 'Not found.',
  'error.METHOD_NOT_ALLOWED': 'The server does not accept this request.',
  'error.ERROR': 'The server refused the request.',
  'error.TOKEN_EXPIRED': 'Your seat in this game has expired: join the game again.',
  'error.BUSY': 'The server is busy right now. Try again in a few seconds.',
  'error.SEQ_OUT_OF_RANGE': 'This game has no event that far.',
});

addStrings('ru', {
  'error.MALFORMED': 'Сервер не смог разобрать запрос.',
  'error.IDEMPOTENCY_KEY_REUSED': 'Этот запрос уже был отправлен с другим содержимым. Попробуйте ещё раз.',
  'error.OUT_OF_ZONE': 'Вне вашей зоны: рисовать можно только в своей зоне.',
  'error.BUDGET_EXCEEDED': 'На это не хватает бюджета.',
  'error.WRONG_PHASE': 'В этой фазе партии так нельзя.',
  'error.GAME_FINISHED': 'Партия уже закончилась.',
  'error.NO_CHANGE': 'Нечего делать: это ничего не изменит.',
  'error.UNKNOWN_PLAYER': 'Такого игрока нет в этой партии.',
  'error.LEVEL_LOCKED': 'Этот уровень ещё закрыт: сначала пройдите предыдущие.',
  'error.ALREADY_QUEUED': 'Вы уже ждёте соперника.',
  'error.ALREADY_MATCHED': 'Для этой заявки партия уже найдена.',
  'error.PROFILE_NOT_FOUND': 'Вашего профиля кампании больше нет.',
  'error.TICKET_NOT_FOUND': 'Этой заявки на игру больше нет.',
  'error.UNAUTHORIZED': 'Ваше место не опознано (возможно, партии больше нет).',
  'error.FORBIDDEN': 'В этой партии вам это недоступно.',
  'error.CONFLICT': 'Партия изменилась в тот же момент. Попробуйте ещё раз.',
  'error.RATE_LIMITED': 'Слишком много запросов: подождите немного и попробуйте снова.',
  'error.PAYLOAD_TOO_LARGE': 'Запрос слишком большой.',
  'error.GAME_BROKEN': 'Запись этой партии повреждена: продолжить её нельзя.',
  'error.INTERNAL': 'На сервере что-то пошло не так. Попробуйте ещё раз.',
  'error.NOT_FOUND': 'Не найдено.',
  'error.METHOD_NOT_ALLOWED': 'Сервер не принимает такой запрос.',
  'error.ERROR': 'Сервер отклонил запрос.',
  'error.TOKEN_EXPIRED': 'Срок вашего места в партии истёк: присоединитесь к ней снова.',
  'error.BUSY': 'Сервер сейчас занят. Попробуйте через несколько секунд.',
  'error.SEQ_OUT_OF_RANGE': 'В этой партии нет события с таким номером.',
});
