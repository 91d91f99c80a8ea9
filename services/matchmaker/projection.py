"""The ratings projection: ``GameFinished`` events of ``GAME_EVENTS`` → KV ``RATINGS``.

A durable pull consumer (:data:`DURABLE`, deliver policy *new*, explicit acks) on
``games.*.events`` is shared by every matchmaker instance: JetStream hands each message
to one of them, and what was not acknowledged (an instance killed, a session that did
not answer) is delivered again — so a restart of the projection, during a game or
between games, loses no finish.

Exactly once per game, across restarts and redeliveries (keyed by game id):

1. A ``GameFinished`` of a game in ``MATCH_GAMES`` is rated (a matchmade game); so is a
   game made by link with ``"rated": true`` in its config: its seats are read from its
   first events (:class:`StreamLinkGames`: ``GameCreated``, then each ``PlayerJoined``,
   whose ``profile_id`` the engine records in a rated game for a seat joined with a
   profile). Any other game is not rated.
2. The marker ``g.<game_id>`` in ``RATINGS`` is created once (``create``) with the
   game's changes (:func:`services.matchmaker.ratings.rate_game` over the final public
   view's ranks and the ratings before the game). A second processor finds it and uses
   the same changes, never computes its own.
3. Each profile's record ``r.<queue>.<profile_id>`` takes its change with a
   revision-checked update that also adds the game id to the record's ``applied`` list;
   a record that already lists the game is left alone.
4. The marker becomes ``applied``, the game in ``MATCH_GAMES`` gets ``finished_at``, and
   the message is acknowledged.

A crash between any two steps repeats the later ones only, each of which is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
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
    Bucket,
    Conflict,
    EventLog,
    MatchEvent,
    Mirror,
    game_marker_key,
    rating_key,
)

log = structlog.get_logger("cellwar.matchmaker.ratings")

#: The session's event stream and its subjects (DESIGN §6), read only.
GAME_EVENTS = "GAME_EVENTS"
GAME_SUBJECTS = "games.*.events"
#: Name of the shared durable consumer.
DURABLE = "RATINGS_PROJECTION"
#: Messages fetched per pull.
FETCH_BATCH = 256
#: Revision-checked writes tried per record.
MAX_ATTEMPTS = 50


class GameEventType(StrEnum):
    """The session's event types this projection reads."""

    GAME_FINISHED = "GameFinished"


#: Events of a game's start read to find a rated link game's seats, at most.
LINK_EVENTS_READ = 64


class LinkGames(Protocol):
    """Where the projection learns of rated games made by link."""

    async def rated_game(self, game_id: str) -> dict[str, Any] | None:
        """``{"queue", "kind", "players", "rated": True, "link": True, "seats": [{"player_id",
        "name", "profile_id"}]}`` of a game created by link with ``"rated": true``; None
        for any other game. Raises ServiceError ``UNAVAILABLE``."""
        ...


class StreamLinkGames:
    """:class:`LinkGames` read from ``GAME_EVENTS``: the game's ``GameCreated`` (its config
    says ``rated``) and the ``PlayerJoined`` events after it (seat, name, the profile the
    engine recorded), one message get by subject each (no consumer)."""

    def __init__(self, js: JetStreamContext, max_events: int = LINK_EVENTS_READ) -> None:
        self.js = js
        self.max_events = max_events

    async def _next(self, subject: str, stream_seq: int) -> tuple[int, events_pb2.Event] | None:
        try:
            msg = await self.js.get_msg(GAME_EVENTS, seq=stream_seq, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            return None
        except (TimeoutError, nats.errors.Error, nats.js.errors.Error) as exc:
            raise ServiceError("UNAVAILABLE", f"reading {subject}: {exc}") from exc
        return int(msg.seq or 0), events_pb2.Event.FromString(msg.data or b"")

    async def rated_game(self, game_id: str) -> dict[str, Any] | None:
        subject = f"games.{game_id}.events"
        found = await self._next(subject, 1)
        if found is None or found[1].type != EventType.GAME_CREATED:
            return None
        created = _payload(found[1])
        config = created.get("config") or {}
        if config.get("rated") is not True:
            return None
        kind, players = str(created.get("kind", "")), int(config.get("players", 0))
        seats: list[dict[str, Any]] = []
        stream_seq = found[0]
        for _ in range(self.max_events):
            found = await self._next(subject, stream_seq + 1)
            if found is None:
                break
            stream_seq, event = found
            if event.type == EventType.PLAYER_JOINED:
                joined = _payload(event)
                seats.append(
                    {
                        "player_id": int(joined.get("player_id", event.actor)),
                        "name": str(joined.get("name", "")),
                        "profile_id": str(joined.get("profile_id") or ""),
                    }
                )
                if len(seats) >= players:
                    break
            elif event.type != EventType.PLAYER_REMOVED:  # the seats are taken by now
                break
        return {
            "queue": f"{kind}-{players}",
            "kind": kind,
            "players": players,
            "rated": True,
            "link": True,
            "seats": seats,
        }


def _payload(event: events_pb2.Event) -> dict[str, Any]:
    try:
        value = json.loads(event.payload or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class MarkerState(StrEnum):
    """States of a game's marker ``g.<game_id>``."""

    COMPUTED = "computed"
    APPLIED = "applied"


class RatingsProjection:
    """Consumes ``GameFinished`` and keeps the OpenSkill ratings (module docstring).

    Args:
        js: JetStream context.
        games: the ``MATCH_GAMES`` bucket (which games are rated, their seats).
        ratings: the ``RATINGS`` bucket.
        session: for the final view of a finished game (its ranks).
        games_mirror: optional live mirror of ``MATCH_GAMES`` to update at once.
        clock: unix time in seconds.
        link_games: rated games made by link (default: read from ``GAME_EVENTS``).
    """

    def __init__(
        self,
        js: JetStreamContext,
        games: Bucket,
        ratings: Bucket,
        session: SessionPort,
        games_mirror: Mirror | None = None,
        clock: Callable[[], float] = time.time,
        link_games: LinkGames | None = None,
    ) -> None:
        self.js = js
        self.link_games = link_games or StreamLinkGames(js)
        self.events = EventLog(js)
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
        """Start consuming in the background (waits for ``GAME_EVENTS`` to exist)."""
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
            filter_subject=GAME_SUBJECTS,
        )
        return await self.js.pull_subscribe(
            GAME_SUBJECTS, durable=DURABLE, stream=GAME_EVENTS, config=config
        )

    async def _run(self) -> None:
        sub = None
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

    async def rate(self, game_id: str) -> list[rating_rules.Change]:
        """Rate one finished game exactly once (steps 1–4). Returns its changes (empty for
        a game that is not rated).

        Raises:
            ServiceError: ``UNAVAILABLE`` (NATS or the session), ``CONFLICT``.
        """
        entry = await self.games.get(game_id)
        if entry is not None:
            game, _ = entry
        else:
            link = await self.link_games.rated_game(game_id)
            if link is None:
                return []
            game = link
        queue = str(game["queue"])
        seats = list(game.get("seats") or ())
        marker_key = game_marker_key(game_id)
        marker = await self.ratings.get(marker_key)
        if marker is None:
            marker_value = await self._compute(game_id, queue, seats)
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
            names = {str(s.get("profile_id")): str(s.get("name", "")) for s in seats}
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

    async def _compute(self, game_id: str, queue: str, seats: list[dict[str, Any]]) -> dict[str, Any]:
        view = await self.session.final_view(game_id)
        ranks_by_player = rating_rules.ranks_from_view(view)
        ranks = rating_rules.seat_ranks(seats, ranks_by_player)
        before: dict[str, tuple[float, float]] = {}
        for seat in seats:
            key = rating_rules.seat_key(seat)
            if key not in ranks:
                continue
            record = None
            if not rating_rules.is_anonymous(key):
                got = await self.ratings.get(rating_key(queue, key))
                record = got[0] if got else None
            record = record or rating_rules.new_record("")
            before[key] = (float(record["mu"]), float(record["sigma"]))
        changes = [
            c for c in rating_rules.rate_game(before, ranks) if not rating_rules.is_anonymous(c.profile_id)
        ]
        return {
            "state": MarkerState.COMPUTED.value,
            "game_id": game_id,
            "queue": queue,
            "ranks": {str(k): v for k, v in ranks_by_player.items()},
            "changes": [c.to_json() for c in changes],
            "at": self.clock(),
        }

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
                await self.games_mirror.apply(game_id, new, rev)
            return


async def _ack(msg: Any) -> None:
    with contextlib.suppress(nats.errors.Error, nats.js.errors.Error, TimeoutError):
        await msg.ack()
