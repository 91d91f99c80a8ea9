"""``python -m client.play``: bots play one game through the public API.

Usage::

    python -m client.play --url http://localhost:8000 --size 60 --budget 100 [--seed 1]
    python -m client.play --players 4 [--bot llm --llm-url URL --model NAME]   # Life
    python -m client.play --kind cellwar --players 3 [--size 16] [--seed 1]
    python -m client.play --matchmaking [--kind life] [--players 2] [--anonymous]
    python -m client.play --kind cellwar --bot trained [--opponent bot] [--size 8] [--seat 1]
    python -m client.play --kind cellwar --bot llm --llm-url http://127.0.0.1:8080/v1 --model smollm2
    python -m client.play --kind cellwar [--bot trained] --game-id ID   # take a free seat
    python -m client.play --kind life [--bot llm ...] --game-id ID      # take a free seat

Life (the default): creates a game for ``--players`` (2 or 4) and runs that many
:class:`client.bots.LifeBot` concurrently to the end (they ask for speed 8: the server
ticks 8 generations/s × speed); with ``--bot llm`` seat ``--seat`` places its cells by a
chat model (:class:`client.bots.llm.LLMLifeBot`).
CellWar: creates a ``--size`` × ``--size`` game (default 16) with the default start
(2 infantry each, corners first) for ``--players`` (2..8) and runs that many
:class:`client.cellwar_bot.CellWarBot` to the end.
With ``--matchmaking`` the bots do not create a game: each queues a matchmaking ticket
(``--players`` of them, Life 2 or 4, CellWar 2..8; rated under a fresh profile unless
``--anonymous``), plays the game it is matched into, and its rating before and after is
printed (client/matchplay.py).
With ``--bot NAME`` (``random``, ``heuristic``, ``search``, ``trained``, ``llm``, see
:func:`client.bots.load_policy`) that policy plays seat ``--seat`` (default 1) through
the remote RL environment (:func:`client.rl.cellwar_env` with ``backend="remote"``, the
same observations it was trained on) and ``--opponent`` the other seats: ``bot`` (the
default, the API heuristic bot :class:`client.bots.cellwar.CellWarBot`) or a policy
name. The board defaults to 8×8 then (the size the policy was trained on). ``llm``
asks the chat model server at ``--llm-url`` for ``--model`` (docs/llm-players.md); its
counts (moves, invalid answers, retries, moves replaced by the heuristic, seconds per
move) are printed at the end.
With ``--game-id`` one bot (the ``--bot`` policy, else the kind's API bot) takes the next
free seat of an existing game (e.g. one a person opened in the browser) and plays it to
the end.

A flag that does not apply to the chosen kind and mode is refused with a usage error
(exit code 2). Before anything else the URL is probed once (``GET /healthz``, ``GET
/games``): nothing listening, or a page that is no CellWar server, is said in one line at
once; only a server seen once is waited for while it restarts (every command carries its
Idempotency-Key). Ctrl-C stops with one line (exit code 130).
Shows progress on stderr, then prints on stdout the winner, the number of events and
the final state hash (of the last event of ``GET /game/{id}/events``, read once the game
is finished, so whole). Exit code 0 when the game finished, 1 on an API error, 2 when the
server is unreachable or no CellWar server (or on a usage error), 3 when the model
server failed (down, timeout, model missing).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from typing import Any

import httpx

from client.bot_base import RETRY_UNAVAILABLE_S, said_retry
from client.bots import ALL_POLICY_NAMES, CellWarBot, LifeBot, load_policy
from client.bots.llm import LifePlacer, LLMError, LLMLifeBot
from client.sdk import ApiError, AsyncCellWarClient
from engine.cellwar.config import MAX_PLAYERS as CW_MAX_PLAYERS
from engine.cellwar.config import MAX_SIDE as CW_MAX_SIDE
from engine.cellwar.config import MIN_PLAYERS as CW_MIN_PLAYERS
from engine.cellwar.config import MIN_SIDE as CW_MIN_SIDE
from engine.life.state import MAX_SIDE as LIFE_MAX_SIDE
from engine.life.state import MIN_SIDE as LIFE_MIN_SIDE


class NotCellWarError(RuntimeError):
    """The URL answers nothing, or answers as no CellWar server does (:func:`probe`)."""


def probe(url: str, timeout_s: float = 5.0) -> None:
    """Make sure a CellWar gateway answers at ``url``, with one try each of
    ``GET /healthz`` (``{"status": ...}``) and ``GET /games`` (``{"games": [...]}``, or a
    503 error body of a gateway still starting), no retries.

    Raises:
        NotCellWarError: nothing listens, no answer within ``timeout_s`` seconds, or
            answers of another shape (one-line message naming what was answered).
    """
    def shaped(response: httpx.Response, key: str) -> bool:
        try:
            body = response.json()
        except ValueError:
            return False
        if not isinstance(body, dict):
            return False
        if response.status_code == 503:  # the gateway's own "not ready yet"
            return isinstance(body.get("error"), dict) and "code" in body["error"]
        return response.status_code == 200 and key in body

    try:
        with httpx.Client(base_url=url, timeout=timeout_s) as http:
            for path, key in (("/healthz", "status"), ("/games", "games")):
                response = http.get(path)
                if not shaped(response, key):
                    kind = response.headers.get("content-type", "no content type").split(";")[0]
                    raise NotCellWarError(
                        f"{url} is not a CellWar server: GET {path} answered {response.status_code} ({kind})"
                    )
    except httpx.ConnectError:
        raise NotCellWarError(f"nothing listens at {url} (connection refused): is the platform started (make run)?") from None
    except httpx.TimeoutException:
        raise NotCellWarError(f"{url} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as err:
        raise NotCellWarError(f"cannot reach {url}: {err}") from None


def _client(url: str) -> AsyncCellWarClient:
    """The bots' client: calls are tried again for up to :data:`RETRY_UNAVAILABLE_S`
    while the server restarts (every command carries its Idempotency-Key)."""
    return AsyncCellWarClient(url, retry_unavailable_s=RETRY_UNAVAILABLE_S, on_retry=said_retry)


def _or_hidden(value: Any) -> str:
    """A view field, or ``?`` when the view hides it (blind placement)."""
    return "?" if value is None else str(value)


class Progress:
    """Writes one progress line to stderr at most every ``every_s`` seconds (and on
    every phase change)."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s
        self._last = 0.0
        self._phase: str | None = None

    def __call__(self, _bot: LifeBot, view: dict[str, Any]) -> None:
        now = time.monotonic()
        phase = view.get("phase")
        if phase == self._phase and now - self._last < self.every_s:
            return
        self._phase, self._last = phase, now
        scores = "  ".join(
            f"{p.get('name')}={_or_hidden(p.get('cells'))} (budget {_or_hidden(p.get('budget_left'))})"
            for p in view.get("players") or ()
        )
        sys.stderr.write(
            f"[seq {view.get('seq')}] {phase:<9} generation {view.get('generation', 0):>5}  "
            f"speed {view.get('speed', 1)}  {scores}\n"
        )
        sys.stderr.flush()


async def play(
    url: str,
    *,
    size: int = 60,
    budget: int = 100,
    seed: int = 1,
    speed: int = 8,
    max_generations: int | None = None,
    quiet: bool = False,
    players: int = 2,
    llm_seat: int | None = None,
    placer: Any = None,
) -> dict[str, Any]:
    """Create a Life game of ``players`` (2 or 4) seats at ``url``, let that many bots
    play it to the end; with ``placer`` (a :class:`client.bots.llm.LifePlacer`) seat
    ``llm_seat`` is an :class:`client.bots.llm.LLMLifeBot`.

    Returns:
        ``{"game_id", "final_view", "events", "winner", "result", "state_hash"}``.

    Raises:
        ApiError: the server refused a request.
        httpx.HTTPError: the server cannot be reached.
        LLMError: the model server failed.
    """
    config: dict[str, Any] = {"width": size, "height": size, "players": players, "budget": budget}
    if max_generations is not None:
        config["max_generations"] = max_generations
    progress = None if quiet else Progress()
    names = ["bot-red", "bot-green", "bot-blue", "bot-yellow"]
    async with _client(url) as api:
        game_id = await api.create_game("life", config)
        if not quiet:
            sys.stderr.write(f"game {game_id}: {size}x{size}, {players} players, budget {budget}, seed {seed}\n")
        bots: list[LifeBot] = []
        for i in range(1, players + 1):
            options: dict[str, Any] = {"seed": seed * 1000 + i, "speed": speed, "on_view": progress if i == 1 else None}
            if placer is not None and i == llm_seat:
                bots.append(LLMLifeBot(api, game_id, f"llm-{i}", placer=placer, **options))
            else:
                bots.append(LifeBot(api, game_id, names[i - 1], **options))
        for bot in bots:  # seats in a fixed order: the i-th bot is player i
            await bot.join()
        finals = await asyncio.gather(*(bot.play() for bot in bots))
        final = finals[0]
        events = await api.events(game_id, bots[0].seat.token)
    return _outcome(game_id, final, events, events[-1]["state_hash"] if events else "")


async def lobby_entry(api: AsyncCellWarClient, game_id: str, kind: str) -> dict[str, Any]:
    """The lobby entry of an open game of ``kind``.

    Raises:
        ApiError: 404 ``GAME_NOT_FOUND`` (not open in the lobby), 409 ``WRONG_KIND``
            (a game of another kind: the message names the ``--kind`` to give).
    """
    lobby = next((g for g in await api.games() if g["game_id"] == game_id), None)
    if lobby is None:
        raise ApiError(404, "GAME_NOT_FOUND", f"no open game {game_id} in the lobby")
    if lobby.get("kind") != kind:
        raise ApiError(409, "WRONG_KIND", f"game {game_id} is a {lobby.get('kind')} game: give --kind {lobby.get('kind')}")
    return lobby


async def play_seat(
    url: str,
    game_id: str,
    *,
    kind: str = "life",
    seed: int = 1,
    speed: int = 8,
    placer: Any = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """One API bot takes the next free seat of the open game ``game_id`` and plays it to
    the end: a :class:`client.bots.LifeBot` (an :class:`client.bots.llm.LLMLifeBot` with
    ``placer``) or a :class:`client.bots.cellwar.CellWarBot`.

    Returns:
        As :func:`play`, plus ``"bot_seat"``.

    Raises:
        ApiError: the server refused (``GAME_NOT_FOUND``, ``WRONG_KIND``, ``GAME_FULL``...).
        httpx.HTTPError: the server cannot be reached.
        LLMError: the model server failed.
    """
    async with _client(url) as api:
        await lobby_entry(api, game_id, kind)
        bot: Any
        if kind == "cellwar":
            bot = CellWarBot(api, game_id, "bot", seed=seed, on_view=None if quiet else CellWarProgress())
        elif placer is not None:
            bot = LLMLifeBot(api, game_id, "llm", placer=placer, seed=seed, speed=speed, on_view=None if quiet else Progress())
        else:
            bot = LifeBot(api, game_id, "bot", seed=seed, speed=speed, on_view=None if quiet else Progress())
        seat = await bot.join()
        if not quiet:
            sys.stderr.write(f"game {game_id}: {kind}, the bot is player {seat.player_id}\n")
        final = await bot.play()
        while final.get("phase") != "finished":  # a CellWar bot that is out stops early
            await asyncio.sleep(0.25)
            final = await api.state(game_id, seat.token)
        events = await api.events(game_id, seat.token)
    outcome = _outcome(game_id, final, events, events[-1].get("state_hash", "") if events else "")
    outcome["bot_seat"] = seat.player_id
    return outcome


def _outcome(game_id: str, final: dict[str, Any], events: list[dict[str, Any]], state_hash: str) -> dict[str, Any]:
    """What :func:`play` and :func:`play_cellwar` return for a finished game."""
    names = {p.get("id"): p.get("name") for p in final.get("players") or ()}
    return {
        "game_id": game_id,
        "final_view": final,
        "events": events,
        "winner": final.get("winner"),
        "winner_name": names.get(final.get("winner")),
        "result": final.get("result"),
        "state_hash": state_hash,
    }


class CellWarProgress:
    """Writes one progress line to stderr per round, from the first bot to see it (every
    bot reports, so the lines go on after bot-1 is out): units per player as far as that
    bot can tell (its own count, ``?`` for the others while the game runs)."""

    def __init__(self) -> None:
        self._last: tuple[Any, Any] | None = None

    def __call__(self, _bot: CellWarBot, view: dict[str, Any]) -> None:
        key = (view.get("phase"), int(view.get("round") or 0))
        last = self._last
        if last is not None and (key == last or (key[0] == last[0] and key[1] < last[1])):
            return  # said already, or a late view of an earlier round from another bot
        self._last = key
        players = "  ".join(
            f"{p.get('name')}={'out' if p.get('out') else _or_hidden(p.get('units'))}"
            for p in view.get("players") or ()
        )
        sys.stderr.write(
            f"[seq {view.get('seq')}] {view.get('phase'):<9} round {view.get('round', 0):>4}  "
            f"turn {view.get('turn')}  {players}\n"
        )
        sys.stderr.flush()


async def play_cellwar(
    url: str,
    *,
    size: int = 16,
    players: int = 3,
    seed: int = 1,
    config: dict[str, Any] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Create a CellWar game at ``url`` (``size`` × ``size`` cells, ``players`` seats, the
    default start unless ``config`` is given) and let that many bots play it to the end.

    Returns:
        ``{"game_id", "final_view", "events", "winner", "winner_name", "result",
        "state_hash"}`` (``events`` is the whole log, read after the finish).

    Raises:
        ApiError: the server refused a request.
        httpx.HTTPError: the server cannot be reached.
    """
    config = dict(config or {"width": size, "height": size, "players": players})
    players = int(config.get("players", players))
    progress = None if quiet else CellWarProgress()
    async with _client(url) as api:
        game_id = await api.create_game("cellwar", config)
        if not quiet:
            sys.stderr.write(f"game {game_id}: cellwar {config.get('width')}x{config.get('height')}, "
                             f"{players} players, seed {seed}\n")
        bots = [
            CellWarBot(api, game_id, f"bot-{i}", seed=seed * 1000 + i, on_view=progress)
            for i in range(1, players + 1)
        ]
        for bot in bots:  # seats in a fixed order: bot-1 is player 1
            await bot.join()
        await asyncio.gather(*(bot.play() for bot in bots))
        final = await api.state(game_id, bots[0].seat.token)
        while final.get("phase") != "finished":  # every bot returned: at most a moment away
            await asyncio.sleep(0.05)
            final = await api.state(game_id, bots[0].seat.token)
        events = await api.events(game_id, bots[0].seat.token)
    return _outcome(game_id, final, events, events[-1].get("state_hash", "") if events else "")


def _policy(name: str, seed: int, llm: dict[str, Any] | None = None) -> Any:
    """A policy by name, seeded when it takes a seed; ``llm`` holds the ``llm`` policy's
    options (``url``, ``model``, ``api``, ``timeout_s``, ``retries``)."""
    if name == "llm":
        return load_policy("llm", seed=seed, **(llm or {}))
    return load_policy(name, seed=seed) if name in ("random", "heuristic", "search") else load_policy(name)


class SeatSocketClient:
    """A blocking client for the remote environment whose seats send their commands
    (``move``, ``end_turn``) over their stream sockets (``client.commands``, one per seat,
    opened at the seat's first command; REST as the SDK falls back); every other call is
    ``client``'s own (reads, joins, polling).

    Args:
        client: the :class:`client.sdk.CellWarClient` (closed by :meth:`close`).
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._sockets: dict[tuple[str, str], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _commands(self, game_id: str, token: str) -> Any:
        cmds = self._sockets.get((game_id, token))
        if cmds is None:
            cmds = self._sockets[(game_id, token)] = self._client.commands(game_id, token).__enter__()
        return cmds

    def move(self, game_id: str, token: str, unit_id: int, dx: int, dy: int, **kw: Any) -> dict[str, Any]:
        """CellWar: unit ``unit_id`` acts toward (dx, dy); ``{"seq", "view"}`` (ApiError as REST)."""
        return self._commands(game_id, token).act({"unit_id": unit_id, "dx": dx, "dy": dy}, **kw)

    def end_turn(self, game_id: str, token: str, **kw: Any) -> dict[str, Any]:
        """End the seat's turn; ``{"seq", "view"}`` (ApiError as REST)."""
        return self._commands(game_id, token).end_turn(**kw)

    def close(self) -> None:
        """Close every seat's socket, then the client."""
        for cmds in self._sockets.values():
            cmds.close()
        self._sockets.clear()
        self._client.close()


def play_policy_seat(
    url: str,
    game_id: str,
    seat: int,
    token: str,
    policy: Any,
    *,
    width: int,
    height: int,
    players: int,
    progress: bool = False,
    stop: threading.Event | None = None,
    client: Any = None,
    commands: str = "socket",
    **env_options: Any,
) -> dict[str, Any]:
    """Play one joined seat of a CellWar game with ``policy`` through the remote
    environment until the game is over for it, or ``stop`` is set (checked before each
    move: Ctrl-C, another seat failed); blocking, run it in a thread beside async bots.
    ``client``: the :class:`client.sdk.CellWarClient` to play through (closed at the end;
    default one that waits for a restarting server); its commands go over the seat's
    stream socket (:class:`SeatSocketClient`) unless ``commands="rest"``;
    ``env_options``: more :func:`client.rl.cellwar_env` options (``timeout_s``, ``poll_s``).
    Returns ``{"reward", "actions"}`` (reward +1 won, -1 lost, 0 unfinished)."""
    from client.rl import cellwar_env
    from client.sdk import CellWarClient

    if client is None:  # the policy's seat waits for a restarting server like the API bots
        client = CellWarClient(url, retry_unavailable_s=RETRY_UNAVAILABLE_S, on_retry=said_retry)
    if commands == "socket":
        client = SeatSocketClient(client)
    env = cellwar_env(
        backend="remote", url=url, game_id=game_id, tokens={seat: token},
        width=width, height=height, players=players, max_rounds=10_000, client=client, **env_options,
    )
    try:
        env.reset()
        policy.reset()
        reward, actions, last_round = 0.0, 0, None
        for agent in env.agent_iter():
            if stop is not None and stop.is_set():
                break
            obs, r, terminated, truncated, _ = env.last()
            reward += float(r)
            if terminated or truncated:
                env.step(None)
                continue
            if progress and env.backend.round() != last_round:
                last_round = env.backend.round()
                sys.stderr.write(f"[{agent}] round {last_round}\n")
                sys.stderr.flush()
            env.step(policy.act(obs))
            actions += 1
        return {"reward": reward, "actions": actions}
    finally:
        env.close()
        client.close()


async def play_cellwar_policy(
    url: str,
    *,
    bot: str = "trained",
    opponent: str = "bot",
    size: int = 8,
    players: int = 2,
    seat: int = 1,
    seed: int = 1,
    game_id: str | None = None,
    quiet: bool = False,
    llm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A CellWar game where policy ``bot`` plays seat ``seat`` and ``opponent`` (``"bot"``:
    the API heuristic bot; or a policy name) the others; with ``game_id`` the policy only
    takes the next free seat of that game. ``llm``: the options of an ``llm`` policy
    (``url``, ``model``, ...; :class:`client.bots.llm.LLMPolicy`), checked before the
    game is created.

    Returns:
        As :func:`play_cellwar`, plus ``"policy_seat"``, ``"policy_reward"`` and
        ``"llm_stats"`` (the ``llm`` seats' :class:`client.bots.llm.LLMStats` by seat).

    Raises:
        ApiError: the server refused a request (e.g. ``GAME_FULL``).
        ValueError: an unknown policy or opponent, or ``seat`` out of 1..players.
        httpx.HTTPError: the server cannot be reached.
        LLMError: the model server failed (down, timeout, model missing).
    """
    if bot not in ALL_POLICY_NAMES or opponent not in ("bot", *ALL_POLICY_NAMES):
        raise ValueError(f"--bot is one of {ALL_POLICY_NAMES}; --opponent 'bot' or one of them")
    made: dict[int, Any] = {}
    stop = threading.Event()

    def policy_for(name: str, s: int, policy_seed: int) -> Any:
        made[s] = _policy(name, policy_seed, llm)
        return made[s]

    if "llm" in (bot, opponent):  # a model server that is down or lacks the model: before the game
        probe_policy = _policy("llm", seed, llm)
        try:
            await asyncio.to_thread(probe_policy.check)
        finally:
            probe_policy.close()
    async with _client(url) as api:
        if game_id is not None:
            lobby = await lobby_entry(api, game_id, "cellwar")
            config = lobby.get("config") or {}
            size_w, size_h = int(config.get("width", 16)), int(config.get("height", 16))
            players = int(config.get("players", lobby.get("max_players", 2)))
            mine = await api.join(game_id, bot)
            tasks = [asyncio.to_thread(
                play_policy_seat, url, game_id, mine.player_id, mine.token, policy_for(bot, mine.player_id, seed),
                width=size_w, height=size_h, players=players, progress=not quiet, stop=stop,
            )]
            seats = {mine.player_id: (bot, mine.token)}
            policy_seat = mine.player_id
            bots: list[CellWarBot] = []
        else:
            if not 1 <= seat <= players:
                raise ValueError(f"--seat must be in 1..{players}")
            size_w = size_h = size
            policy_seat = seat
            game_id = await api.create_game("cellwar", {"width": size, "height": size, "players": players})
            if not quiet:
                sys.stderr.write(f"game {game_id}: cellwar {size}x{size}, {bot} (seat {seat}) vs {opponent}\n")
            seats, bots, tasks = {}, [], []
            for s in range(1, players + 1):  # seats in order: the s-th join is player s
                name = bot if s == seat else opponent
                if s != seat and opponent == "bot":
                    b = CellWarBot(api, game_id, f"bot-{s}", seed=seed * 1000 + s)
                    await b.join()
                    bots.append(b)
                    continue
                joined = await api.join(game_id, f"{name}-{s}")
                seats[joined.player_id] = (name, joined.token)
            for s, (name, token) in sorted(seats.items(), key=lambda item: item[0] != seat):
                tasks.append(asyncio.to_thread(
                    play_policy_seat, url, game_id, s, token, policy_for(name, s, seed * 1000 + s),
                    width=size_w, height=size_h, players=players, progress=not quiet and s == seat, stop=stop,
                ))
        try:
            results = await asyncio.gather(*tasks, *(b.play() for b in bots))
        except BaseException:  # Ctrl-C or a failed seat: the other seats' threads stop too
            stop.set()
            raise
        finally:
            for policy in made.values():
                if hasattr(policy, "close"):
                    policy.close()
        token = seats[policy_seat][1]
        final = await api.state(game_id, token)
        while final.get("phase") != "finished":
            await asyncio.sleep(0.05)
            final = await api.state(game_id, token)
        events = await api.events(game_id, token)
    outcome = _outcome(game_id, final, events, events[-1].get("state_hash", "") if events else "")
    outcome["policy_seat"] = policy_seat
    outcome["policy_reward"] = results[0]["reward"]
    outcome["llm_stats"] = {s: p.stats for s, p in made.items() if getattr(p, "name", "") == "llm"}
    return outcome


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m client.play", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://localhost:8000", help="gateway base URL (default %(default)s)")
    parser.add_argument("--kind", default="life", choices=("life", "cellwar"), help="game kind (default %(default)s)")
    parser.add_argument(
        "--players", type=int, default=None,
        help="seats and bots: Life 2 or 4 (default 2), CellWar 2..8 (default 3, with --bot 2)",
    )
    parser.add_argument(
        "--size", type=int, default=None,
        help="board width and height in cells (Life 8..1024, default 60; CellWar 4..64, default 16, with --bot 8)",
    )
    parser.add_argument("--budget", type=int, default=None, help="Life: cells each player may place (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' random choices (default 1)")
    parser.add_argument("--speed", type=int, default=None, choices=(1, 2, 4, 8), help="Life: speed multiplier to ask for (default 8)")
    parser.add_argument("--max-generations", type=int, default=None, help="Life: end the game after this many")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--matchmaking", action="store_true", help="find the game through matchmaking")
    parser.add_argument("--anonymous", action="store_true", help="with --matchmaking: no profiles (unrated)")
    parser.add_argument(
        "--bot", choices=ALL_POLICY_NAMES, default=None,
        help="CellWar: a policy plays --seat; Life: only llm (a chat model places the cells)",
    )
    parser.add_argument(
        "--opponent", choices=("bot", *ALL_POLICY_NAMES), default=None,
        help="CellWar with --bot: who plays the other seats (default bot = the API heuristic bot)",
    )
    parser.add_argument("--seat", type=int, default=None, help="with --bot: the bot's seat (default 1)")
    parser.add_argument("--game-id", default=None, help="one bot takes the next free seat of this open game")
    llm = parser.add_argument_group("LLM players (--bot llm or --opponent llm; docs/llm-players.md)")
    llm.add_argument(
        "--llm-url", default=None,
        help="the chat model server: OpenAI-compatible .../v1 or an Ollama base (default http://127.0.0.1:8080/v1)",
    )
    llm.add_argument("--model", default=None, help="the model's name on that server (default smollm2)")
    llm.add_argument("--llm-api", choices=("auto", "openai", "ollama"), default=None, help="the server's API (default auto)")
    llm.add_argument("--llm-timeout", type=float, default=None, help="seconds per model request (default 60)")
    llm.add_argument("--llm-retries", type=int, default=None, help="requests again after an invalid answer (default 1)")
    return parser


def _refuse(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error (exit code 2) for every flag that does not apply to the kind and mode."""
    def given(*names: str) -> list[str]:
        return ["--" + n.replace("_", "-") for n in names if getattr(args, n) not in (None, False)]

    life, uses_llm = args.kind == "life", "llm" in (args.bot, args.opponent)
    if life and given("opponent"):
        parser.error("--opponent is for CellWar (Life: every other seat is the figure bot)")
    if life and args.bot not in (None, "llm"):
        parser.error(f"--bot {args.bot} is a CellWar policy; Life takes --bot llm (or no --bot: the figure bot)")
    if not life and given("budget", "speed", "max_generations"):
        parser.error(f"{', '.join(given('budget', 'speed', 'max_generations'))}: Life only")
    if life and args.players is not None and args.players not in (2, 4):
        parser.error(f"--players {args.players}: a Life game has 2 or 4 players")
    if args.anonymous and not args.matchmaking:
        parser.error("--anonymous is for --matchmaking")
    if args.matchmaking and given("bot", "opponent", "seat", "game_id"):
        parser.error(f"{', '.join(given('bot', 'opponent', 'seat', 'game_id'))}: not with --matchmaking (its bots are the API bots)")
    if args.seat is not None and not args.bot:
        parser.error("--seat is the --bot's seat: give --bot")
    if args.opponent is not None and not args.bot:
        parser.error("--opponent is for --bot")
    if args.game_id and given("players", "size", "budget", "max_generations", "seat", "opponent"):
        parser.error(f"{', '.join(given('players', 'size', 'budget', 'max_generations', 'seat', 'opponent'))}: "
                     "the game of --game-id has its own config and seats")
    if not uses_llm and given("llm_url", "model", "llm_api", "llm_timeout", "llm_retries"):
        parser.error(f"{', '.join(given('llm_url', 'model', 'llm_api', 'llm_timeout', 'llm_retries'))}: only with --bot llm or --opponent llm")
    if args.llm_timeout is not None and not args.llm_timeout > 0:
        parser.error(f"--llm-timeout {args.llm_timeout}: seconds, more than 0")
    if args.llm_retries is not None and args.llm_retries < 0:
        parser.error(f"--llm-retries {args.llm_retries}: 0 or more")
    # the engines' own bounds (engine/cellwar/config.py, engine/life/state.py), checked here
    # so a bad number is a usage error before any game is made, not a 422 after
    side_lo, side_hi = (LIFE_MIN_SIDE, LIFE_MAX_SIDE) if life else (CW_MIN_SIDE, CW_MAX_SIDE)
    if args.size is not None and not side_lo <= args.size <= side_hi:
        parser.error(f"--size {args.size}: {args.kind} boards are {side_lo}..{side_hi} cells a side")
    if not life and args.players is not None and not CW_MIN_PLAYERS <= args.players <= CW_MAX_PLAYERS:
        parser.error(f"--players {args.players}: a CellWar game has {CW_MIN_PLAYERS}..{CW_MAX_PLAYERS} players")
    if args.seat is not None and not args.game_id:
        seats = args.players or 2
        if not 1 <= args.seat <= seats:
            parser.error(f"--seat {args.seat}: the game has seats 1..{seats}")


def _llm_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {"url": args.llm_url or "http://127.0.0.1:8080/v1", "model": args.model or "smollm2"}
    if args.llm_api:
        options["api"] = args.llm_api
    if args.llm_timeout is not None:
        options["timeout_s"] = args.llm_timeout
    if args.llm_retries is not None:
        options["retries"] = args.llm_retries
    return options


def _print_llm(stats: dict[int, Any]) -> None:
    for seat, st in sorted(stats.items()):
        print(f"llm (player {seat}): {st.summary()}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also the ``cellwar-bots`` script)."""
    parser = _parser()
    args = parser.parse_args(argv)
    _refuse(parser, args)
    placer = None
    try:
        probe(args.url)
        if args.kind == "life" and args.bot == "llm":
            options = _llm_options(args)
            options.pop("retries", None)
            placer = LifePlacer(**options, seed=args.seed, retries=1 if args.llm_retries is None else args.llm_retries)
            placer.check()
        if args.matchmaking:
            from client.matchplay import play_matchmaking, print_matchmaking

            players = (args.players or 3) if args.kind == "cellwar" else (args.players or 2)
            mm_config: dict[str, Any] = {"width": args.size, "height": args.size} if args.size else {}
            if args.kind == "life" and args.budget is not None:
                mm_config["budget"] = args.budget
            return print_matchmaking(
                asyncio.run(
                    play_matchmaking(
                        args.url,
                        kind=args.kind,
                        players=players,
                        config=mm_config,
                        seed=args.seed,
                        rated=not args.anonymous,
                        quiet=args.quiet,
                    )
                )
            )
        if args.kind == "cellwar" and args.bot:
            result = asyncio.run(
                play_cellwar_policy(
                    args.url, bot=args.bot, opponent=args.opponent or "bot", size=args.size or 8,
                    players=args.players or 2, seat=args.seat or 1, seed=args.seed, game_id=args.game_id,
                    quiet=args.quiet, llm=_llm_options(args) if "llm" in (args.bot, args.opponent) else None,
                )
            )
            won = result["winner"] == result["policy_seat"]
            print(f"{args.bot} (player {result['policy_seat']}): {'won' if won else 'lost'}")
            _print_llm(result["llm_stats"])
            return _print_cellwar(result)
        if args.game_id:
            result = asyncio.run(
                play_seat(
                    args.url, args.game_id, kind=args.kind, seed=args.seed, speed=args.speed or 8,
                    placer=placer, quiet=args.quiet,
                )
            )
            print(f"the bot played player {result['bot_seat']}")
            if args.kind == "cellwar":
                return _print_cellwar(result)
        elif args.kind == "cellwar":
            return _print_cellwar(
                asyncio.run(
                    play_cellwar(
                        args.url, size=args.size or 16, players=args.players or 3, seed=args.seed, quiet=args.quiet
                    )
                )
            )
        else:
            result = asyncio.run(
                play(
                    args.url,
                    size=args.size or 60,
                    budget=100 if args.budget is None else args.budget,
                    seed=args.seed,
                    speed=args.speed or 8,
                    max_generations=args.max_generations,
                    quiet=args.quiet,
                    players=args.players or 2,
                    llm_seat=args.seat or 1,
                    placer=placer,
                )
            )
    except KeyboardInterrupt:
        sys.stderr.write("interrupted (Ctrl-C): the game stays on the server as it was\n")
        return 130
    except NotCellWarError as err:
        sys.stderr.write(f"{err}\n")
        return 2
    except ApiError as err:
        sys.stderr.write(f"API error: {err}\n")
        return 1
    except httpx.HTTPError as err:
        sys.stderr.write(f"cannot reach {args.url}: {err}\n")
        return 2
    except LLMError as err:
        sys.stderr.write(f"model server error: {err}\n")
        return 3
    finally:
        if placer is not None:
            placer.close()
    view = result["final_view"]
    scores = ", ".join(f"{p.get('name')} {p.get('cells')}" for p in view.get("players") or ())
    if result["result"] == "draw" or result["winner"] is None:
        print(f"result: draw ({scores})")
    else:
        print(f"winner: player {result['winner']} ({result['winner_name']}) ({scores})")
    print(f"game: {result['game_id']}  generations: {view.get('generation')}")
    print(f"events: {len(result['events'])}")
    print(f"final state hash: {result['state_hash']}")
    if placer is not None:
        print(f"llm (placements): {placer.stats.summary().replace('moves', 'placements', 1)}")
    return 0


def _print_cellwar(result: dict[str, Any]) -> int:
    """The CellWar summary on stdout; exit code 0."""
    view = result["final_view"]
    units = ", ".join(f"{p.get('name')} {p.get('units')}" for p in view.get("players") or ())
    print(f"winner: player {result['winner']} ({result['winner_name']}) ({units})")
    print(f"game: {result['game_id']}  rounds: {view.get('round')}")
    print(f"events: {len(result['events'])}")
    print(f"final state hash: {result['state_hash']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
