"""``python -m client.play``: bots play one game through the public API.

Usage::

    python -m client.play --url http://localhost:8000 --size 60 --budget 100 [--seed 1]
    python -m client.play --kind cellwar --players 3 [--size 16] [--seed 1]
    python -m client.play --matchmaking [--kind life] [--players 2] [--anonymous]
    python -m client.play --kind cellwar --bot trained [--opponent bot] [--size 8] [--seat 1]
    python -m client.play --kind cellwar --bot trained --game-id ID   # take a seat of a game

Life (the default): creates a game, runs two :class:`client.bots.LifeBot` concurrently
to the end (they ask for speed 8: the server ticks 8 generations/s × speed).
CellWar: creates a ``--size`` × ``--size`` game (default 16) with the default start
(2 infantry each, corners first) for ``--players`` (2..8) and runs that many
:class:`client.cellwar_bot.CellWarBot` to the end.
With ``--matchmaking`` the bots do not create a game: each queues a matchmaking ticket
(``--players`` of them, Life 2 or 4, CellWar 2..8; rated under a fresh profile unless
``--anonymous``), plays the game it is matched into, and its rating before and after is
printed (client/matchplay.py).
With ``--bot NAME`` (``random``, ``heuristic``, ``search``, ``trained``, see
:func:`client.bots.load_policy`) that policy plays seat ``--seat`` (default 1) through
the remote RL environment (:func:`client.rl.cellwar_env` with ``backend="remote"``, the
same observations it was trained on) and ``--opponent`` the other seats: ``bot`` (the
default, the API heuristic bot :class:`client.bots.cellwar.CellWarBot`) or a policy
name. The board defaults to 8×8 then (the size the policy was trained on). With
``--game-id`` the policy takes the next free seat of an existing game (e.g. one a
person opened in the browser) and plays it to the end.
Shows progress on stderr, then prints on stdout the winner, the number of events and
the final state hash (of the last event of ``GET /game/{id}/events``, read once the game
is finished, so whole). Exit code 0 when the game finished, 1 on an API error, 2 when the
server is unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import httpx

from client.bot_base import RETRY_UNAVAILABLE_S, said_retry
from client.bots import POLICY_NAMES, CellWarBot, LifeBot, load_policy
from client.sdk import ApiError, AsyncCellWarClient


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
) -> dict[str, Any]:
    """Create a 2-player Life game at ``url``, let two bots play it to the end.

    Returns:
        ``{"game_id", "final_view", "events", "winner", "result", "state_hash"}``.

    Raises:
        ApiError: the server refused a request.
        httpx.HTTPError: the server cannot be reached.
    """
    config: dict[str, Any] = {"width": size, "height": size, "players": 2, "budget": budget}
    if max_generations is not None:
        config["max_generations"] = max_generations
    progress = None if quiet else Progress()
    async with _client(url) as api:
        game_id = await api.create_game("life", config)
        if not quiet:
            sys.stderr.write(f"game {game_id}: {size}x{size}, budget {budget}, seed {seed}\n")
        bots = [
            LifeBot(api, game_id, "bot-red", seed=seed * 1000 + 1, speed=speed, on_view=progress),
            LifeBot(api, game_id, "bot-green", seed=seed * 1000 + 2, speed=speed, on_view=None),
        ]
        for bot in bots:  # seats in a fixed order: bot-red is player 1
            await bot.join()
        finals = await asyncio.gather(*(bot.play() for bot in bots))
        final = finals[0]
        events = await api.events(game_id, bots[0].seat.token)
    return _outcome(game_id, final, events, events[-1]["state_hash"] if events else "")


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


def _policy(name: str, seed: int) -> Any:
    """A policy by name, seeded when it takes a seed."""
    return load_policy(name, seed=seed) if name in ("random", "heuristic", "search") else load_policy(name)


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
) -> dict[str, Any]:
    """Play one joined seat of a CellWar game with ``policy`` through the remote
    environment until the game is over for it (blocking; run it in a thread beside async
    bots). Returns ``{"reward", "actions"}`` (reward +1 won, -1 lost, 0 unfinished)."""
    from client.rl import cellwar_env
    from client.sdk import CellWarClient

    # the policy's seat waits for a restarting server like the API bots
    client = CellWarClient(url, retry_unavailable_s=RETRY_UNAVAILABLE_S, on_retry=said_retry)
    env = cellwar_env(
        backend="remote", url=url, game_id=game_id, tokens={seat: token},
        width=width, height=height, players=players, max_rounds=10_000, client=client,
    )
    try:
        env.reset()
        policy.reset()
        reward, actions, last_round = 0.0, 0, None
        for agent in env.agent_iter():
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
) -> dict[str, Any]:
    """A CellWar game where policy ``bot`` plays seat ``seat`` and ``opponent`` (``"bot"``:
    the API heuristic bot; or a policy name) the others; with ``game_id`` the policy only
    takes the next free seat of that game.

    Returns:
        As :func:`play_cellwar`, plus ``"policy_seat"`` and ``"policy_reward"``.

    Raises:
        ApiError: the server refused a request (e.g. ``GAME_FULL``).
        ValueError: an unknown policy or opponent, or ``seat`` out of 1..players.
        httpx.HTTPError: the server cannot be reached.
    """
    if bot not in POLICY_NAMES or opponent not in ("bot", *POLICY_NAMES):
        raise ValueError(f"--bot is one of {POLICY_NAMES}; --opponent 'bot' or one of them")
    async with _client(url) as api:
        if game_id is not None:
            lobby = next((g for g in await api.games() if g["game_id"] == game_id), None)
            if lobby is None:
                raise ApiError(404, "GAME_NOT_FOUND", f"no open game {game_id} in the lobby")
            config = lobby.get("config") or {}
            size_w, size_h = int(config.get("width", 16)), int(config.get("height", 16))
            players = int(config.get("players", lobby.get("max_players", 2)))
            mine = await api.join(game_id, bot)
            tasks = [asyncio.to_thread(
                play_policy_seat, url, game_id, mine.player_id, mine.token, _policy(bot, seed),
                width=size_w, height=size_h, players=players, progress=not quiet,
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
                    play_policy_seat, url, game_id, s, token, _policy(name, seed * 1000 + s),
                    width=size_w, height=size_h, players=players, progress=not quiet and s == seat,
                ))
        results = await asyncio.gather(*tasks, *(b.play() for b in bots))
        token = seats[policy_seat][1]
        final = await api.state(game_id, token)
        while final.get("phase") != "finished":
            await asyncio.sleep(0.05)
            final = await api.state(game_id, token)
        events = await api.events(game_id, token)
    outcome = _outcome(game_id, final, events, events[-1].get("state_hash", "") if events else "")
    outcome["policy_seat"] = policy_seat
    outcome["policy_reward"] = results[0]["reward"]
    return outcome


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also the ``cellwar-bots`` script)."""
    parser = argparse.ArgumentParser(prog="python -m client.play", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://localhost:8000", help="gateway base URL")
    parser.add_argument("--kind", default="life", choices=("life", "cellwar"), help="game kind")
    parser.add_argument(
        "--players", type=int, default=None, help="CellWar: seats and bots (2..8; default 3, with --bot 2)"
    )
    parser.add_argument(
        "--size", type=int, default=None, help="board width and height in cells (Life 8..1024, default 60; CellWar 4..64, default 16)"
    )
    parser.add_argument("--budget", type=int, default=100, help="cells each player may place")
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' random choices")
    parser.add_argument("--speed", type=int, default=8, choices=(1, 2, 4, 8), help="speed multiplier to ask for")
    parser.add_argument("--max-generations", type=int, default=None, help="end the game after this many")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--matchmaking", action="store_true", help="find the game through matchmaking")
    parser.add_argument("--anonymous", action="store_true", help="matchmaking without profiles (unrated)")
    parser.add_argument("--bot", choices=POLICY_NAMES, default=None, help="CellWar: a policy plays --seat")
    parser.add_argument(
        "--opponent", choices=("bot", *POLICY_NAMES), default="bot",
        help="CellWar with --bot: who plays the other seats (bot = the API heuristic bot)",
    )
    parser.add_argument("--seat", type=int, default=1, help="CellWar with --bot: the policy's seat")
    parser.add_argument("--game-id", default=None, help="CellWar with --bot: take a seat of this game")
    args = parser.parse_args(argv)
    try:
        if args.matchmaking:
            from client.matchplay import play_matchmaking, print_matchmaking

            players = (args.players or 3) if args.kind == "cellwar" else (args.players if args.players in (2, 4) else 2)
            mm_config: dict[str, Any] = {"width": args.size, "height": args.size} if args.size else {}
            if args.kind == "life" and args.budget != 100:
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
                    args.url, bot=args.bot, opponent=args.opponent, size=args.size or 8,
                    players=args.players or 2,
                    seat=args.seat, seed=args.seed, game_id=args.game_id, quiet=args.quiet,
                )
            )
            won = result["winner"] == result["policy_seat"]
            print(f"{args.bot} (player {result['policy_seat']}): {'won' if won else 'lost'}")
            return _print_cellwar(result)
        if args.kind == "cellwar":
            return _print_cellwar(
                asyncio.run(
                    play_cellwar(
                        args.url, size=args.size or 16, players=args.players or 3, seed=args.seed, quiet=args.quiet
                    )
                )
            )
        result = asyncio.run(
            play(
                args.url,
                size=args.size or 60,
                budget=args.budget,
                seed=args.seed,
                speed=args.speed,
                max_generations=args.max_generations,
                quiet=args.quiet,
            )
        )
    except ApiError as err:
        sys.stderr.write(f"API error: {err}\n")
        return 1
    except httpx.HTTPError as err:
        sys.stderr.write(f"cannot reach {args.url}: {err}\n")
        return 2
    view = result["final_view"]
    scores = ", ".join(f"{p.get('name')} {p.get('cells')}" for p in view.get("players") or ())
    if result["result"] == "draw" or result["winner"] is None:
        print(f"result: draw ({scores})")
    else:
        print(f"winner: player {result['winner']} ({result['winner_name']}) ({scores})")
    print(f"game: {result['game_id']}  generations: {view.get('generation')}")
    print(f"events: {len(result['events'])}")
    print(f"final state hash: {result['state_hash']}")
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
