// Tiny i18n: t(key, params) looks the key up in the current language (falling back to
// English); applyI18n(root) fills every [data-i18n] element's text and every
// [data-i18n-title] element's title. Add a language by adding a dictionary below.

const STRINGS = {
  en: {
    'app.title': 'CellWar',
    'start.tagline': 'A territorial Game of Life for 2 or 4 players.',
    'start.description':
      'Each player places coloured cells in their own zone (a half of the board with 2 players, a quarter with 4), then the board lives by Conway\'s rules (B3/S23): a cell survives with 2 or 3 neighbours and is born with exactly 3, taking the colour of the majority of its parents. Whoever holds more cells wins.',
    'start.continue': 'Continue game',
    'start.hotseat': 'Hot-seat',
    'start.hotseat.hint': '2 or 4 players, one device',
    'start.online': 'Play online',
    'start.cellwar': 'CellWar',
    'start.campaign': 'Campaign',
    'start.soon': 'Coming soon',
    'prefs.theme': 'Theme',
    'prefs.theme.dark': 'Dark',
    'prefs.theme.light': 'Light',
    'prefs.lang': 'Language',
    'setup.title': 'Hot-seat game',
    'setup.size': 'Board size',
    'setup.torus': 'Wrap-around board (torus)',
    'setup.budget': 'Cell budget per player',
    'setup.start': 'Start',
    'setup.back': 'Back',
    'setup.howto': 'How to play',
    'setup.howto.text':
      'Player 1 (red) draws in the left half, then passes the device to player 2 (green), who draws blind in the right half. Then the simulation runs. When the board stops changing, both players may draw more cells (seeing the whole board) and press Ready. Each new cell costs 1 from your budget; erasing a cell placed this turn refunds it. The game ends when a colour dies out, when nobody can improve, or when you finish it. Most cells of your colour wins.',
    'setup.confirmReplace': 'A game is in progress. Start a new one and abandon it?',
    'player.1': 'Red',
    'player.2': 'Green',
    'player.3': 'Blue',
    'player.4': 'Yellow',
    'hud.cells': 'cells',
    'hud.budget': 'budget',
    'hud.generation': 'Generation',
    'hud.stable': 'Board stable',
    'hud.menu': 'Menu',
    'phase.waiting': 'Waiting for players',
    'phase.placement': '{name} places cells',
    'phase.running': 'Simulation running',
    'phase.paused': 'Paused',
    'phase.redraw': 'Redraw: {name} draws',
    'phase.finished': 'Game over',
    'tool.pencil': 'Pencil 1×1',
    'tool.brush': 'Brush 3×3',
    'tool.eraser': 'Eraser 1×1',
    'tool.eraser4': 'Eraser 4×4',
    'tool.rmb': 'Right mouse button erases',
    'action.done': 'Done',
    'action.reset': 'Reset turn',
    'action.pause': 'Pause',
    'action.resume': 'Resume',
    'action.speed': 'Speed',
    'action.finish': 'Finish game',
    'action.redraw1': 'Redraw red',
    'action.redraw2': 'Redraw green',
    'action.ready': 'Ready',
    'handover.title': 'Pass the device to player 2',
    'handover.text': 'Player 2 ({name}) places cells without seeing player 1\'s.',
    'handover.accept': 'I am player 2',
    'handover.back': 'Back to player 1',
    'confirm.finish': 'Finish the game now? The player with more cells wins.',
    'confirm.yes': 'Yes',
    'confirm.no': 'Cancel',
    'winner.title': 'Game over',
    'winner.wins': '{name} wins!',
    'winner.draw': 'Draw!',
    'winner.score': '{name}: {cells} cells',
    'winner.rematch': 'Rematch',
    'winner.menu': 'Menu',
    'error.network': 'Connection problem: {message}',
    'error.generic': 'Error: {message}',
    'error.gone': 'The saved game is no longer available.',
    'status.connecting': 'Connecting…',
    'status.reconnecting': 'Reconnecting…',
    // Life: online, 4 players, stamps, tap mode, help (client/web/js/online.js, stamps.js)
    'start.online.hint': 'Share a link, each on their own device',
    'setup.title.online': 'Online game',
    'setup.start.online': 'Create game',
    'setup.players': 'Players',
    'setup.players.2': '2 (left / right half)',
    'setup.players.4': '4 (quadrants)',
    'help.title': 'How to play',
    'help.close': 'Got it',
    'help.rules': 'Every player has a zone: with 2 players the left (red) and the right (green) half, with 4 the quadrants (red top-left, green top-right, blue bottom-left, yellow bottom-right). The other zones are dimmed.\n\nPlacement: players draw one after another, each blind (you never see the others\' cells while placing). In hot-seat the device is passed on; online everyone plays in their own browser and waits for their turn.\n\nEach new cell costs 1 from your budget for the whole game (shown in the HUD, red at zero); erasing a cell placed this turn refunds it; "Reset turn" undoes your whole turn. Tools: pencil 1×1, brush 3×3, eraser 1×1 and 4×4; the right mouse button erases. "Pattern" stamps a ready-made figure (top-left corner at the click, rotate with ↻ or the mouse wheel); cells outside your zone or on live cells are skipped and free. "tap" places on release, for touch screens.\n\nThen the board lives by Conway\'s rules (B3/S23, 8 neighbours): a live cell with 2 or 3 live neighbours survives; an empty cell with exactly 3 is born with the colour most of its parents have. Space pauses and resumes; 1× 2× 4× 8× set the speed. Hard edges by default; "torus" wraps them.\n\nWhen the board stops changing (still lifes, short oscillators) the simulation stops ("Board stable") and every player may draw again, now seeing the whole board, then press Ready. A round in which nobody adds a cell ends the game.\n\nThe game ends when a colour dies out, when the players behind cannot act any more (budget 0), or by agreement with "Finish game". Most live cells of your colour wins.',
    'online.share': 'Send this link to the other player(s):',
    'online.copy': 'Copy',
    'online.copied': 'Link copied',
    'online.you': 'you',
    'online.waitingPlayers': 'Waiting for players: {n} of {max} joined',
    'online.yourTurn': 'Your turn: place your cells and press Done',
    'online.waitTurn': 'Waiting for {name} to place cells…',
    'online.readyWait': 'You are ready. Waiting for the others…',
    'online.redrawYou': 'Board stable: draw more cells if you like, then press Ready',
    'online.finishWait': 'You proposed to finish. Waiting for the others to agree…',
    'online.finishProposed': '{name} proposes to finish the game (press "Finish game" to agree).',
    'online.joinConfirm': 'You have an unfinished game. Join the shared game instead?',
    'online.joinFailed': 'Could not join the game: {message}',
    'online.rematchLink': 'New game created: send the new link to the other player(s).',
    'handover.title.n': 'Pass the device to {name}',
    'handover.text.n': '{name} places cells without seeing the others\'.',
    'handover.accept.n': 'I am {name}',
    'handover.back.n': 'Back to {name}',
    'action.redraw3': 'Redraw blue',
    'action.redraw4': 'Redraw yellow',
    'tool.pattern': 'Pattern',
    'tool.pattern.none': '— no pattern —',
    'tool.rotate': 'Rotate 90° (or the mouse wheel over the board)',
    'tool.tap': 'tap',
    'tool.tap.title': 'Place on release (touch screens): a press only shows where',
    'cat.still_lifes': 'Still lifes',
    'cat.oscillators': 'Oscillators',
    'cat.spaceships': 'Spaceships',
    'cat.methuselahs': 'Methuselahs',
    'cat.guns': 'Guns',
    'stamp.budget': 'Not enough budget for this pattern',
    'error.GAME_FULL': 'This game is full: all seats are taken.',
    'error.GAME_NOT_FOUND': 'Game not found: the link is wrong or the game no longer exists.',
    'error.INVALID_CONFIG': 'Invalid settings: {message}',
    'error.UNAVAILABLE': 'The server is unavailable right now. Try again in a moment.',
    'error.NETWORK': 'Connection problem: {message}',
    'setup.createFailed': 'Could not create the game: {message}',
    'setup.budget.invalid': 'The budget must be a whole number from 0 to 2147483647.',
    'phase.handover': 'Hand-over: pass the device to {name}',
    'confirm.emptyRound': 'Nobody drew this round: the game will end. Continue?',
    'hud.coords': 'Cell under the pointer (x, y)',
  },
  ru: {
    'app.title': 'CellWar',
    'start.tagline': 'Территориальная «Жизнь» для 2 или 4 игроков.',
    'start.description':
      'Каждый игрок расставляет клетки своего цвета в своей зоне (половина поля при 2 игроках, четверть при 4), а дальше поле живёт по правилам Конвея (B3/S23): клетка выживает при 2–3 соседях и рождается ровно при 3, наследуя цвет большинства родителей. Побеждает тот, у кого больше клеток.',
    'start.continue': 'Продолжить партию',
    'start.hotseat': 'За одним устройством',
    'start.hotseat.hint': '2 или 4 игрока, одно устройство',
    'start.online': 'Играть онлайн',
    'start.cellwar': 'CellWar',
    'start.campaign': 'Кампания',
    'start.soon': 'Скоро',
    'prefs.theme': 'Тема',
    'prefs.theme.dark': 'Тёмная',
    'prefs.theme.light': 'Светлая',
    'prefs.lang': 'Язык',
    'setup.title': 'Игра за одним устройством',
    'setup.size': 'Размер поля',
    'setup.torus': 'Замкнутая карта (torus)',
    'setup.budget': 'Бюджет клеток на игрока',
    'setup.start': 'Начать',
    'setup.back': 'Назад',
    'setup.howto': 'Как играть',
    'setup.howto.text':
      'Первый игрок (красные) рисует в левой половине и передаёт устройство второму (зелёные), который рисует вслепую в правой. Затем идёт симуляция. Когда поле перестало меняться, оба игрока могут дорисовать клетки (уже видя всё поле) и нажать «Готов». Каждая новая клетка стоит 1 из бюджета; стирание клетки этого хода возвращает её. Партия кончается вымиранием цвета, тупиком или вручную. Побеждает тот, у кого больше клеток своего цвета.',
    'setup.confirmReplace': 'Идёт партия. Начать новую и бросить её?',
    'player.1': 'Красные',
    'player.2': 'Зелёные',
    'player.3': 'Синие',
    'player.4': 'Жёлтые',
    'hud.cells': 'клеток',
    'hud.budget': 'бюджет',
    'hud.generation': 'Поколение',
    'hud.stable': 'Поле стабильно',
    'hud.menu': 'В меню',
    'phase.waiting': 'Ждём игроков',
    'phase.placement': '{name}: расстановка',
    'phase.running': 'Симуляция',
    'phase.paused': 'Пауза',
    'phase.redraw': 'Дорисовка: {name}',
    'phase.finished': 'Партия окончена',
    'tool.pencil': 'Карандаш 1×1',
    'tool.brush': 'Кисть 3×3',
    'tool.eraser': 'Ластик 1×1',
    'tool.eraser4': 'Ластик 4×4',
    'tool.rmb': 'Правая кнопка мыши стирает',
    'action.done': 'Готово',
    'action.reset': 'Сброс',
    'action.pause': 'Пауза',
    'action.resume': 'Старт симуляции',
    'action.speed': 'Скорость',
    'action.finish': 'Завершить партию',
    'action.redraw1': 'Дорисовать красным',
    'action.redraw2': 'Дорисовать зелёным',
    'action.ready': 'Готов',
    'handover.title': 'Передайте устройство игроку 2',
    'handover.text': 'Игрок 2 ({name}) расставляет клетки, не видя клеток игрока 1.',
    'handover.accept': 'Я игрок 2',
    'handover.back': 'Вернуться к игроку 1',
    'confirm.finish': 'Завершить партию? Победит тот, у кого больше клеток.',
    'confirm.yes': 'Да',
    'confirm.no': 'Отмена',
    'winner.title': 'Партия окончена',
    'winner.wins': 'Победили {name}!',
    'winner.draw': 'Ничья!',
    'winner.score': '{name}: {cells} клеток',
    'winner.rematch': 'Реванш',
    'winner.menu': 'В меню',
    'error.network': 'Проблема со связью: {message}',
    'error.generic': 'Ошибка: {message}',
    'error.gone': 'Сохранённая партия больше недоступна.',
    'status.connecting': 'Подключение…',
    'status.reconnecting': 'Переподключение…',
    'start.online.hint': 'По ссылке, каждый на своём устройстве',
    'setup.title.online': 'Игра онлайн',
    'setup.start.online': 'Создать партию',
    'setup.players': 'Игроки',
    'setup.players.2': '2 (левая / правая половина)',
    'setup.players.4': '4 (четверти поля)',
    'help.title': 'Как играть',
    'help.close': 'Понятно',
    'help.rules': 'У каждого игрока своя зона: при двух игроках — левая (красные) и правая (зелёные) половина, при четырёх — четверти поля (красные слева сверху, зелёные справа сверху, синие слева снизу, жёлтые справа снизу). Чужие зоны затемнены.\n\nРасстановка: игроки рисуют по очереди и вслепую (чужих клеток при расстановке не видно). В игре на одном устройстве его передают следующему; онлайн каждый играет в своём браузере и ждёт своего хода.\n\nКаждая новая клетка стоит 1 из бюджета на всю партию (виден в HUD, при нуле краснеет); стирание клетки этого хода возвращает её; «Сброс» отменяет весь ход. Инструменты: карандаш 1×1, кисть 3×3, ластик 1×1 и 4×4; правая кнопка мыши стирает. «Паттерн» ставит готовую фигуру (левый верхний угол — в точке клика, поворот — «↻» или колесо мыши); клетки вне вашей зоны или на живых клетках пропускаются и ничего не стоят. «тап» ставит по отпусканию — для сенсорных экранов.\n\nДальше поле живёт по правилам Конвея (B3/S23, 8 соседей): живая клетка с 2–3 живыми соседями выживает; в пустой клетке ровно при 3 соседях рождается новая — цвета большинства родителей. Пробел — пауза и продолжение; 1× 2× 4× 8× — скорость. По умолчанию границы жёсткие; «torus» замыкает их.\n\nКогда поле перестало меняться (неподвижные фигуры, короткие циклы), симуляция встаёт («Поле стабильно»), и каждый может дорисовать клетки, уже видя всё поле, и нажать «Готов». Раунд, в котором никто ничего не добавил, завершает партию.\n\nПартия кончается вымиранием цвета, тупиком по бюджету или по согласию кнопкой «Завершить партию». Побеждает тот, у кого больше живых клеток своего цвета.',
    'online.share': 'Отправьте эту ссылку сопернику:',
    'online.copy': 'Копировать',
    'online.copied': 'Ссылка скопирована',
    'online.you': 'вы',
    'online.waitingPlayers': 'Ждём игроков: подключилось {n} из {max}',
    'online.yourTurn': 'Ваш ход: расставьте клетки и нажмите «Готово»',
    'online.waitTurn': 'Ждём, пока {name} расставят клетки…',
    'online.readyWait': 'Вы готовы. Ждём остальных…',
    'online.redrawYou': 'Поле стабильно: дорисуйте клетки, если хотите, и нажмите «Готов»',
    'online.finishWait': 'Вы предложили завершить партию. Ждём согласия остальных…',
    'online.finishProposed': '{name} предлагают завершить партию (нажмите «Завершить партию», чтобы согласиться).',
    'online.joinConfirm': 'У вас есть незавершённая партия. Присоединиться к партии по ссылке вместо неё?',
    'online.joinFailed': 'Не удалось присоединиться: {message}',
    'online.rematchLink': 'Новая партия создана: отправьте сопернику новую ссылку.',
    'handover.title.n': 'Передайте устройство: {name}',
    'handover.text.n': '{name} расставляют клетки, не видя чужих.',
    'handover.accept.n': 'Я играю за: {name}',
    'handover.back.n': 'Вернуться: {name}',
    'action.redraw3': 'Дорисовать синим',
    'action.redraw4': 'Дорисовать жёлтым',
    'tool.pattern': 'Паттерн',
    'tool.pattern.none': '— без паттерна —',
    'tool.rotate': 'Повернуть на 90° (или колесом мыши над полем)',
    'tool.tap': 'тап',
    'tool.tap.title': 'Постановка по отпусканию (для сенсорных экранов): нажатие только показывает место',
    'cat.still_lifes': 'Стойкие',
    'cat.oscillators': 'Осцилляторы',
    'cat.spaceships': 'Корабли',
    'cat.methuselahs': 'Долгожители',
    'cat.guns': 'Ружья',
    'stamp.budget': 'Не хватает бюджета на эту фигуру',
    'error.GAME_FULL': 'В этой партии нет свободных мест.',
    'error.GAME_NOT_FOUND': 'Партия не найдена: ссылка неверна или партии больше нет.',
    'error.INVALID_CONFIG': 'Неверные настройки: {message}',
    'error.UNAVAILABLE': 'Сервер сейчас недоступен. Попробуйте чуть позже.',
    'error.NETWORK': 'Проблема со связью: {message}',
    'setup.createFailed': 'Не удалось создать партию: {message}',
    'setup.budget.invalid': 'Бюджет — целое число от 0 до 2147483647.',
    'phase.handover': 'Передача устройства: {name}',
    'confirm.emptyRound': 'В этом раунде никто не рисовал: партия закончится. Продолжить?',
    'hud.coords': 'Клетка под указателем (x, y)',
  },
};

export const LANGUAGES = Object.keys(STRINGS);

/** Merge more strings into a language (mode modules keep their own dictionaries). */
export function addStrings(lang, dict) {
  if (STRINGS[lang]) Object.assign(STRINGS[lang], dict);
}
let current = 'en';

/** Current language code. */
export function getLang() {
  return current;
}

/** Switch language (unknown codes fall back to English) and refresh [data-i18n] texts. */
export function setLang(lang, root = document) {
  current = STRINGS[lang] ? lang : 'en';
  document.documentElement.lang = current;
  applyI18n(root);
}

/** Translate a key; `{name}` placeholders are filled from params. */
/** A touch screen (a finger, no mouse): `t` prefers a key's `.touch` variant ("Tap ..."). */
const TOUCH = typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

export function t(key, params = {}) {
  const s = (TOUCH && STRINGS[current][`${key}.touch`]) || (STRINGS[current][key] ?? STRINGS.en[key] ?? key);
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}

const pluralRules = new Map(); // language → Intl.PluralRules

/**
 * Translate a key that depends on a count `n`, by the plural rules of the current
 * language (`Intl.PluralRules`, CLDR categories): the string of `key.<category>`
 * (`one`, `few`, `many`, `other`, …), else `key.other`, else `key`. `{n}` is filled
 * with the count (as written by `Intl.NumberFormat` of the language) unless params
 * give another.
 * @param {string} key
 * @param {number} n
 * @param {object} [params]
 */
export function tn(key, n, params = {}) {
  if (!pluralRules.has(current)) pluralRules.set(current, new Intl.PluralRules(current));
  const cat = Number.isFinite(n) ? pluralRules.get(current).select(n) : 'other';
  const dict = STRINGS[current];
  const k = [`${key}.${cat}`, `${key}.other`].find((c) => c in dict || c in STRINGS.en) ?? key;
  return t(k, { n: Number.isFinite(n) ? String(n) : '?', ...params });
}

/**
 * Like `t` (or `tn` when params carry `n` and `plural` is true), as DOM nodes: the
 * params named in `names` (a player's name, a game id) become `<bdi translate="no">`
 * elements, so a name in a translated sentence is marked as a name (and its direction
 * kept).
 * @param {string} key
 * @param {object} [params]
 * @param {{names?: string[], plural?: boolean}} [opts]
 * @returns {Node[]}
 */
export function tNodes(key, params = {}, { names = ['name'], plural = false } = {}) {
  const marks = {};
  const filled = { ...params };
  for (const k of names) {
    if (k in params) {
      marks[`\u0001${k}\u0001`] = String(params[k]);
      filled[k] = `\u0001${k}\u0001`;
    }
  }
  const text = plural ? tn(key, params.n, filled) : t(key, filled);
  const out = [];
  for (const part of text.split(/(\u0001\w+\u0001)/)) {
    if (!part) continue;
    if (part in marks) {
      const b = document.createElement('bdi');
      b.translate = false;
      b.textContent = marks[part];
      out.push(b);
    } else out.push(document.createTextNode(part));
  }
  return out;
}

/**
 * A translated text as DOM nodes, with `[[key]]` marks made into `<kbd translate="no">`
 * (the name of a keyboard key, as printed on it).
 * @param {string} text
 * @returns {Node[]}
 */
export function richNodes(text) {
  return text.split(/(\[\[[^\]]+\]\])/).filter(Boolean).map((part) => {
    const m = /^\[\[([^\]]+)\]\]$/.exec(part);
    if (!m) return document.createTextNode(part);
    const k = document.createElement('kbd');
    k.translate = false;
    k.textContent = m[1];
    return k;
  });
}

/** Fill [data-i18n] texts, [data-i18n-title] titles, [data-i18n-aria] accessible names
 * and [data-i18n-placeholder] placeholders under root. */
export function applyI18n(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
}
