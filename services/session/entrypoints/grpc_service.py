"""The Session gRPC servicer: thin entry points over the command loop
(services/session/service_layer/loop.py) and the game cache (services/session/service_layer/cache.py).

Every RPC binds ``game_id``/``player_id`` to the log context, turns a
:class:`ServiceError` into a gRPC status with the machine code in trailing metadata
(``services.common.errors``), and never lets an unexpected exception escape unlogged.
A view's ``seq``, a command reply's ``seq`` and a Watch frame's ``seq`` are the player's
own view version (the engine's envelope): it moves only when that player's view changes.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable

import grpc
import structlog

from cellwar.v1 import engine_pb2, session_pb2, session_pb2_grpc
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError, abort, status_for
from services.common.jsonwire import dumps
from services.common.streams import Linger, take_batch
from services.session.adapters.directory import Directory
from services.session.adapters.profiles import Profiles, public
from services.session.domain.commands import Command
from services.session.domain.game import Game, broken_error
from services.session.entrypoints import watches
from services.session.entrypoints.presence import Presence
from services.session.entrypoints.progress import ProgressRelay
from services.session.entrypoints.ticker import WANTED_S
from services.session.service_layer.cache import GameCache
from services.session.service_layer.library import Library
from services.session.service_layer.loop import CommandLoop, Outcome
from services.session.service_layer.spectators import Spectators
from services.session.service_layer.visibility import (
    check_fork,
    check_live_view,
    list_events,
    replay,
    stream_events,
)

log = structlog.get_logger("cellwar.session")

#: The most events an imported log may have (the gateway bounds the body's bytes too).
MAX_IMPORT_EVENTS = 200_000


def _json_object(data: bytes, what: str) -> dict:
    """Parse a JSON object. Raises ServiceError MALFORMED."""
    try:
        value = json.loads(data or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError(ErrorCode.MALFORMED, f"{what} is not valid JSON") from exc
    if not isinstance(value, dict):
        raise ServiceError(ErrorCode.MALFORMED, f"{what} must be a JSON object")
    return value


def _refused(exc: ServiceError) -> None:
    """Log a refused command: ``error`` for INTERNAL and GAME_BROKEN, else ``info``."""
    level = "error" if exc.code in (ErrorCode.INTERNAL, ErrorCode.GAME_BROKEN) else "info"
    getattr(log, level)("rpc_refused", code=exc.code, error=exc.message)


def rpc(fn: Callable) -> Callable:
    """Wrap a unary RPC: log context, ServiceError -> status, bugs -> INTERNAL."""

    @functools.wraps(fn)
    async def wrapper(self, request, context):
        with structlog.contextvars.bound_contextvars(
            rpc=fn.__name__,
            game_id=getattr(request, "game_id", None) or None,
            player_id=getattr(request, "player_id", None) or None,
        ):
            try:
                return await fn(self, request, context)
            except ServiceError as exc:
                _refused(exc)
                await abort(context, exc.code, exc.message, exc.seq)
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:  # noqa: BLE001 - the service never crashes on input
                log.exception("rpc_failed")
                await abort(context, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")

    return wrapper


#: Commands of one ``Commands`` stream running at once; past it the stream's next frames
#: are not read until one is answered (gRPC's flow control then holds the sender back).
STREAM_IN_FLIGHT = 512
#: A ``CommandResults`` message stops taking results past this many bytes of views (a
#: 1024x1024 board's views are large; the message limit is ``MAX_MESSAGE_BYTES``).
RESULTS_MAX_BYTES = 4 * 1024 * 1024
#: The RPC whose log name and body each frame's command takes.
_FRAME_RPC = {"act": "Act", "end_turn": "EndTurn"}
#: Writes one update of a Watch (the RPC's ``context.write``, or a ``Watches`` stream's).
WatchSend = Callable[[session_pb2.WatchUpdate], Awaitable[None]]


def _take(results: list) -> list:
    """Remove and return the first results of ``results`` up to :data:`RESULTS_MAX_BYTES`
    of views (at least one)."""
    return take_batch(
        results, lambda r: len(r.reply.view) if r.HasField("reply") else 0, RESULTS_MAX_BYTES
    )


def _failed(frame_id: int, status: grpc.StatusCode, details: str, code: str = "", seq: int | None = None):
    """The :class:`CommandResult` of a failed command (``status`` as the unary RPC ends)."""
    return session_pb2.CommandResult(
        id=frame_id,
        error=session_pb2.CommandError(
            status=status.value[0], details=details, code=str(code), seq=seq
        ),
    )


class SessionServicer(session_pb2_grpc.SessionServicer):
    """RPCs of ``cellwar.v1.Session`` (see proto/cellwar/v1/session.proto).

    Args:
        games: the game cache; loop: the command loop; presence: open streams and
            disconnect clocks; directory: the lobby; profiles: campaign progress (None:
            none kept); closing: set when the server stops (open Watch streams end
            with UNAVAILABLE); relay: progress of running games held elsewhere;
            library: the engine's read-only game data (default ``Library(games.engine)``);
            spectators: the delayed spectator views (default ``Spectators(games)``).
    """

    def __init__(
        self,
        games: GameCache,
        loop: CommandLoop,
        presence: Presence,
        directory: Directory,
        profiles: Profiles | None,
        closing: asyncio.Event,
        *,
        relay: ProgressRelay | None = None,
        library: Library | None = None,
        spectators: Spectators | None = None,
    ) -> None:
        self.games = games
        self.loop = loop
        self.presence = presence
        self.directory = directory
        self.profiles = profiles
        self.closing = closing
        self.relay = relay
        self.library = library or Library(games.engine)
        self.spectators = spectators or Spectators(games)
        self._closer: asyncio.Future | None = None  # wakes the Watches when `closing` is set

    async def _view(self, game: Game, player_id: int) -> tuple[int, bytes]:
        """``(version, view with presence)`` of a player now (rendered once per seq, run
        progress and set of players away: :attr:`Game.shown`). A finished game's views
        carry no presence: its streams close at the end, and every view of its last seq
        (a command's answer, ``GET /state``, the ``finished`` frame) must be the same."""
        away = frozenset() if game.finished else self.presence.away(game.game_id)
        at = (game.seq, game.progress, away)
        if game.shown_at == at:
            shown = game.shown.get(player_id)
            if shown is not None:
                return shown
        version, view = await self.games.view(game, player_id)
        shown = version, self.presence.overlay(game.game_id, view, away)
        deadline_known = not game.timed or game.turn_began[0] == game.state.turn_seq
        if deadline_known and at == (game.seq, game.progress, away):
            if game.shown_at != at:
                game.shown, game.shown_at = {}, at
            game.shown[player_id] = shown
        return shown

    async def _reply(self, outcome: Outcome, player_id: int) -> session_pb2.CommandReply:
        game = outcome.game
        structlog.contextvars.bind_contextvars(player_id=player_id, seq=outcome.seq)
        _, view = await self._view(game, player_id)
        version = await self.loop.version_after(outcome, player_id)
        return session_pb2.CommandReply(seq=version, player_id=player_id, view=view)

    @rpc
    async def CreateGame(self, request, context):  # noqa: N802 - gRPC method names
        config = _json_object(request.config, "config")
        if request.profile_id:
            structlog.contextvars.bind_contextvars(profile_id=request.profile_id)
        game = await self.loop.create(
            request.kind, config, request.command_id, profile_id=request.profile_id
        )
        return session_pb2.CreateGameReply(game_id=game.game_id)

    def _profiles(self) -> Profiles:
        """The profile store. Raises ServiceError UNAVAILABLE when there is none."""
        if self.profiles is None:
            raise ServiceError(ErrorCode.UNAVAILABLE, "this session keeps no profiles")
        return self.profiles

    @rpc
    async def Patterns(self, request, context):  # noqa: N802
        return engine_pb2.PatternsReply(catalogue=await self.library.patterns())

    @rpc
    async def Levels(self, request, context):  # noqa: N802
        return engine_pb2.LevelsReply(levels=await self.library.levels())

    @rpc
    async def CreateProfile(self, request, context):  # noqa: N802
        profile_id, profile = await self._profiles().create(request.name, request.command_id)
        return session_pb2.Profile(profile_id=profile_id, data=dumps(public(profile)))

    @rpc
    async def GetProfile(self, request, context):  # noqa: N802
        structlog.contextvars.bind_contextvars(profile_id=request.profile_id)
        profile = await self._profiles().get(request.profile_id)
        return session_pb2.Profile(profile_id=request.profile_id, data=dumps(public(profile)))

    @rpc
    async def Join(self, request, context):  # noqa: N802
        # the profile is recorded by the engine in a rated game only
        outcome = await self.loop.handle(
            Command.join(request.game_id, request.name, request.profile_id, request.command_id)
        )
        return await self._reply(outcome, outcome.player_id)

    @rpc
    async def Act(self, request, context):  # noqa: N802
        return await self._act(request)

    async def _act(self, request: session_pb2.ActRequest) -> session_pb2.CommandReply:
        """Body of Act (unary and a ``Commands`` frame). Raises ServiceError."""
        action = _json_object(request.action, "action")
        outcome = await self.loop.handle(
            Command.act(request.game_id, request.player_id, action, request.command_id)
        )
        return await self._reply(outcome, request.player_id)

    @rpc
    async def EndTurn(self, request, context):  # noqa: N802
        return await self._end_turn(request)

    async def _end_turn(self, request: session_pb2.EndTurnRequest) -> session_pb2.CommandReply:
        """Body of EndTurn (unary and a ``Commands`` frame). Raises ServiceError."""
        outcome = await self.loop.handle(
            Command.end_turn(request.game_id, request.player_id, request.command_id)
        )
        return await self._reply(outcome, request.player_id)

    async def Commands(self, request_iterator, context):  # noqa: N802
        """Act and EndTurn frames of one gateway channel (proto ``Commands``;
        docs/architecture/batching.md "Gateway to session").

        Each frame runs in its own task as soon as it is read (at most
        :data:`STREAM_IN_FLIGHT` at once; the game's lock orders one game's commands);
        the results that are ready are written together in one ``CommandResults``. A
        result is what the unary RPC answers: its reply, or its status, details,
        ``cellwar-error-code`` and ``cellwar-error-seq``. Once the server stops
        (``closing``) frames still read are answered UNAVAILABLE without a code (as a
        stopping server refuses a unary call: the gateway moves them to another
        instance), and the stream ends once the commands running are answered. When
        the caller goes away its running commands are cancelled, as unary calls are.
        """
        results: list[session_pb2.CommandResult] = []
        ready = asyncio.Event()
        slots = asyncio.Semaphore(STREAM_IN_FLIGHT)
        tasks: set[asyncio.Task] = set()
        linger = Linger()

        def done(task: asyncio.Task) -> None:
            tasks.discard(task)
            ready.set()

        async def run(frame: session_pb2.CommandFrame) -> None:
            try:
                results.append(await self._frame(frame))
            finally:
                slots.release()

        async def read() -> None:
            async for batch in request_iterator:
                for frame in batch.frames:
                    if self.closing.is_set():
                        results.append(
                            _failed(frame.id, grpc.StatusCode.UNAVAILABLE, "session service is stopping")
                        )
                        ready.set()
                        continue
                    await slots.acquire()
                    task = asyncio.create_task(run(frame))
                    tasks.add(task)
                    task.add_done_callback(done)

        reader = asyncio.create_task(read())
        reader.add_done_callback(lambda _: ready.set())
        stopping = asyncio.create_task(self.closing.wait())
        stopping.add_done_callback(lambda _: ready.set())
        try:
            while True:
                await ready.wait()
                await linger.pause(lambda: len(results))
                ready.clear()
                while results:
                    await context.write(session_pb2.CommandResults(results=_take(results)))
                    linger.wrote()
                if (reader.done() or self.closing.is_set()) and not tasks and not results:
                    break
            if reader.done() and not reader.cancelled() and reader.exception() is not None:
                exc = reader.exception()
                if not isinstance(exc, (asyncio.CancelledError, grpc.aio.AbortError)):
                    log.warning("command_stream_read_failed", error=repr(exc))
        finally:
            for task in (reader, stopping, *tasks):
                task.cancel()

    async def _frame(self, frame: session_pb2.CommandFrame) -> session_pb2.CommandResult:
        """The result of one ``Commands`` frame, logged as the unary RPC is (``rpc``,
        ``game_id``, ``player_id``, the reply's ``seq``)."""
        kind = frame.WhichOneof("command")
        if kind is None:
            return _failed(
                frame.id,
                status_for(ErrorCode.MALFORMED),
                "a command frame carries act or end_turn",
                ErrorCode.MALFORMED,
            )
        request = frame.act if kind == "act" else frame.end_turn
        with structlog.contextvars.bound_contextvars(
            rpc=_FRAME_RPC[kind],
            game_id=request.game_id or None,
            player_id=request.player_id or None,
        ):
            timeout = asyncio.timeout(frame.timeout_s if frame.timeout_s > 0 else None)
            try:
                async with timeout:
                    body = self._act if kind == "act" else self._end_turn
                    reply = await body(request)
                return session_pb2.CommandResult(id=frame.id, reply=reply)
            except ServiceError as exc:
                _refused(exc)
                return _failed(frame.id, status_for(exc.code), exc.message, exc.code, exc.seq)
            except TimeoutError as exc:
                if not timeout.expired():
                    log.exception("rpc_failed")
                    return _failed(
                        frame.id, grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}", ErrorCode.INTERNAL
                    )
                return _failed(frame.id, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            except Exception as exc:  # noqa: BLE001 - the service never crashes on input
                log.exception("rpc_failed")
                return _failed(
                    frame.id, grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}", ErrorCode.INTERNAL
                )

    @rpc
    async def Leave(self, request, context):  # noqa: N802
        # The same command as a disconnect past the timeout; the engine plans a rollback
        # when the policy says so (its own CellWar turn).
        outcome = await self.loop.handle(
            Command.leave(request.game_id, request.player_id, request.command_id)
        )
        return await self._reply(outcome, request.player_id)

    @rpc
    async def GetView(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        check_live_view(game, request.player_id)
        if game.running:  # a poller: keep its progress views coming for a while
            until = asyncio.get_running_loop().time() + WANTED_S
            game.wanted[request.player_id] = until
        version, view = await self._view(game, request.player_id)
        return session_pb2.ViewReply(seq=version, view=view)

    @rpc
    async def ListEvents(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        events = await list_events(self.games, game, request.player_id, request.from_seq)
        return session_pb2.ListEventsReply(events=events)

    @rpc
    async def Replay(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        view = await replay(self.games, game, request.player_id, request.seq)
        return session_pb2.ViewReply(seq=request.seq, view=view)

    @rpc
    async def GetValidActions(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        if game.broken:
            raise broken_error(game)
        actions = await self.games.engine.valid_actions(
            game.state, request.player_id, request.unit_id
        )
        return session_pb2.GetValidActionsReply(actions=actions)

    @rpc
    async def ListGames(self, request, context):  # noqa: N802
        items, cursor = self.directory.page(request.page_size, request.cursor)
        return session_pb2.ListGamesReply(
            games=[
                session_pb2.GameSummary(
                    game_id=gid,
                    kind=entry.get("kind", ""),
                    phase=entry.get("phase", ""),
                    players_joined=int(entry.get("players_joined", 0)),
                    max_players=int(entry.get("max_players", 0)),
                    config=dumps(entry.get("config", {})),
                )
                for gid, entry in items
            ],
            next_cursor=cursor,
        )

    # ------------------------------------------------------------------ replay tools

    @rpc
    async def ForkGame(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        check_fork(game, request.player_id)
        if game.broken:
            raise broken_error(game)
        if not 1 <= request.seq <= game.seq:
            raise ServiceError(ErrorCode.MALFORMED, f"seq must be within 1..{game.seq}")
        state = await self.games.state_at(game, request.seq)
        fork = await self.loop.fork(game, state, request.seq, request.command_id)
        structlog.contextvars.bind_contextvars(fork_id=fork.game_id, seq=request.seq)
        return session_pb2.CreateGameReply(game_id=fork.game_id)

    @rpc
    async def ImportGame(self, request, context):  # noqa: N802
        if not request.events:
            raise ServiceError(ErrorCode.MALFORMED, "an import needs the events of a log")
        if len(request.events) > MAX_IMPORT_EVENTS:
            raise ServiceError(
                ErrorCode.MALFORMED, f"an imported log has at most {MAX_IMPORT_EVENTS} events"
            )
        game, finished = await self.loop.import_log(
            request.events, request.origin, request.command_id
        )
        structlog.contextvars.bind_contextvars(game_id=game.game_id, seq=game.seq)
        return session_pb2.ImportGameReply(game_id=game.game_id, events=game.seq, finished=finished)

    @rpc
    async def SpectatorView(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        if game.broken:
            raise broken_error(game)
        seq, view = await self.spectators.view(game, request.delay_s)
        return session_pb2.ViewReply(seq=seq, view=view)

    async def _stream(self, request, context, rpc_name: str, body) -> None:
        """Run a server-streaming RPC body with the log context and error mapping."""
        with structlog.contextvars.bound_contextvars(
            rpc=rpc_name,
            game_id=request.game_id,
            player_id=getattr(request, "player_id", None) or None,
        ):
            try:
                await body()
            except ServiceError as exc:
                await abort(context, exc.code, exc.message, exc.seq)
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:  # noqa: BLE001
                log.exception("stream_failed")
                await abort(context, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")

    async def StreamEvents(self, request, context):  # noqa: N802
        """The events of ListEvents (same visibility rule), written page by page."""

        async def body() -> None:
            game = await self.games.get(request.game_id)
            async for page in stream_events(self.games, game, request.player_id, request.from_seq):
                for event in page:
                    await context.write(event)

        await self._stream(request, context, "StreamEvents", body)

    async def Spectate(self, request, context):  # noqa: N802
        """Views of the game delayed by ``delay_s`` (services/session/service_layer/spectators.py), a frame
        whenever the delayed view moves, ``finished`` at its end; UNAVAILABLE when the
        server stops."""

        async def body() -> None:
            game = await self.games.get(request.game_id)
            if game.broken:
                raise broken_error(game)

            async def send(kind: str, seq: int, view: bytes) -> None:
                await context.write(session_pb2.WatchUpdate(type=kind, seq=seq, view=view))

            await self.spectators.watch(game, request.delay_s, send, self.closing)
            if self.closing.is_set():
                raise ServiceError(ErrorCode.UNAVAILABLE, "session service is stopping")

        await self._stream(request, context, "Spectate", body)

    async def _watch(self, game: Game, player_id: int, send: WatchSend) -> None:
        """The loop of :meth:`Watch`: a view when the player's version moved or its view
        changed (a player's ``connected``, a running game's progress between recorded
        events) — never at an event this player does not
        observe, and never the same view again (a presence change that shows nothing new
        to this player, e.g. a clock dropped for a player who is out, sends nothing: a
        frame's timing must tell nothing either, docs/architecture/contracts.md
        "Indistinguishability over REST and WebSocket"). ``send`` writes one update.

        Raises:
            ServiceError: UNAVAILABLE when the server stops."""
        sent: tuple[int, bytes] | None = None
        while not self.closing.is_set():
            changed = game.changed
            presence = self.presence.version(game.game_id)
            progress = game.progress
            version, view = await self._view(game, player_id)
            if game.finished and game.version(player_id) == version:
                # the final view goes once, as `finished` (not also as a `view` frame)
                await send(session_pb2.WatchUpdate(type="finished", seq=version, view=view))
                return
            if (version, view) != sent:
                await send(session_pb2.WatchUpdate(type="view", seq=version, view=view))
                sent = (version, view)
            if (
                game.version(player_id) == version
                and presence == self.presence.version(game.game_id)
                and progress == game.progress
            ):
                # one wait, no task per frame: `closing` wakes it too (_wake_on_closing)
                await changed.wait()
        raise ServiceError(ErrorCode.UNAVAILABLE, "session service is stopping")

    async def _wake_on_closing(self) -> None:
        """When the server stops, wake every game's Watch streams (they end UNAVAILABLE;
        a watched game stays loaded: the cache never evicts it)."""
        await self.closing.wait()
        for game in self.games.loaded():
            game.notify()

    async def Watch(self, request, context):  # noqa: N802
        """Stream the player's view now and whenever its version (or the players'
        presence) changes; ``finished`` at the end. Ends with UNAVAILABLE when the server
        stops (the client reconnects). An open stream with a player id is that player's
        presence (services/session/entrypoints/presence.py)."""
        with structlog.contextvars.bound_contextvars(
            rpc="Watch", game_id=request.game_id, player_id=request.player_id or None
        ):
            try:
                await self.serve_watch(request, context.write)
            except ServiceError as exc:
                await abort(context, exc.code, exc.message)
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:  # noqa: BLE001
                log.exception("watch_failed")
                await abort(context, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")

    async def Watches(self, request_iterator, context):  # noqa: N802
        """Many Watches over one stream (proto ``Watches``; services/session/entrypoints/watches.py)."""
        await watches.serve(request_iterator, context, self.serve_watch, self.closing)

    async def serve_watch(self, request: session_pb2.WatchRequest, send: WatchSend) -> None:
        """One Watch (of the Watch RPC or of a ``Watches`` stream): the updates go to
        ``send`` until the game ends or the server stops; while it runs the player is
        present and counted as watching.

        Raises:
            ServiceError: GAME_NOT_FOUND, FORBIDDEN (no live view of this game), a
                broken game's error; UNAVAILABLE when the server stops.
        """
        game = await self.games.get(request.game_id)
        check_live_view(game, request.player_id)
        game.watchers += 1
        if self._closer is None:
            self._closer = asyncio.ensure_future(self._wake_on_closing())
        pid = request.player_id
        game.watching[pid] = game.watching.get(pid, 0) + 1
        self.presence.opened(game, pid)
        if self.relay is not None:
            self.relay.poke(game)
        try:
            await self._watch(game, pid, send)
        finally:
            game.watchers -= 1
            game.watching[pid] -= 1
            if game.watching[pid] <= 0:
                del game.watching[pid]
            self.presence.closed(game, pid)
