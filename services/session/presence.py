"""Presence of players, from their open ``Session.Watch`` streams (DESIGN §5 "Lost
connection: wait ``disconnect_timeout_s``, then the same" as a disconnect).

- An open Watch stream with a ``player_id`` (the gateway's WebSocket with a player token
  bridges one) counts as that player's presence; streams are counted per
  (game, player), so a second tab or a reconnect that overlaps keeps the player present.
- Only games whose config (``GameCreated`` payload / directory entry) has a numeric
  ``disconnect_timeout_s`` are tracked (CellWar); the session reads the value, it does
  not interpret the rules.
- Only players who have opened a stream at least once (on this session instance) are
  tracked. A bot that plays by REST alone, without a stream, is never removed for
  being away; so is a player who has not reconnected since a session restart.
- When a player's last stream closes, a timer of ``disconnect_timeout_s`` seconds
  starts; a stream that opens in time cancels it. When it fires, the player is removed
  (reason ``"disconnected"``, actor 0) through :func:`services.session.rollback.remove_player`
  (a rollback first when it was the player's own turn). A finished game, or a session
  that is stopping, starts no timer.
- Views show it: ``players[].connected`` is false for a tracked player without an open
  stream (:meth:`Presence.overlay`), and every change of presence wakes the game's
  watchers, so the others see it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import structlog

from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.games import Game, Games
from services.session.rollback import remove_player

log = structlog.get_logger("cellwar.session.presence")

#: Attempts of a timed-out removal that meets ``UNAVAILABLE``/``CONFLICT``, 1 s apart.
REMOVE_ATTEMPTS = 3


def disconnect_timeout(game: Game) -> float | None:
    """``disconnect_timeout_s`` of the game's config in seconds, or None (not tracked)."""
    value = (game.meta.get("config") or {}).get("disconnect_timeout_s")
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)


class Presence:
    """Counts open Watch streams per (game, player) and removes players who stay away.

    Args:
        games: the game repository (removals run through it).
        closing: set when the session stops; then no timer starts and running ones end.
    """

    def __init__(self, games: Games, closing: asyncio.Event) -> None:
        self.games = games
        self.closing = closing
        self._open: dict[str, dict[int, int]] = {}  # game id -> player id -> open streams
        self._timers: dict[tuple[str, int], asyncio.Task] = {}
        self._versions: dict[str, int] = {}
        self._closer: asyncio.Task | None = None

    # ------------------------------------------------------------------ streams

    def opened(self, game: Game, player_id: int) -> None:
        """A Watch stream of ``player_id`` opened on ``game`` (0 = spectator: ignored)."""
        if player_id <= 0 or disconnect_timeout(game) is None:
            return
        key = (game.game_id, player_id)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
            log.info("player_reconnected", game_id=game.game_id, player_id=player_id)
        counts = self._open.setdefault(game.game_id, {})
        count = counts.get(player_id, 0) + 1
        counts[player_id] = count
        if count == 1:
            self._changed(game)

    def closed(self, game: Game, player_id: int) -> None:
        """A Watch stream of ``player_id`` closed; the last one starts the timer."""
        key = (game.game_id, player_id)
        counts = self._open.get(game.game_id, {})
        if player_id <= 0 or player_id not in counts:
            return
        count = max(counts[player_id] - 1, 0)
        counts[player_id] = count
        if count:
            return
        self._changed(game)
        timeout = disconnect_timeout(game)
        if game.state.finished and not any(counts.values()):
            del self._open[game.game_id]  # nothing to track any more
            return
        if timeout is None or game.state.finished or self.closing.is_set():
            return
        log.info("player_lost", game_id=game.game_id, player_id=player_id, timeout_s=timeout)
        self._ensure_closer()
        self._timers[key] = asyncio.create_task(self._expire(game, player_id, timeout))

    def connected(self, game_id: str, player_id: int) -> bool | None:
        """True/False for a tracked player (stream open or not), None when not tracked."""
        count = self._open.get(game_id, {}).get(player_id)
        return None if count is None else count > 0

    def version(self, game_id: str) -> int:
        """Goes up on every presence change of the game (a Watch resends its view)."""
        return self._versions.get(game_id, 0)

    def _changed(self, game: Game) -> None:
        self._versions[game.game_id] = self._versions.get(game.game_id, 0) + 1
        game.notify()

    # ------------------------------------------------------------------ timers

    async def _expire(self, game: Game, player_id: int, timeout: float) -> None:
        key = (game.game_id, player_id)
        structlog.contextvars.clear_contextvars()  # this task's own copy (not the Watch's)
        structlog.contextvars.bind_contextvars(
            game_id=game.game_id, player_id=player_id, timer="disconnect"
        )
        try:
            await asyncio.sleep(timeout)
            if self.connected(game.game_id, player_id) or game.state.finished or self.closing.is_set():
                return
            if await self._already_removed(game, player_id):
                return
            for attempt in range(REMOVE_ATTEMPTS):
                try:
                    _, result = await remove_player(
                        self.games, game.game_id, player_id, "disconnected", actor=0
                    )
                    log.info(
                        "player_disconnected",
                        game_id=game.game_id,
                        player_id=player_id,
                        seq=result.seq,
                    )
                    return
                except ServiceError as exc:
                    retry = exc.code in ("UNAVAILABLE", "CONFLICT")
                    level = "warning" if retry else "info"
                    getattr(log, level)(
                        "disconnect_not_recorded",
                        game_id=game.game_id,
                        player_id=player_id,
                        code=exc.code,
                        error=exc.message,
                    )
                    if not retry or attempt == REMOVE_ATTEMPTS - 1:
                        return
                    await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a timer must never take the service down
            log.exception("disconnect_failed", game_id=game.game_id, player_id=player_id)
        finally:
            if self._timers.get(key) is asyncio.current_task():
                del self._timers[key]

    async def _already_removed(self, game: Game, player_id: int) -> bool:
        """The player's own view says it is no longer connected (it left, or was removed
        before): nothing to record. The view's ``players[].connected`` is the engine's."""
        try:
            _, view = await self.games.view(game, player_id)
        except ServiceError:
            return False  # let the removal itself report the trouble
        players = json.loads(view).get("players") or ()
        return any(p.get("id") == player_id and p.get("connected") is False for p in players)

    def _ensure_closer(self) -> None:
        if self._closer is None or self._closer.done():
            self._closer = asyncio.create_task(self._cancel_on_close())

    async def _cancel_on_close(self) -> None:
        await self.closing.wait()
        timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()
        for timer in timers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await timer

    # ------------------------------------------------------------------ views

    def overlay(self, game_id: str, view: bytes) -> bytes:
        """The view JSON with ``players[].connected`` false for every tracked player of the
        game without an open stream; unchanged (same bytes) when none is."""
        away = {pid for pid, count in self._open.get(game_id, {}).items() if not count}
        if not away or not view:
            return view
        data = json.loads(view)
        players = data.get("players") if isinstance(data, dict) else None
        if not isinstance(players, list):
            return view
        for player in players:
            if isinstance(player, dict) and player.get("id") in away:
                player["connected"] = False
        return dumps(data)
