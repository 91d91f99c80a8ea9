// The CellWar, replay, campaign, quick match, leaderboard, lobby and spectator screens
// wired into the app: start-screen buttons, screen switching (main.js calls show(name)
// for every screen change), theme/palette/language refresh, "Watch replay" on the Life
// winner screen, the replay's "Fork from here" (opened hot-seat), shared links
// (#cellwar=<id>, #replay=<id>, #watch=<id>), a quick-match ticket that a reload left
// waiting, and the test hook window.cellwarModes.

import './modes-i18n.js';
import { t } from './i18n.js';
import { CellWarScreen } from './cellwar/screen.js';
import { loadCellWar } from './cellwar/game.js';
import { ReplayScreen } from './replay/screen.js';
import { CampaignScreen, loadCampaign } from './campaign/screen.js';
import { saveCellWar } from './cellwar/game.js';
import { MatchmakingScreen } from './matchmaking/screen.js';
import { LobbyScreen } from './lobby/screen.js';
import { WatchScreen } from './lobby/watch.js';

const $ = (id) => document.getElementById(id);
const SCREENS = ['cw-setup', 'cw', 'replay', 'campaign-levels', 'campaign', 'quickmatch', 'leaderboard', 'lobby', 'watch'];

/**
 * @param {{show: (name: string) => void, toMenu: () => void, lifeGameId: () => string|null,
 *          playLife: (save: object) => void}} app
 */
export function initModes(app) {
  let active = null;
  const modes = {
    show: (name) => app.show(name),
    toStart: () => app.show('start'),
    openReplay: (id) => replay.open(id),
    /** A fork whose seats this browser took: Life opens on the game screen, CellWar on its own. */
    playFork: (kind, save) => {
      if (kind === 'cellwar') {
        const cw = { ...save, mode: 'hotseat', accepted: null };
        saveCellWar(cw);
        cellwar.play(cw);
      } else {
        app.playLife({ ...save, mode: 'hotseat' });
      }
    },
    watch: (id, kind, delay) => watch.open(id, kind, delay),
  };
  const cellwar = new CellWarScreen(modes);
  const replay = new ReplayScreen(modes);
  const lobby = new LobbyScreen(modes);
  const watch = new WatchScreen({ show: modes.show, back: () => lobby.open() });
  const campaign = new CampaignScreen(modes);
  const matchmaking = new MatchmakingScreen({
    ...modes,
    playLife: (save) => app.playLife(save),
    playCellWar: (save) => {
      saveCellWar(save);
      cellwar.play(save);
    },
    profileToken: () => loadCampaign().profileToken || null,
  });

  $('btn-cellwar').addEventListener('click', () => cellwar.showSetup());
  $('btn-replay').addEventListener('click', () => replay.open(''));
  $('btn-lobby').addEventListener('click', () => lobby.open());
  $('btn-campaign').addEventListener('click', () => campaign.openLevels());
  $('btn-continue-campaign').addEventListener('click', () => campaign.resume());
  $('winner-replay').addEventListener('click', () => {
    const id = app.lifeGameId();
    app.toMenu();
    if (id) replay.open(id);
  });

  const applyPlaceholders = () => {
    for (const el of document.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
  };
  applyPlaceholders();
  // Theme and language live on <html>: refresh colours and texts when they change.
  new MutationObserver(() => {
    applyPlaceholders();
    cellwar.refreshStyle();
    replay.refreshStyle();
    campaign.refreshStyle();
    lobby.refreshStyle();
    watch.refreshStyle();
    if (active === 'start') updateStart();
  }).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme', 'data-palette', 'lang'] });

  function updateStart() {
    const p = loadCampaign().parked;
    $('btn-continue-campaign').hidden = !p;
    if (p) {
      const n = p.name && typeof p.name === 'object' ? (p.name[document.documentElement.lang] || p.name.en) : '';
      $('continue-campaign-level').textContent = t('camp.level', { n: p.level, total: 103 }) + (n ? ` · ${n}` : '');
    }
  }

  window.cellwarModes = {
    cellwar: () => cellwar.snapshot(),
    replay: () => replay.snapshot(),
    campaign: () => campaign.snapshot(),
    screen: () => active,
    matchmaking: () => matchmaking.detect(),
    lobby: () => lobby.snapshot(),
    watch: () => watch.snapshot(),
  };

  /** Open a `#cellwar=<id>` / `#replay=<id>` / `#watch=<id>` link of the address bar; true when there was one. */
  const openSharedLink = () => {
    const m = /^#(cellwar|replay|watch)=([\w-]{1,64})$/.exec(location.hash);
    if (!m) return false;
    history.replaceState(null, '', location.pathname + location.search);
    if (m[1] === 'cellwar') cellwar.joinShared(m[2]);
    else if (m[1] === 'watch') watch.open(m[2], '', lobby.delay());
    else replay.open(m[2]);
    return true;
  };
  // A link pasted into an open tab only changes the hash.
  window.addEventListener('hashchange', openSharedLink);

  // Shared links and resumable games (after main.js has shown its first screen).
  queueMicrotask(() => {
    if (openSharedLink()) return;
    if (active !== 'start') return; // a Life game is being resumed
    if (matchmaking.resume()) return;
    const cw = loadCellWar();
    if (cw && !cw.suspended) cellwar.play(cw);
    else if (campaign.parkedActive()) campaign.resume();
  });

  return {
    /** Called by main.js on every screen change: show `name` if it is one of ours. */
    show(name) {
      if (active === 'replay' && name !== 'replay') replay.leave();
      if (active === 'watch' && name !== 'watch') watch.leave();
      if (active === 'cw' && name !== 'cw') cellwar.detach();
      if (active === 'campaign' && name !== 'campaign') campaign.detach();
      if (active === 'quickmatch' && name !== 'quickmatch') matchmaking.leave();
      if (name !== active) $('modes-toast').hidden = true;
      for (const s of SCREENS) $(`screen-${s}`).hidden = s !== name;
      active = name;
      if (name === 'start') {
        updateStart();
        matchmaking.detect();
      }
    },
  };
}
