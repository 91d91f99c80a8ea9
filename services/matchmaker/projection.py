"""The ratings projection: ``GameFinished`` events of ``GAME_EVENTS`` → KV ``RATINGS``.

Ratings are a projection of games played here, by their seats' owners (docs/ratings.md).

A durable pull consumer (:data:`DURABLE`, deliver policy *new*, explicit acks) on the
games' finish notices, ``games.*.finished`` (each ``GameFinished`` stored once more by
the session's event store in the same atomic batch as the event:
services/session/adapters/event_store.py), is shared by every matchmaker instance:
JetStream hands each message to one of them, and what was not acknowledged (an instance
killed, a session that did not answer) is delivered again — so a restart of the
projection, during a game or between games, loses no finish. It takes one message per
finished game, not every event of every game. A consumer left by an older version (on
``games.*.events``) is moved to the notices when the projection starts; it still rates
every ``GameFinished`` it gets, from either subject.

Which games are rated (:func:`rated_plan`, over facts only the platform writes):

- The game was **created here**: its log starts with a ``GameCreated`` that has no
  ``origin`` and was appended alone (:func:`created_here`). Every import gets an
  ``origin`` from the engine (``Engine.Reenact`` adds one, ``{}`` when none was given,
  whatever the file says) and appends its whole log in one write; a fork starts with
  ``GameForked``. So an imported copy of a rated game, or a log forged offline with
  ``"rated": true`` and any profile ids in its ``PlayerJoined``, is never rated.
- It was created rated: matchmade (its ``MATCH_GAMES`` entry, written by the
  matchmaker, holds the seats and the profiles of the tickets), or made by link with
  ``"rated": true`` in its config (the seats are its ``PlayerJoined`` events, whose
  ``profile_id`` the session passes only from a verified ``X-Profile-Token``).
- No profile holds two seats (the session refuses a second one, ``ALREADY_SEATED``; an
  older game that has one is not rated).

Ranks: :func:`services.matchmaker.ratings.ranks_of_game` (the winner, the survivors by
the final view, then the removed in reverse order of their ``PlayerRemoved``).

Exactly once per game, across restarts and redeliveries (keyed by game id):

1. The marker ``g.<game_id>`` in ``RATINGS`` is created once (``create``) with the
   game's changes (:func:`services.matchmaker.ratings.rate_game` over the ranks and the
   ratings before the game). A second processor finds it and uses the same changes,
   never computes its own.
2. Each profile's record ``r.<queue>.<profile_id>`` takes its change with a
   revision-checked update that also adds the game id to the record's ``applied`` list;
   a record that already lists the game is left alone.
3. The marker becomes ``applied``, the game in ``MATCH_GAMES`` gets ``finished_at``, and
   the message is acknowledged.

A crash between any two steps repeats the later ones only, each of which is idempotent.

:meth:`RatingsProjection.rebuild` replays the rule over every finished game of the log
and replaces the ``RATINGS`` records and markers with the result (a platform hit by
forged imports before this rule heals); :meth:`RatingsProjection.heal` runs it once
when the bucket's projection version (:data:`VERSION_KEY`) is older than
:data:`PROJECTION_VERSION` — at the first start after an upgrade — and
``python -m services.matchmaker rebuild-ratings`` runs it by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import nats.errors
import nats.js.errors
import structlog
from nats.js import api
from nats.js.client import JetStreamContext

from cellwar.v1 import events_pb2
from cellwar.v1.codes import EventType
from services.common.errors import ServiceError
from services.common.tasks import cancel
from services.matchmaker import ratings as rating_rules
from services.matchmaker.session_port import SessionPort
from services.matchmaker.store import (
    Conflict,
    EventLog,
    EventSink,
    KvStore,
    MatchEvent,
    Mirror,
    game_marker_key,
    rating_key,
)
from services.session.adapters.event_store import FINISHED_SUBJECTS, EventStore, StoreUnavailable

log = structlog.get_logger("cellwar.matchmaker.ratings")

#: The session's event stream and its subjects (docs/architecture/index.md), read only.
GAME_EVENTS = "GAME_EVENTS"
GAME_SUBJECTS = "games.*.events"
#: Name of the shared durable consumer.
DURABLE = "RATINGS_PROJECTION"
#: Messages fetched per pull.
FETCH_BATCH = 256
#: Revision-checked writes tried per record.
MAX_ATTEMPTS = 50
#: Version of the rating rule; a ``RATINGS`` bucket projected by an older one is rebuilt
#: (:meth:`RatingsProjection.heal`). 2: only games created here, one seat per profile,
#: leaving order.
PROJECTION_VERSION = 2
#: ``RATINGS`` key of the rule version the bucket was projected with.
VERSION_KEY = "v.projection"
#: ``RATINGS`` key held by the instance rebuilding (others wait for it).
REBUILD_LOCK_KEY = "v.rebuild"
#: A rebuild lock older than this (seconds) is taken over (its holder died).
REBUILD_LOCK_STALE_S = 900.0
#: Seconds a rebuild waits after taking the lock, for ratings begun before it to end.
REBUILD_SETTLE_S = 2.0


class GameEventType(StrEnum):
    """The session's event types this projection reads."""

    GAME_FINISHED = "GameFinished"


class NotRated(StrEnum):
    """Why a finished game is not rated (logged as ``reason``)."""

    NO_LOG = "no_log"
    NOT_CREATED_HERE = "not_created_here"  # an import or a fork
    NOT_RATED = "not_rated"  # made by link without "rated": true
    PROFILE_SEATED_TWICE = "profile_seated_twice"


@dataclass
class GameLog:
    """What a game's log says (only what the rating needs).

    Attributes:
        game_id: the game.
        kind / config: from its first event.
        created_here: :func:`created_here` of its first two events.
        seats: ``{"player_id", "name", "profile_id"}`` per ``PlayerJoined``, in order.
        removals: ``(seq, player_id)`` per ``PlayerRemoved``, in log order.
        winner: ``GameFinished.winner`` (None: a draw, or not finished).
        finished: a ``GameFinished`` was read.
    """

    game_id: str
    kind: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    created_here: bool = False
    seats: list[dict[str, Any]] = field(default_factory=list)
    removals: list[tuple[int, int]] = field(default_factory=list)
    winner: Any = None
    finished: bool = False


def _payload(event: events_pb2.Event) -> dict[str, Any]:
    try:
        value = json.loads(event.payload or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def created_here(events: Sequence[events_pb2.Event]) -> bool:
    """True when a log (its first two events suffice) is of a game created on this
    platform, not imported nor forked: a ``GameCreated`` without an ``origin`` key
    (``Engine.Reenact`` gives every import one) that was appended alone (a create
    appends its ``GameCreated`` by itself; an import appends its whole log in one write,
    every event with the same ``time`` and ``command_id`` — so imports recorded before
    the ``origin`` rule are told apart too)."""
    if not events or events[0].type != EventType.GAME_CREATED:
        return False
    first = events[0]
    if "origin" in _payload(first):
        return False
    if len(events) > 1:
        second = events[1]
        if second.time == first.time and second.command_id == first.command_id:
            return False
    return True


def fold_log(game_id: str, events: Sequence[events_pb2.Event]) -> GameLog:
    """The :class:`GameLog` of a game's events (per-game seq order)."""
    out = GameLog(game_id, created_here=created_here(events[:2]))
    if events:
        first = _payload(events[0])
        out.kind = str(first.get("kind", ""))
        config = first.get("config")
        out.config = config if isinstance(config, dict) else {}
    for event in events:
        if event.type == EventType.PLAYER_JOINED:
            joined = _payload(event)
            out.seats.append(
                {
                    "player_id": _int(joined.get("player_id"), event.actor),
                    "name": str(joined.get("name", "")),
                    "profile_id": str(joined.get("profile_id") or ""),
                }
            )
        elif event.type == EventType.PLAYER_REMOVED:
            out.removals.append((event.seq, _int(_payload(event).get("player_id"), event.actor)))
        elif event.type == EventType.GAME_FINISHED and not out.finished:
            out.finished = True
            out.winner = _payload(event).get("winner")
    return out


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def rated_plan(
    game: GameLog | None, matchmade: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, str]:
    """``({"queue", "seats", "link"}, "")`` for a game that is rated (module docstring),
    else ``(None, reason)`` (:class:`NotRated`).

    Args:
        game: the game's log (None: no log).
        matchmade: its ``MATCH_GAMES`` entry (None: not matchmade).
    """
    if game is None:
        return None, NotRated.NO_LOG
    if not game.created_here:
        return None, NotRated.NOT_CREATED_HERE
    if matchmade is not None:
        queue, seats, link = str(matchmade["queue"]), list(matchmade.get("seats") or ()), False
    elif game.config.get("rated") is True:
        players = _int(game.config.get("players"), 0)
        queue, seats, link = f"{game.kind}-{players}", game.seats[: players or None], True
    else:
        return None, NotRated.NOT_RATED
    profiles = [str(s.get("profile_id") or "") for s in seats]
    profiles = [p for p in profiles if p]
    if len(profiles) != len(set(profiles)):
        return None, NotRated.PROFILE_SEATED_TWICE
    return {"queue": queue, "seats": seats, "link": link}, ""


class GameLogs(Protocol):
    """Where the projection reads the games' logs."""

    async def read(self, game_id: str, matchmade: bool = False) -> GameLog | None:
        """The game's :class:`GameLog` (None: no log). Only the first two events are
        read unless the game may be rated (created here, and ``matchmade`` or its config
        says ``"rated": true``). Raises ServiceError ``UNAVAILABLE``."""
        ...

    async def finished_games(self) -> list[str]:
        """Every game with a ``GameFinished``, in the order of the first one's stream
        sequence. Raises ServiceError ``UNAVAILABLE``."""
        ...


class StreamGameLogs:
    """:class:`GameLogs` read from ``GAME_EVENTS`` with batched direct gets (the
    session's :class:`services.session.store.EventStore`, read only; no consumer),
    the stream scan of :meth:`finished_games` with an ephemeral consumer."""

    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self.store = EventStore(js)

    async def read(self, game_id: str, matchmade: bool = False) -> GameLog | None:
        try:
            head = await self.store.read(game_id, 1, 2)
            if not head:
                return None
            game = fold_log(game_id, head)
            if game.created_here and (matchmade or game.config.get("rated") is True):
                game = fold_log(game_id, await self.store.read(game_id))  # may be rated
            return game
        except ValueError:  # not a game id
            return None
        finally:  # StoreUnavailable (a ServiceError UNAVAILABLE) goes to the caller
            self.store.forget(game_id)

    async def finished_games(self) -> list[str]:
        config = api.ConsumerConfig(
            deliver_policy=api.DeliverPolicy.ALL,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=GAME_SUBJECTS,
            inactive_threshold=60.0,
        )
        seen: set[str] = set()
        order: list[str] = []
        try:
            sub = await self.js.pull_subscribe(GAME_SUBJECTS, stream=GAME_EVENTS, config=config)
        except nats.js.errors.NotFoundError:
            return []
        except (TimeoutError, nats.errors.Error) as exc:
            raise StoreUnavailable(f"scanning {GAME_EVENTS}: {exc}") from exc
        try:
            while True:
                try:
                    msgs = await sub.fetch(FETCH_BATCH, timeout=2.0)
                except (TimeoutError, nats.errors.TimeoutError):
                    break  # nothing more
                pending = 0
                for msg in msgs:
                    pending = int(msg.metadata.num_pending or 0)
                    try:
                        event = events_pb2.Event.FromString(msg.data)
                    except Exception:  # noqa: BLE001 - not an event of ours
                        continue
                    if event.type == EventType.GAME_FINISHED and event.game_id not in seen:
                        seen.add(event.game_id)
                        order.append(event.game_id)
                if not msgs or pending == 0:
                    break
        except nats.errors.Error as exc:
            raise StoreUnavailable(f"scanning {GAME_EVENTS}: {exc}") from exc
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return order


class MarkerState(StrEnum):
    """States of a game's marker ``g.<game_id>``."""

    COMPUTED = "computed"
    APPLIED = "applied"


class RatingsProjection:
    """Consumes ``GameFinished`` and keeps the OpenSkill ratings (module docstring).

    Args:
        js: JetStream context (the ``GAME_EVENTS`` consumer); None: no consumer
            (:meth:`start` does nothing; :meth:`rate` is called per finished game by
            whoever owns the projection; ``logs`` and ``events`` must be given).
        games: the ``MATCH_GAMES`` bucket (which games are rated, their seats).
        ratings: the ``RATINGS`` bucket.
        session: for the final view of a finished game (its ranks).
        games_mirror: optional live mirror of ``MATCH_GAMES`` to update at once.
        clock: unix time in seconds.
        logs: the games' logs (default: read from ``GAME_EVENTS``).
        heal_on_start: run :meth:`heal` before consuming (the default).
        events: where ``GameRated`` goes (default: ``MATCH_EVENTS`` through ``js``).

    Raises:
        ValueError: no ``js``, and no ``logs`` or no ``events``.
    """

    def __init__(
        self,
        js: JetStreamContext | None,
        games: KvStore,
        ratings: KvStore,
        session: SessionPort,
        games_mirror: Mirror | None = None,
        clock: Callable[[], float] = time.time,
        logs: GameLogs | None = None,
        heal_on_start: bool = True,
        events: EventSink | None = None,
    ) -> None:
        if js is None and (logs is None or events is None):
            raise ValueError("a projection without js needs logs and events")
        self.js = js
        self.logs = logs or StreamGameLogs(js)
        self.heal_on_start = heal_on_start
        self.events = events or EventLog(js)
        self.games = games
        self.ratings = ratings
        self.session = session
        self.games_mirror = games_mirror
        self.clock = clock
        self._task: asyncio.Task[None] | None = None
        self._sub: Any = None
        self._stopping = asyncio.Event()
        self.games_rated = 0

    def start(self) -> None:
        """Start consuming in the background (waits for ``GAME_EVENTS`` to exist); without
        ``js``, nothing to consume: nothing happens."""
        if self.js is None:
            log.info("ratings_projection_without_consumer")
            return
        self._task = asyncio.create_task(self._run(), name="ratings-projection")

    async def stop(self) -> None:
        """Stop consuming (an unacknowledged message is delivered again later)."""
        self._stopping.set()
        await cancel(self._task)
        self._task = None
        if self._sub is not None:  # the durable consumer stays; only this inbox goes
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _subscribe(self) -> Any:
        config = api.ConsumerConfig(
            durable_name=DURABLE,
            deliver_policy=api.DeliverPolicy.NEW,
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=60.0,
            max_ack_pending=4096,
            filter_subject=FINISHED_SUBJECTS,
        )
        # create, or update one made with another filter (an older version's, on every event)
        await self.js.add_consumer(GAME_EVENTS, config)
        return await self.js.pull_subscribe_bind(durable=DURABLE, stream=GAME_EVENTS)

    async def _run(self) -> None:
        sub = None
        healed = not self.heal_on_start
        while not self._stopping.is_set():
            if sub is None:
                try:
                    sub = self._sub = await self._subscribe()
                    log.info("ratings_projection_started", durable=DURABLE)
                except (TimeoutError, nats.errors.Error) as exc:
                    # GAME_EVENTS is the session's: it may not exist yet.
                    log.info("ratings_projection_waiting", error=str(exc))
                    await asyncio.sleep(1.0)
                    continue
            if not healed:  # after the durable exists, so no finish is missed meanwhile
                try:
                    await self.heal()
                    healed = True
                except ServiceError as exc:
                    log.warning("ratings_heal_failed", code=exc.code, error=exc.message)
                    await asyncio.sleep(2.0)
                    continue
            try:
                msgs = await sub.fetch(FETCH_BATCH, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            except nats.errors.Error as exc:
                log.warning("ratings_fetch_failed", error=str(exc))
                await asyncio.sleep(0.5)
                continue
            for msg in msgs:
                await self._handle(msg)

    async def _handle(self, msg: Any) -> None:
        try:
            event = events_pb2.Event.FromString(msg.data)
        except Exception:  # noqa: BLE001 - not ours to judge; never block the stream
            await _ack(msg)
            return
        if event.type != GameEventType.GAME_FINISHED:
            await _ack(msg)
            return
        try:
            await self.rate(event.game_id)
        except ServiceError as exc:
            log.warning("game_not_rated_yet", game_id=event.game_id, code=exc.code, error=exc.message)
            with contextlib.suppress(Exception):
                await msg.nak(delay=1.0)
            return
        except Exception:  # noqa: BLE001 - redelivered later
            log.exception("game_rating_failed", game_id=event.game_id)
            with contextlib.suppress(Exception):
                await msg.nak(delay=2.0)
            return
        await _ack(msg)

    async def plan(self, game_id: str) -> tuple[dict[str, Any] | None, GameLog | None, str]:
        """``(plan, log, reason)``: :func:`rated_plan` of the game's log and its
        ``MATCH_GAMES`` entry. Raises ServiceError ``UNAVAILABLE``."""
        entry = await self.games.get(game_id)
        game_log = await self.logs.read(game_id, matchmade=entry is not None)
        plan, reason = rated_plan(game_log, entry[0] if entry else None)
        return plan, game_log, reason

    async def rate(self, game_id: str) -> list[rating_rules.Change]:
        """Rate one finished game exactly once (steps 1–3). Returns its changes (empty for
        a game that is not rated).

        Raises:
            ServiceError: ``UNAVAILABLE`` (NATS or the session, or a rebuild holds
                :data:`REBUILD_LOCK_KEY`: the finish is redelivered after it), ``CONFLICT``.
        """
        if await self.ratings.get(REBUILD_LOCK_KEY) is not None:
            raise ServiceError("UNAVAILABLE", "the ratings are being rebuilt; redelivered later")
        plan, game_log, reason = await self.plan(game_id)
        if plan is None or game_log is None:
            if reason != NotRated.NOT_RATED:
                log.info("game_not_rated", game_id=game_id, reason=reason)
            await self._mark_finished(game_id)
            return []
        queue = str(plan["queue"])
        seats = list(plan["seats"])
        marker_key = game_marker_key(game_id)
        marker = await self.ratings.get(marker_key)
        if marker is None:
            view = await self.session.final_view(game_id)
            marker_value = self._compute(
                game_id, queue, seats, game_log, rating_rules.ranks_from_view(view),
                await self._before(queue, seats),
            )
            try:
                await self.ratings.create(marker_key, marker_value)
            except Conflict:
                marker = await self.ratings.get(marker_key)
                if marker is None:
                    raise ServiceError("CONFLICT", f"game {game_id}: marker vanished") from None
                marker_value = marker[0]
        else:
            marker_value = marker[0]
        changes = [rating_rules.Change.from_json(c) for c in marker_value.get("changes") or ()]
        if marker_value.get("state") != MarkerState.APPLIED:
            names = _names(seats)
            for change in changes:
                await self._apply(queue, game_id, change, names.get(change.profile_id, ""))
            await self.ratings.put(marker_key, {**marker_value, "state": MarkerState.APPLIED.value})
            self.games_rated += 1
            log.info(
                "game_rated",
                game_id=game_id,
                queue=queue,
                changes={c.profile_id: round(c.mu_delta, 3) for c in changes},
            )
            self.events.publish(
                MatchEvent.GAME_RATED,
                {"game_id": game_id, "queue": queue, "changes": [c.to_json() for c in changes]},
                f"gr-{game_id}",
            )
        await self._mark_finished(game_id)
        return changes

    async def _before(self, queue: str, seats: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
        """``{seat key: (mu, sigma)}`` of the seats now (the prior for anonymous ones)."""
        before: dict[str, tuple[float, float]] = {}
        for seat in seats:
            key = rating_rules.seat_key(seat)
            record = None
            if not rating_rules.is_anonymous(key):
                got = await self.ratings.get(rating_key(queue, key))
                record = got[0] if got else None
            record = record or rating_rules.new_record("")
            before[key] = (float(record["mu"]), float(record["sigma"]))
        return before

    def _compute(
        self,
        game_id: str,
        queue: str,
        seats: Sequence[Mapping[str, Any]],
        game_log: GameLog,
        view_ranks: Mapping[int, int],
        before: Mapping[str, tuple[float, float]],
    ) -> dict[str, Any]:
        """The marker of a game: its ranks (:func:`~services.matchmaker.ratings.ranks_after_removals`
        of the final view's ranks, the winner and the removals) and changes."""
        ranks_by_player = rating_rules.ranks_after_removals(view_ranks, game_log.winner, game_log.removals)
        ranks = rating_rules.seat_ranks(seats, ranks_by_player)
        rated = {k: v for k, v in before.items() if k in ranks}
        changes = [
            c for c in rating_rules.rate_game(rated, ranks) if not rating_rules.is_anonymous(c.profile_id)
        ]
        return {
            "state": MarkerState.COMPUTED.value,
            "v": PROJECTION_VERSION,
            "game_id": game_id,
            "queue": queue,
            "ranks": {str(k): v for k, v in ranks_by_player.items()},
            "view_ranks": {str(k): v for k, v in view_ranks.items()},
            "changes": [c.to_json() for c in changes],
            "at": self.clock(),
        }

    # ------------------------------------------------------------------ rebuild

    async def rebuild(self) -> dict[str, int]:
        """Replay the rating rule over every finished game of ``GAME_EVENTS`` (in the order
        of their ``GameFinished``) from the prior, and make ``RATINGS`` exactly the result:
        rebuilt records and markers are written, any other ``r.`` record or ``g.`` marker
        (a forged or imported game's, a second seat's) is deleted. A game's final-view
        ranks are taken from its old marker when it has one (else the session's final
        view), so the session is asked only for games never rated before.

        Returns:
            ``{"games_scanned", "games_rated", "records", "records_deleted",
            "markers_deleted"}``.

        Raises:
            ServiceError: ``UNAVAILABLE`` (NATS or the session); nothing is written then.
        """
        finished = await self.logs.finished_games()
        records: dict[str, dict[str, Any]] = {}
        markers: dict[str, dict[str, Any]] = {}
        for game_id in finished:
            plan, game_log, reason = await self.plan(game_id)
            if plan is None or game_log is None:
                continue
            queue, seats = str(plan["queue"]), list(plan["seats"])
            old = await self.ratings.get(game_marker_key(game_id))
            view_ranks = _old_view_ranks(old[0]) if old else None
            if view_ranks is None:
                view_ranks = rating_rules.ranks_from_view(await self.session.final_view(game_id))
            before: dict[str, tuple[float, float]] = {}
            for seat in seats:
                key = rating_rules.seat_key(seat)
                record = records.get(rating_key(queue, key)) or rating_rules.new_record("")
                before[key] = (float(record["mu"]), float(record["sigma"]))
            marker = self._compute(game_id, queue, seats, game_log, view_ranks, before)
            if old and "at" in old[0]:
                marker["at"] = old[0]["at"]
            marker["state"] = MarkerState.APPLIED.value
            markers[game_marker_key(game_id)] = marker
            names = _names(seats)
            for c in marker["changes"]:
                change = rating_rules.Change.from_json(c)
                key = rating_key(queue, change.profile_id)
                name = names.get(change.profile_id, "")
                record = records.get(key) or rating_rules.new_record(name)
                records[key] = rating_rules.apply_change(record, game_id, change, name) or record
        wanted = {**records, **markers}
        deleted = {"r.": 0, "g.": 0}
        for key in await self.ratings.keys():
            prefix = key[:2]
            if prefix in deleted and key not in wanted:
                await self.ratings.delete(key)
                deleted[prefix] += 1
        for key, value in wanted.items():
            got = await self.ratings.get(key)
            if got is None or got[0] != value:
                await self.ratings.put(key, value)
        report = {
            "games_scanned": len(finished),
            "games_rated": len(markers),
            "records": len(records),
            "records_deleted": deleted["r."],
            "markers_deleted": deleted["g."],
        }
        log.info("ratings_rebuilt", **report)
        return report

    async def heal(self) -> dict[str, int] | None:
        """:meth:`rebuild` once per rule version: when ``RATINGS`` says it was projected by
        an older rule (:data:`VERSION_KEY` below :data:`PROJECTION_VERSION`, or absent),
        one instance rebuilds (holding :data:`REBUILD_LOCK_KEY`) and the others wait for
        it. Returns the rebuild's report (None: nothing to do, or another instance did it).

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        return await self._locked_rebuild(only_if_old=True)

    async def rebuild_now(self) -> dict[str, int]:
        """:meth:`rebuild` whatever the version says, holding :data:`REBUILD_LOCK_KEY`
        (waiting for another rebuild to end first), then record the version
        (``python -m services.matchmaker rebuild-ratings``). Raises ServiceError."""
        report = await self._locked_rebuild(only_if_old=False)
        return report if report is not None else {}

    async def _locked_rebuild(self, *, only_if_old: bool) -> dict[str, int] | None:
        while True:
            got = await self.ratings.get(VERSION_KEY)
            if only_if_old and got is not None and int(got[0].get("version", 0)) >= PROJECTION_VERSION:
                return None
            try:
                await self.ratings.create(REBUILD_LOCK_KEY, {"at": self.clock()})
            except Conflict:
                lock = await self.ratings.get(REBUILD_LOCK_KEY)
                if lock is not None and self.clock() - float(lock[0].get("at", 0)) > REBUILD_LOCK_STALE_S:
                    await self.ratings.delete(REBUILD_LOCK_KEY)  # its holder died
                    continue
                await asyncio.sleep(1.0)  # another instance is rebuilding
                continue
            try:
                # A rating that began before the lock was taken ends first (rate() checks
                # the lock before it reads anything, and takes well under this long).
                await asyncio.sleep(REBUILD_SETTLE_S)
                log.info("ratings_rebuild_started", version=PROJECTION_VERSION)
                report = await self.rebuild()
                await self.ratings.put(VERSION_KEY, {"version": PROJECTION_VERSION, "at": self.clock()})
                return report
            finally:
                with contextlib.suppress(ServiceError):
                    await self.ratings.delete(REBUILD_LOCK_KEY)

    async def _apply(self, queue: str, game_id: str, change: rating_rules.Change, name: str) -> None:
        key = rating_key(queue, change.profile_id)
        for _ in range(MAX_ATTEMPTS):
            got = await self.ratings.get(key)
            record = got[0] if got else rating_rules.new_record(name)
            new = rating_rules.apply_change(record, game_id, change, name)
            if new is None:
                return
            try:
                if got is None:
                    await self.ratings.create(key, new)
                else:
                    await self.ratings.update(key, new, got[1])
                return
            except Conflict:
                continue
        raise ServiceError("CONFLICT", f"rating {key} changed too often")

    async def _mark_finished(self, game_id: str) -> None:
        for _ in range(MAX_ATTEMPTS):
            got = await self.games.get(game_id)
            if got is None or got[0].get("finished_at"):
                return
            new = {**got[0], "finished_at": self.clock()}
            try:
                rev = await self.games.update(game_id, new, got[1])
            except Conflict:
                continue
            if self.games_mirror is not None:
                self.games_mirror.apply_now(game_id, new, rev)
            return


def _names(seats: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {str(s.get("profile_id")): str(s.get("name", "")) for s in seats}


def _old_view_ranks(marker: Mapping[str, Any]) -> dict[int, int] | None:
    """The final view's ranks an existing marker kept: ``view_ranks`` (rule 2), or
    ``ranks`` of a rule-1 marker (those were the view's ranks); None when unreadable."""
    ranks = marker.get("view_ranks") if "v" in marker else marker.get("ranks")
    if not isinstance(ranks, dict) or not ranks:
        return None
    try:
        return {int(k): int(v) for k, v in ranks.items()}
    except (TypeError, ValueError):
        return None


async def _ack(msg: Any) -> None:
    with contextlib.suppress(nats.errors.Error, nats.js.errors.Error, TimeoutError):
        await msg.ack()
