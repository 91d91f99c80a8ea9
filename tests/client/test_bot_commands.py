"""The API bots send their commands over the seat's one stream socket (client/bot_base.py):
seeded bots play the same game over the socket as over REST, open no second socket, play
a CellWar turn on the stream's view, and play over REST when no socket can be opened."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from client.bot_base import CommandTiming
from client.bots import CellWarBot, LifeBot
from client.sdk import AsyncCellWarClient
from tests.api.test_cellwar_game import UNITS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

#: 8x8, two players of tests/api/test_cellwar_game.py (p1 units 1, 4 at the top left...).
CELLWAR = {"width": 8, "height": 8, "players": 2, "units": [u for u in UNITS if u["owner"] != 3]}
#: A short Life game: placement, a few generations at speed 8, no redraw.
LIFE = {"width": 30, "height": 30, "players": 2, "budget": 40, "max_generations": 40}


class CountingClient(AsyncCellWarClient):
    """Counts the sockets a bot opens: ``stream`` (views only) and ``commands``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.streams = 0
        self.command_sockets = 0
        self.states = 0

    async def state(self, game_id: str, token: str):  # type: ignore[override]
        self.states += 1
        return await super().state(game_id, token)

    def stream(self, game_id: str, token: str | None = None):  # type: ignore[override]
        self.streams += 1
        return super().stream(game_id, token)

    def commands(self, game_id: str, token: str):  # type: ignore[override]
        self.command_sockets += 1
        return super().commands(game_id, token)


def _game(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What two runs of one seeded game share: each event's type, actor, payload (the
    game id and wall times aside) and hash."""
    out = []
    for e in events:
        payload = {k: v for k, v in (e.get("payload") or {}).items() if k not in ("game_id", "created_at")}
        out.append((e["type"], e.get("actor"), repr(payload), e.get("state_hash")))
    return out


async def _cellwar(api: AsyncCellWarClient, commands: str) -> tuple[list[dict[str, Any]], list[CommandTiming], int]:
    """A 2-bot CellWar game (seeds 41, 42) played with ``commands``: its log, the
    commands' timings and the actions the bots counted."""
    timings: list[CommandTiming] = []
    game_id = await api.create_game("cellwar", CELLWAR)
    bots = [
        CellWarBot(api, game_id, f"bot-{i}", seed=40 + i, commands=commands, on_command=lambda _b, t: timings.append(t))
        for i in (1, 2)
    ]
    for bot in bots:
        await bot.join()
    finals = await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), timeout=90)
    assert all(view["phase"] == "finished" for view in finals)
    return await api.events(game_id, bots[0].seat.token), timings, sum(b.actions_sent for b in bots)


async def test_seeded_cellwar_bots_play_the_same_game_over_the_socket_as_over_rest(gateway: str):
    async with CountingClient(gateway, timeout=30) as api:
        over_socket, socket_timings, socket_sent = await _cellwar(api, "socket")
        assert (api.command_sockets, api.streams) == (2, 0)  # one socket per seat, views and commands
        states = api.states
        over_rest, rest_timings, rest_sent = await _cellwar(api, "rest")
        assert (api.command_sockets, api.streams) == (2, 2)

    assert _game(over_socket) == _game(over_rest)
    assert over_socket[-1]["type"] == "GameFinished"
    moves = sum(e["type"] == "ActionApplied" for e in over_socket)
    turns = sum(e["type"] == "TurnEnded" for e in over_socket)
    assert len(socket_timings) == socket_sent == len(rest_timings) == rest_sent >= moves + 1
    assert states < turns  # a turn is played on the stream's view, not on a GET /state each
    assert all(t.over_socket for t in socket_timings) and not any(t.over_socket for t in rest_timings)
    answered = [t for t in socket_timings if t.status == 200]
    assert sum(t.name == "action" for t in answered) == moves and sum(t.name == "end_turn" for t in answered) <= turns
    assert all(t.seconds >= 0 and len(t.key) == 36 for t in socket_timings)
    assert all(t.code is None for t in answered) and all(t.status == 409 for t in socket_timings if t.status != 200)


async def test_seeded_life_bots_place_the_same_figures_over_the_socket_as_over_rest(gateway: str):
    async def placements(
        api: AsyncCellWarClient, commands: str
    ) -> tuple[list[Any], list[tuple[str, CommandTiming]]]:
        timings: list[tuple[str, CommandTiming]] = []
        game_id = await api.create_game("life", LIFE)
        bots = [
            LifeBot(api, game_id, f"life-{i}", seed=10 + i, commands=commands, on_command=lambda b, t: timings.append((b.name, t)))
            for i in (1, 2)
        ]
        for bot in bots:
            await bot.join()
        await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), timeout=90)
        events = await api.events(game_id, bots[0].seat.token)
        placed = [
            (e["actor"], e["payload"]["action"]) for e in events
            if e["type"] == "ActionApplied" and e["payload"]["action"]["type"] in ("place", "stamp")
        ]
        return placed, timings

    async with CountingClient(gateway, timeout=30) as api:
        socket_placed, socket_timings = await placements(api, "socket")
        assert (api.command_sockets, api.streams) == (2, 0)
        rest_placed, rest_timings = await placements(api, "rest")
    assert socket_placed == rest_placed
    assert {a["type"] for _, a in socket_placed} == {"place", "stamp"}
    assert all(t.over_socket for _, t in socket_timings) and not any(t.over_socket for _, t in rest_timings)
    # each bot sends the same commands in the same order (the two bots' commands interleave
    # as the machine schedules them)
    def per_bot(timings: list[tuple[str, CommandTiming]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for bot, t in timings:
            out.setdefault(bot, []).append(t.name)
        return out

    assert per_bot(socket_timings) == per_bot(rest_timings)


class _ToGateway(httpx.AsyncHTTPTransport):
    """Sends every HTTP request to ``port`` whatever the client's base URL says."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(port=self.port)
        return await super().handle_async_request(request)


async def test_without_a_socket_the_bots_play_over_rest(gateway: str):
    # The base URL's port has no listener: the sockets cannot open; REST reaches the gateway.
    port = urlsplit(gateway).port
    assert port is not None
    async with AsyncCellWarClient("http://127.0.0.1:9", timeout=30, transport=_ToGateway(port)) as api:
        events, timings, sent = await _cellwar(api, "socket")
    assert events[-1]["type"] == "GameFinished"
    assert len(timings) == sent > 0 and not any(t.over_socket for t in timings)


def test_commands_must_be_socket_or_rest():
    with pytest.raises(ValueError, match="socket"):
        CellWarBot(None, "g", "b", commands="grpc")  # type: ignore[arg-type]


class _CountingTransport(httpx.HTTPTransport):
    """Counts the paths of the blocking client's requests."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


async def test_a_policy_seat_sends_its_moves_over_its_socket(api: AsyncCellWarClient, gateway: str):
    from client.bots import load_policy
    from client.play import play_policy_seat
    from client.sdk import CellWarClient

    game_id = await api.create_game("cellwar", CELLWAR)
    seat = await api.join(game_id, "policy")
    person = CellWarBot(api, game_id, "person", seed=7, commands="rest")
    await person.join()
    counted = _CountingTransport()
    blocking = CellWarClient(gateway, timeout=30, transport=counted)
    played, final = await asyncio.wait_for(
        asyncio.gather(
            asyncio.to_thread(
                play_policy_seat, gateway, game_id, seat.player_id, seat.token, load_policy("heuristic", seed=3),
                width=8, height=8, players=2, client=blocking, poll_s=0.05,
            ),
            person.play(),
        ),
        timeout=90,
    )
    assert final["phase"] == "finished" and played["actions"] > 0
    events = await api.events(game_id, seat.token)
    mine = [e for e in events if e["type"] in ("ActionApplied", "TurnEnded") and e["actor"] == seat.player_id]
    assert mine  # the policy's commands are in the log, and none went over REST
    assert not [p for p in counted.paths if p.startswith("POST")]


async def test_an_end_turn_answered_with_the_bots_next_turn_plays_that_turn():
    """An end_turn retried after a fault is answered with the game as it is now; when that
    already shows the bot's next turn, the bot plays it (its frames carry no newer seq, so
    waiting for them would stall the game)."""
    from client.bots.cellwar import CellWarBot
    from client.sdk import Seat

    def view(seq: int, turn: int, acted: bool) -> dict:
        unit = {"id": 7, "owner": 1, "type": "infantry", "x": 0, "y": 0, "acted": acted}
        return {"phase": "playing", "turn": turn, "you": 1, "seq": seq, "units": [unit],
                "players": [{"id": 1}, {"id": 2}], "width": 4, "height": 4}

    answers = [
        {"seq": 3, "view": view(3, 1, True)},   # the unit's move
        {"seq": 9, "view": view(9, 1, False)},  # end_turn: answered late, the next turn shown
        {"seq": 10, "view": view(10, 1, True)},  # the next turn's move
        {"seq": 11, "view": view(11, 2, True)},  # its end_turn
    ]
    sent: list = []

    class Api:
        async def valid_actions(self, game_id, token, unit_id):
            return [{"unit_id": unit_id, "dx": 1, "dy": 0, "kind": "move"}]

    bot = CellWarBot(Api(), "g", "bot", seed=1)
    bot.seat = Seat(game_id="g", player_id=1, token="t")

    async def command(action):
        sent.append(action)
        return answers[len(sent) - 1]

    bot.command = command
    await bot.play_turn(view(2, 1, False))
    assert [a is None for a in sent] == [False, True, False, True]
    assert bot.turns_played == 2 and bot.played_seq == 11


async def test_a_move_refused_409_leaves_the_same_view_to_be_played_again():
    """A 409 on the bot's own turn that changed nothing (say, a valid_actions answered by
    an instance behind the log): the view of the same seq that follows is played again,
    not taken for one the bot has played on (it would wait on its own turn for ever)."""
    from client.bots.cellwar import CellWarBot
    from client.sdk import ApiError, Seat

    def view(seq: int, turn: int, acted: bool) -> dict:
        unit = {"id": 7, "owner": 1, "type": "infantry", "x": 0, "y": 0, "acted": acted}
        return {"phase": "playing", "turn": turn, "you": 1, "seq": seq, "units": [unit],
                "players": [{"id": 1}, {"id": 2}], "width": 4, "height": 4}

    asked: list[int] = []
    sent: list = []

    class Api:
        async def valid_actions(self, game_id, token, unit_id):
            asked.append(unit_id)
            return [{"unit_id": unit_id, "dx": 1, "dy": 0, "kind": "move"}]

    bot = CellWarBot(Api(), "g", "bot", seed=1)
    bot.seat = Seat(game_id="g", player_id=1, token="t")

    async def command(action):
        sent.append(action)
        if len(sent) == 1:
            raise ApiError(409, "INVALID_MOVE", "the cell is taken")
        return {"seq": 6, "view": view(6, 1, True)} if action else {"seq": 7, "view": view(7, 2, True)}

    bot.command = command
    await bot._on_view(view(5, 1, False))  # refused: nothing changed
    assert len(sent) == 1 and bot.played_seq == 4
    await bot._on_view(view(5, 1, False))  # the same view again (a poll): played
    assert asked == [7, 7] and [a is None for a in sent] == [False, False, True]
    assert bot.turns_played == 1 and bot.played_seq == 7
    await bot._on_view(view(6, 1, True))  # a frame of its own move: nothing to do
    assert len(sent) == 3


async def test_a_command_refused_429_is_sent_again_with_its_key_after_the_wait(monkeypatch):
    """The seat's command bucket said 429 twice: the bot waits and sends the command again
    with the same key (applied once), and tells ``on_command`` once."""
    from client import bot_base
    from client.sdk import ApiError, Seat

    monkeypatch.setattr(bot_base, "RATE_LIMITED_WAIT_S", 0.01)
    keys: list[str] = []
    timings: list[CommandTiming] = []

    class Api:
        async def act(self, game_id, token, action, idempotency_key):
            keys.append(idempotency_key)
            if len(keys) < 3:
                raise ApiError(429, "RATE_LIMITED", "too many requests; retry in 1 s")
            return {"seq": 5, "view": {}}

    bot = CellWarBot(Api(), "g", "bot", seed=1, commands="rest", on_command=lambda _b, t: timings.append(t))
    bot.seat = Seat(game_id="g", player_id=1, token="t")
    assert await bot.command({"unit_id": 1, "dx": 1, "dy": 0}) == {"seq": 5, "view": {}}
    assert len(keys) == 3 and len(set(keys)) == 1
    assert [(t.status, t.key) for t in timings] == [(200, keys[0])]
