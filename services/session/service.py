"""The Session gRPC servicer: thin entry points over :class:`services.session.games.Games`.

Every RPC binds ``game_id``/``player_id`` to the log context, turns a
:class:`ServiceError` into a gRPC status with the machine code in trailing metadata
(``services.common.errors``), and never lets an unexpected exception escape unlogged.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable

import grpc
import structlog

from cellwar.v1 import engine_pb2, session_pb2, session_pb2_grpc
from services.common.errors import ServiceError, abort
from services.common.jsonwire import dumps
from services.session.games import Game, Games
from services.session.library import Library
from services.session.presence import Presence
from services.session.profiles import Profiles, public
from services.session.rollback import remove_player
from services.session.visibility import check_live_view, list_events, lobby_config, replay

log = structlog.get_logger("cellwar.session")


def _json_object(data: bytes, what: str) -> dict:
    """Parse a JSON object. Raises ServiceError MALFORMED."""
    try:
        value = json.loads(data or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError("MALFORMED", f"{what} is not valid JSON") from exc
    if not isinstance(value, dict):
        raise ServiceError("MALFORMED", f"{what} must be a JSON object")
    return value


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
                level = "error" if exc.code in ("INTERNAL", "GAME_BROKEN") else "info"
                getattr(log, level)("rpc_refused", code=exc.code, error=exc.message)
                await abort(context, exc.code, exc.message)
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:  # noqa: BLE001 - the service never crashes on input
                log.exception("rpc_failed")
                await abort(context, "INTERNAL", f"{type(exc).__name__}: {exc}")

    return wrapper


class SessionServicer(session_pb2_grpc.SessionServicer):
    """RPCs of ``cellwar.v1.Session`` (see proto/cellwar/v1/session.proto).

    Args:
        games: the game repository.
        closing: set when the server stops; open Watch streams end with UNAVAILABLE.
    """

    def __init__(self, games: Games, closing: asyncio.Event) -> None:
        self.games = games
        self.closing = closing
        self.library = Library(games.engine)
        #: Open Watch streams per player; removes players who stay away (CellWar).
        self.presence = Presence(games, closing)

    async def _reply(self, game: Game, player_id: int, seq: int) -> session_pb2.CommandReply:
        _, view = await self.games.view(game, player_id)
        view = self.presence.overlay(game.game_id, view)
        return session_pb2.CommandReply(seq=seq, player_id=player_id, view=view)

    @rpc
    async def CreateGame(self, request, context):  # noqa: N802 - gRPC method names
        config = _json_object(request.config, "config")
        profile_id = request.profile_id if request.kind == "campaign" else ""
        if profile_id:
            structlog.contextvars.bind_contextvars(profile_id=profile_id)
            await self._profiles().check_level(profile_id, config.get("level", 1))
        game_id = await self.games.create(
            request.kind, config, request.command_id, profile_id=profile_id
        )
        return session_pb2.CreateGameReply(game_id=game_id)

    def _profiles(self) -> Profiles:
        """The profile store. Raises ServiceError UNAVAILABLE when there is none."""
        if self.games.profiles is None:
            raise ServiceError("UNAVAILABLE", "this session keeps no profiles")
        return self.games.profiles

    @rpc
    async def Patterns(self, request, context):  # noqa: N802
        return engine_pb2.PatternsReply(catalogue=await self.library.patterns())

    @rpc
    async def Levels(self, request, context):  # noqa: N802
        return engine_pb2.LevelsReply(levels=await self.library.levels())

    @rpc
    async def CreateProfile(self, request, context):  # noqa: N802
        profile_id, profile = await self._profiles().create(request.name)
        return session_pb2.Profile(profile_id=profile_id, data=dumps(public(profile)))

    @rpc
    async def GetProfile(self, request, context):  # noqa: N802
        structlog.contextvars.bind_contextvars(profile_id=request.profile_id)
        profile = await self._profiles().get(request.profile_id)
        return session_pb2.Profile(profile_id=request.profile_id, data=dumps(public(profile)))

    @rpc
    async def Join(self, request, context):  # noqa: N802
        game, result = await self.games.execute(
            request.game_id, "join", 0, dumps({"name": request.name}), request.command_id
        )
        structlog.contextvars.bind_contextvars(player_id=result.player_id, seq=result.seq)
        return await self._reply(game, result.player_id, result.seq)

    @rpc
    async def Act(self, request, context):  # noqa: N802
        action = _json_object(request.action, "action")
        game, result = await self.games.execute(
            request.game_id, "action", request.player_id, dumps(action), request.command_id
        )
        return await self._reply(game, request.player_id, result.seq)

    @rpc
    async def EndTurn(self, request, context):  # noqa: N802
        game, result = await self.games.execute(
            request.game_id, "end_turn", request.player_id, b"{}", request.command_id
        )
        return await self._reply(game, request.player_id, result.seq)

    @rpc
    async def Leave(self, request, context):  # noqa: N802
        # Same path as a disconnect past the timeout: a rollback first during one's own
        # CellWar turn (services/session/rollback.py).
        game, result = await remove_player(
            self.games,
            request.game_id,
            request.player_id,
            "left",
            actor=request.player_id,
            command_id=request.command_id,
        )
        return await self._reply(game, request.player_id, result.seq)

    @rpc
    async def GetView(self, request, context):  # noqa: N802
        game = await self.games.get(request.game_id)
        check_live_view(game, request.player_id)
        seq, view = await self.games.view(game, request.player_id)
        view = self.presence.overlay(game.game_id, view)
        return session_pb2.ViewReply(seq=seq, view=view)

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
            raise ServiceError("GAME_BROKEN", game.broken)
        actions = await self.games.engine.valid_actions(
            game.state, request.player_id, request.unit_id
        )
        return session_pb2.GetValidActionsReply(actions=actions)

    @rpc
    async def ListGames(self, request, context):  # noqa: N802
        return session_pb2.ListGamesReply(
            games=[
                session_pb2.GameSummary(
                    game_id=gid,
                    kind=entry.get("kind", ""),
                    phase=entry.get("phase", ""),
                    players_joined=int(entry.get("players_joined", 0)),
                    max_players=int(entry.get("max_players", 0)),
                    config=dumps(lobby_config(entry.get("kind", ""), entry.get("config", {}))),
                )
                for gid, entry in self.games.directory.open_games()
            ]
        )

    async def _watch(self, game: Game, player_id: int, context) -> None:
        """The loop of :meth:`Watch`: a view when the seq or the presence changed."""
        sent: tuple[int, int] | None = None
        while not self.closing.is_set():
            changed = game.changed
            seq, view = await self.games.view(game, player_id)
            key = (seq, self.presence.version(game.game_id))
            view = self.presence.overlay(game.game_id, view)
            if key != sent:
                await context.write(session_pb2.WatchUpdate(type="view", seq=seq, view=view))
                sent = key
            if game.state.finished and game.seq == seq:
                await context.write(session_pb2.WatchUpdate(type="finished", seq=seq, view=view))
                return
            if game.seq == seq and key == (seq, self.presence.version(game.game_id)):
                closing = asyncio.ensure_future(self.closing.wait())
                waiting = asyncio.ensure_future(changed.wait())
                try:
                    await asyncio.wait({closing, waiting}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    closing.cancel()
                    waiting.cancel()
        await abort(context, "UNAVAILABLE", "session service is stopping")

    async def Watch(self, request, context):  # noqa: N802
        """Stream the player's view now and after every change (and every change of the
        players' presence); ``finished`` at the end. Ends with UNAVAILABLE when the server
        stops (the client reconnects). An open stream with a player id is that player's
        presence (services/session/presence.py)."""
        with structlog.contextvars.bound_contextvars(
            rpc="Watch", game_id=request.game_id, player_id=request.player_id or None
        ):
            try:
                game = await self.games.get(request.game_id)
                check_live_view(game, request.player_id)
                self.presence.opened(game, request.player_id)
                try:
                    await self._watch(game, request.player_id, context)
                finally:
                    self.presence.closed(game, request.player_id)
            except ServiceError as exc:
                await abort(context, exc.code, exc.message)
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:  # noqa: BLE001
                log.exception("watch_failed")
                await abort(context, "INTERNAL", f"{type(exc).__name__}: {exc}")
