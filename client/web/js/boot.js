// Loaded by index.html before js/main.js, as a classic script (the page's CSP allows
// no inline script or handler attribute, docs/security.md).
// The client could not be loaded (js/main.js or a module it imports did not arrive):
// say so on the start screen and reload, a few times, then leave the message. Before
// the client runs there is no i18n: the browser's language picks the words.
function cellwarBootFailed() {
  var key = 'cellwar.boot.retries';
  var tries = 0;
  try { tries = Number(sessionStorage.getItem(key)) || 0; } catch (e) { tries = 3; }
  var ru = /^ru\b/i.test(navigator.language || '');
  var again = tries < 3;
  var el = document.getElementById('boot-status');
  if (!el) {  // the page is still being parsed: say it once the start screen exists
    document.addEventListener('DOMContentLoaded', cellwarBootFailed, { once: true });
    return;
  }
  el.textContent = again
    ? (ru ? 'Не удалось загрузить игру. Пробуем ещё раз…' : 'Could not load the game. Trying again…')
    : (ru ? 'Не удалось загрузить игру. Проверьте связь и обновите страницу.'
          : 'Could not load the game. Check the connection and reload the page.');
  el.hidden = false;
  if (again) {
    try { sessionStorage.setItem(key, String(tries + 1)); } catch (e) { /* no storage */ }
    setTimeout(function () { location.reload(); }, 1000 * (tries + 1));
  }
}

// A module script of the page (js/main.js, or a module it imports) that cannot be
// fetched fires "error" at its <script> element; load errors do not bubble, so the
// window hears them in the capture phase.
window.addEventListener('error', function (event) {
  var target = event.target;
  if (target && target.tagName === 'SCRIPT' && target.type === 'module') cellwarBootFailed();
}, true);
