// A delayed spectator's view of one game: the stream `?spectate=1&delay_s=N` (no token)
// pushes the game as it was N seconds ago, drawn like a replay (js/replay/draw.js). The
// server decides what may be shown (CellWar at least 10 s late, everything, and only when
// its creator allowed live spectators; Life with blind placements hidden) and when; this
// screen only draws what comes. A running CellWar game without live spectators is refused
// (SPECTATORS_AFTER_END): the screen says that spectators may watch once it has ended.

import './i18n.js';
import { openSpectatorStream } from '../api.js';
import { BoardView } from '../board.js';
import { CellWarBoard } from '../cellwar/render.js';
import { t, tNodes } from '../i18n.js';
import { errorText } from '../modes-ui.js';
import { drawView } from '../replay/draw.js';

const $ = (id) => document.getElementById(id);

export class WatchScreen {
  /** @param {{show: (name: string) => void, back: () => void}} modes */
  constructor(modes) {
    this.modes = modes;
    this.gameId = null;
    this.kind = '';
    this.delay = 0;
    this.stream = null;
    this.view = null;
    this.frames = 0;
    this.finished = false;
    /** The machine code of the server's refusal ('' while watching). */
    this.refused = '';
    this.life = new BoardView($('watch-board-life'));
    this.cw = new CellWarBoard($('watch-board-cw'));
    $('watch-menu').addEventListener('click', () => {
      this.leave();
      this.modes.back();
    });
  }

  /** Watch `gameId` (of `kind`, for the header) `delay` seconds late. */
  open(gameId, kind, delay) {
    this.leave();
    this.modes.show('watch');
    this.gameId = gameId;
    this.kind = kind || '';
    this.delay = delay;
    this.view = null;
    this.frames = 0;
    this.finished = false;
    this.refused = '';
    $('watch-board-life').hidden = true;
    $('watch-board-cw').hidden = true;
    $('watch-stats').replaceChildren();
    this._info();
    this._message(t('watch.waiting', { delay: t('watch.delay', { n: delay }) }));
    this.stream = openSpectatorStream(gameId, delay, {
      onMessage: (msg) => this._onMessage(msg),
      onStatus: (status) => {
        if (status === 'reconnecting') this._message(t('watch.reconnecting'));
      },
    });
  }

  _info() {
    const delay = t('watch.delay', { n: this.delay });
    // a #watch= link names no kind until the first frame: "Game <id>", not "Game game <id>"
    if (!this.kind) {
      $('watch-info').replaceChildren(...tNodes('watch.info.any', { name: this.gameId, delay }));
      return;
    }
    const kind = t(`kind.${this.kind}`);
    $('watch-info').replaceChildren(...tNodes('watch.info', { kind, name: this.gameId, delay }));
  }

  _message(text) {
    const el = $('watch-message');
    el.textContent = text || '';
    el.hidden = !text;
  }

  _onMessage(msg) {
    if (msg.type === 'error' && msg.error) {
      // e.g. SPECTATORS_AFTER_END (a fog game whose creator did not allow live
      // spectators): the socket closes with 4409 and is not reopened.
      this.refused = msg.error.code || 'ERROR';
      this._message(errorText(msg.error));
      return;
    }
    if (!msg.view) return;
    this.view = msg.view;
    this.frames += 1;
    if (msg.view.kind && msg.view.kind !== this.kind) {
      this.kind = msg.view.kind;
      this._info();
    }
    this.finished = msg.type === 'finished';
    this._message(this.finished ? t('watch.finished') : '');
    this._draw();
    $('screen-watch').dataset.seq = String(msg.seq);
  }

  _nameOf(pid) {
    const p = this.view && (this.view.players || []).find((x) => x.id === pid);
    return (p && p.name) || t(`player.${pid}`);
  }

  _draw() {
    if (!this.view) return;
    drawView(this.view, {
      life: this.life,
      cw: this.cw,
      lifeCanvas: $('watch-board-life'),
      cwCanvas: $('watch-board-cw'),
      statsEl: $('watch-stats'),
      nameOf: (pid) => this._nameOf(pid),
    });
  }

  refreshStyle() {
    this.life.refreshColors();
    this.cw.refreshColors();
    if (this.gameId) this._info();
    this._draw();
  }

  leave() {
    if (this.stream) this.stream.close();
    this.stream = null;
  }

  snapshot() {
    return {
      gameId: this.gameId,
      delay: this.delay,
      frames: this.frames,
      seq: this.view ? this.view.seq : null,
      view: this.view,
      finished: this.finished,
      refused: this.refused,
    };
  }
}
