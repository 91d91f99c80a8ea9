// Tiny i18n: t(key, params) looks the key up in the current language (falling back to
// English); applyI18n(root) fills every [data-i18n] element's text and every
// [data-i18n-title] element's title. Add a language by adding a dictionary below.

const STRINGS = {
  en: {
    'app.title': 'CellWar',
    'start.tagline': 'A territorial Game of Life for two.',
    'start.description':
      'Each player places coloured cells in their own half of the board, then the board lives by Conway\'s rules (B3/S23): a cell survives with 2 or 3 neighbours and is born with exactly 3, taking the colour of the majority of its parents. Whoever holds more cells wins.',
    'start.continue': 'Continue game',
    'start.hotseat': 'Hot-seat',
    'start.hotseat.hint': 'Two players, one device',
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
  },
  ru: {
    'app.title': 'CellWar',
    'start.tagline': 'Территориальная «Жизнь» на двоих.',
    'start.description':
      'Каждый игрок расставляет клетки своего цвета в своей половине поля, а дальше поле живёт по правилам Конвея (B3/S23): клетка выживает при 2–3 соседях и рождается ровно при 3, наследуя цвет большинства родителей. Побеждает тот, у кого больше клеток.',
    'start.continue': 'Продолжить партию',
    'start.hotseat': 'Игра на двоих',
    'start.hotseat.hint': 'Два игрока, одно устройство',
    'start.online': 'Играть онлайн',
    'start.cellwar': 'CellWar',
    'start.campaign': 'Кампания',
    'start.soon': 'Скоро',
    'prefs.theme': 'Тема',
    'prefs.theme.dark': 'Тёмная',
    'prefs.theme.light': 'Светлая',
    'prefs.lang': 'Язык',
    'setup.title': 'Игра на двоих',
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
  },
};

export const LANGUAGES = Object.keys(STRINGS);
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
export function t(key, params = {}) {
  const s = STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}

/** Fill [data-i18n] text and [data-i18n-title] titles under root. */
export function applyI18n(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
}
