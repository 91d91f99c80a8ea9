"""Presence of players and their disconnect clocks, in KV ``GAME_PRESENCE`` so they outlive
the instance that saw them (a lost connection waits ``disconnect_timeout_s``, then counts
as a disconnect; presence and timers survive an instance's death: docs/architecture/
scale-out.md "Presence and disconnect clocks").

Keys (``<game>.<player>.…``):

- ``<game>.<player>.i-<instance>`` — **a marker**: the instance has at least one open
  ``Session.Watch`` of that player (the gateway's WebSocket with a player token). Written
  with a per-message TTL of ``presence_ttl_s`` and renewed every TTL/3 while a stream is
  open; deleted when the instance's last stream of the player closes; when the instance
  dies it expires (the server writes a delete marker, and every instance also treats a
  marker not renewed for a TTL as gone).
- ``<game>.<player>.clock`` — **the player is tracked** (it opened a stream at least
  once: a bot that plays by REST alone is never removed for being away) and its
  disconnect clock: ``{"since": <unix time the clock started> | null}``.

Only games whose policy has ``disconnect_timeout_s`` > 0 are tracked (the engine says
which). A player is **connected** while some instance holds a live marker of it; views
show ``players[].connected: false`` for a tracked player who is not
(:meth:`Presence.overlay`), and every change of that wakes the game's watchers on every
instance (each mirrors the bucket through one KV watch).

**The clock** is run by the game's lease holder (:meth:`Presence.run_clocks`; the
keeper takes a lease for every game with tracked players): a tracked, active player's
clock runs while it is away **and some other active player is present** (connected, or
not tracked). When every player drops at once — a gateway tier restart, a network cut —
every clock waits (a server fault must not decide a game): only a player who drops
alone is removed. A clock that stops is reset; one that has run ``disconnect_timeout_s``
removes the player through the command loop with the deterministic command id
``disconnect:p<id>`` (actor 0, reason ``disconnected``): two instances that both decide
it collide on the fence and the idempotency key, so a CellWar rollback happens exactly
once. Instances share the time through the KV value (unix time): run them with clocks
kept in step (NTP), as any cluster is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterable

import nats.errors
import nats.js.errors
import orjson
import structlog
from nats.js.kv import KeyValue

from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.common.jsonwire import dumps, view_dumps
from services.common.nats.kv import KvMirror, put_with_ttl
from services.common.tasks import every
from services.session.adapters.kv import safe_key
from services.session.domain.commands import Command
from services.session.domain.game import Game
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop

log = structlog.get_logger("cellwar.session.presence")

MARKER = "i-"
CLOCK = "clock"
#: Codes that mean "nothing left to remove" (the player left, the game ended).
_DONE_CODES = frozenset(
    {
        ErrorCode.INVALID_ACTION,
        ErrorCode.NO_CHANGE,
        ErrorCode.GAME_FINISHED,
        ErrorCode.UNKNOWN_PLAYER,
    }
)


class Presence:
    """Open Watch streams per (game, player), mirrored presence of every instance, and the
    disconnect clocks of the games this instance holds (module docstring).

    Args:
        kv: the GAME_PRESENCE bucket.
        instance_id: this instance's name.
        ttl_s: marker lifetime without renewal (seconds).
        games: the game cache (its watchers are woken on presence changes).
        loop: the command loop (a removal for being away goes through it).
        on_tracked: called when this instance starts tracking a player (its game needs a
            lease holder: the keeper's lease pass is due).
    """

    def __init__(
        self,
        kv: KeyValue,
        instance_id: str,
        ttl_s: float,
        games: GameCache,
        loop: CommandLoop | None = None,
        on_tracked: Callable[[], None] | None = None,
    ) -> None:
        self.kv = kv
        self.instance = safe_key(instance_id)
        self.ttl_s = ttl_s
        self.games = games
        self.loop = loop
        self.on_tracked = on_tracked
        self._open: dict[tuple[str, int], int] = {}
        self._markers: dict[tuple[str, int], dict[str, float]] = {}
        self._clocks: dict[tuple[str, int], float | None] = {}
        self._by_game: dict[str, set[int]] = {}
        self._versions: dict[str, int] = {}
        self._removing: dict[tuple[str, int], asyncio.Task] = {}
        self._writes: set[asyncio.Task] = set()
        self._renewer: asyncio.Task | None = None
        self.mirror = KvMirror(kv, self._on_change)

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    # ------------------------------------------------------------------ keys

    def _marker_key(self, game_id: str, player_id: int) -> str:
        return f"{game_id}.{player_id}.{MARKER}{self.instance}"

    @staticmethod
    def _clock_key(game_id: str, player_id: int) -> str:
        return f"{game_id}.{player_id}.{CLOCK}"

    def _on_change(self, key: str, value: bytes | None, revision: int) -> None:
        parts = key.split(".")
        if len(parts) != 3 or not parts[1].isdigit():
            return
        gid, pid, rest = parts[0], int(parts[1]), parts[2]
        before = self.connected(gid, pid)
        if rest == CLOCK:
            if value is None:
                self._untrack(gid, pid)
            else:
                try:
                    since = json.loads(value).get("since")
                except (ValueError, AttributeError):
                    since = None
                self._clocks[(gid, pid)] = float(since) if isinstance(since, int | float) else None
                self._by_game.setdefault(gid, set()).add(pid)
        elif rest.startswith(MARKER):
            inst = rest[len(MARKER) :]
            if inst == self.instance:
                return  # our own markers: self._open is the truth
            markers = self._markers.setdefault((gid, pid), {})
            if value is None:
                markers.pop(inst, None)
            else:
                markers[inst] = self._now()
        if self.connected(gid, pid) != before:
            self._changed(gid)

    def _untrack(self, gid: str, pid: int) -> None:
        self._clocks.pop((gid, pid), None)
        pids = self._by_game.get(gid)
        if pids is not None:
            pids.discard(pid)
            if not pids:
                del self._by_game[gid]

    # ------------------------------------------------------------------ streams

    def opened(self, game: Game, player_id: int) -> None:
        """A Watch stream of ``player_id`` opened on ``game`` (0 = spectator, a game
        without a disconnect timeout, a player out of the game: not tracked)."""
        if (
            player_id <= 0
            or game.policy.disconnect_timeout_s <= 0
            or player_id not in game.policy.active_players
        ):
            return
        key = (game.game_id, player_id)
        before = self.connected(*key)
        count = self._open.get(key, 0) + 1
        self._open[key] = count
        if count == 1:
            self._write(self._put_marker(*key))
            if key not in self._clocks:
                self._clocks[key] = None
                self._by_game.setdefault(game.game_id, set()).add(player_id)
                self._write(self._create_clock(*key))
                if self.on_tracked is not None:
                    self.on_tracked()
            log.info("player_present", game_id=game.game_id, player_id=player_id)
        if self.connected(*key) != before:
            self._changed(game.game_id)

    def closed(self, game: Game, player_id: int) -> None:
        """A Watch stream of ``player_id`` closed; the instance's last one deletes its
        marker (the lease holder's clock takes it from there)."""
        key = (game.game_id, player_id)
        count = self._open.get(key)
        if count is None:
            return
        if count > 1:
            self._open[key] = count - 1
            return
        del self._open[key]
        self._write(self._delete(self._marker_key(*key)))
        log.info("player_lost", game_id=game.game_id, player_id=player_id)
        self._changed(game.game_id)

    def connected(self, game_id: str, player_id: int) -> bool | None:
        """True/False for a tracked player (some instance has a stream of it open or not),
        None when not tracked."""
        key = (game_id, player_id)
        if self._open.get(key, 0) > 0:
            return True
        now = self._now()
        live = any(now - seen <= self.ttl_s for seen in self._markers.get(key, {}).values())
        if live:
            return True
        return False if key in self._clocks else None

    def tracked_games(self) -> set[str]:
        """Games with at least one tracked player (their clocks need a lease holder)."""
        return set(self._by_game)

    def tracks(self, game_id: str) -> bool:
        """True when some player of ``game_id`` is tracked."""
        return game_id in self._by_game

    def version(self, game_id: str) -> int:
        """Goes up on every presence change of the game (a Watch resends its view)."""
        return self._versions.get(game_id, 0)

    def _changed(self, game_id: str) -> None:
        self._versions[game_id] = self._versions.get(game_id, 0) + 1
        game = self.games.games.get(game_id)
        if game is not None:
            game.notify()

    def away(self, game_id: str) -> frozenset[int]:
        """The tracked players of ``game_id`` who are not connected now."""
        pids = self._by_game.get(game_id)
        if not pids:
            return frozenset()
        return frozenset(pid for pid in pids if self.connected(game_id, pid) is False)

    def overlay(self, game_id: str, view: bytes, away: frozenset[int] | None = None) -> bytes:
        """The view JSON with ``players[].connected`` false for every tracked player of the
        game who is not connected (``away``, default :meth:`away` now); unchanged (same
        bytes) when none is."""
        if away is None:
            away = self.away(game_id)
        if not away or not view:
            return view
        data = orjson.loads(view)
        players = data.get("players") if isinstance(data, dict) else None
        if not isinstance(players, list):
            return view
        for player in players:
            if isinstance(player, dict) and player.get("id") in away:
                player["connected"] = False
        return view_dumps(data)

    # ------------------------------------------------------------------ KV writes

    def _write(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _put_marker(self, game_id: str, player_id: int) -> None:
        try:
            await put_with_ttl(self.kv, self._marker_key(game_id, player_id), b"1", self.ttl_s)
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("presence_not_stored", game_id=game_id, player_id=player_id, error=str(exc))

    async def _create_clock(self, game_id: str, player_id: int) -> None:
        try:
            await self.kv.create(self._clock_key(game_id, player_id), dumps({"since": None}))
        except nats.js.errors.KeyWrongLastSequenceError:
            pass  # tracked already (another stream, another instance)
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("clock_not_stored", game_id=game_id, player_id=player_id, error=str(exc))

    async def _set_clock(self, game_id: str, player_id: int, since: float | None) -> None:
        self._clocks[(game_id, player_id)] = since
        try:
            await self.kv.put(self._clock_key(game_id, player_id), dumps({"since": since}))
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("clock_not_stored", game_id=game_id, player_id=player_id, error=str(exc))

    async def _delete(self, key: str) -> None:
        with contextlib.suppress(TimeoutError, nats.errors.Error):
            await self.kv.delete(key)

    async def _drop_clock(self, game_id: str, player_id: int) -> None:
        self._untrack(game_id, player_id)
        await self._delete(self._clock_key(game_id, player_id))
        self._changed(game_id)

    # ------------------------------------------------------------------ renewal

    async def renew(self) -> None:
        """Renew this instance's markers and forget other instances' stale ones."""
        for gid, pid in list(self._open):
            await self._put_marker(gid, pid)
        now = self._now()
        for (gid, pid), markers in list(self._markers.items()):
            stale = [inst for inst, seen in markers.items() if now - seen > self.ttl_s]
            if not stale:
                continue
            before = self.connected(gid, pid)
            for inst in stale:
                del markers[inst]
            if not markers:
                del self._markers[(gid, pid)]
            if self.connected(gid, pid) != before:
                self._changed(gid)

    async def start(self) -> None:
        """Mirror the bucket and renew markers every TTL/3 seconds."""
        await self.mirror.start()
        await self.mirror.wait_ready(10.0)
        if self._renewer is None:
            self._renewer = asyncio.create_task(
                every(self.ttl_s / 3, self.renew, "presence_renewal_failed"), name="presence-renewal"
            )

    async def stop(self) -> None:
        """Stop renewing, removing and mirroring (markers expire by their TTL)."""
        tasks = [t for t in (self._renewer, *self._removing.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._renewer = None
        self._removing.clear()
        if self._writes:
            await asyncio.wait(list(self._writes), timeout=2.0)
        await self.mirror.stop()

    # ------------------------------------------------------------------ clocks

    async def run_clocks(self, games: Iterable[Game]) -> None:
        """One pass of the disconnect clocks of ``games`` (those whose lease this instance
        holds): start, reset, or remove (module docstring)."""
        now = time.time()
        for game in games:
            gid = game.game_id
            pids = list(self._by_game.get(gid, ()))
            if not pids or game.broken:
                continue
            if game.finished:
                for pid in pids:
                    await self._drop_clock(gid, pid)
                continue
            active = set(game.policy.active_players)
            timeout = game.policy.disconnect_timeout_s
            for pid in pids:
                if pid not in active or timeout <= 0:
                    await self._drop_clock(gid, pid)
                    continue
                away = self.connected(gid, pid) is False
                others = any(self.connected(gid, q) is not False for q in active if q != pid)
                since = self._clocks.get((gid, pid))
                running = away and others
                if running and since is None:
                    log.info("disconnect_clock_started", game_id=gid, player_id=pid, timeout_s=timeout)
                    await self._set_clock(gid, pid, now)
                elif not running and since is not None:
                    log.info("disconnect_clock_reset", game_id=gid, player_id=pid, away=away)
                    await self._set_clock(gid, pid, None)
                elif running and since is not None and now - since >= timeout:
                    self._remove(game, pid)

    def _remove(self, game: Game, player_id: int) -> None:
        key = (game.game_id, player_id)
        task = self._removing.get(key)
        if task is None or task.done():
            self._removing[key] = asyncio.get_running_loop().create_task(
                self._remove_now(game.game_id, player_id)
            )

    async def _remove_now(self, game_id: str, player_id: int) -> None:
        assert self.loop is not None, "a Presence that removes players is given the command loop"
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(game_id=game_id, player_id=player_id)
        try:
            outcome = await self.loop.handle(Command.disconnect(game_id, player_id))
            log.info(
                "player_disconnected",
                game_id=game_id,
                player_id=player_id,
                seq=outcome.seq,
                repeated=outcome.repeated,
            )
        except ServiceError as exc:
            if exc.code not in _DONE_CODES:
                log.warning("disconnect_not_recorded", code=exc.code, error=exc.message)
                return  # the next pass tries again
            log.info("disconnect_moot", code=exc.code)
        await self._drop_clock(game_id, player_id)
