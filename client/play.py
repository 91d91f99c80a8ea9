"""``python -m client.play``: bots play one game through the public API.

Usage::

    python -m client.play --url http://localhost:8000 --size 60 --budget 100 [--seed 1]
    python -m client.play --kind cellwar --players 3 [--size 16] [--seed 1]
    python -m client.play --matchmaking [--kind life] [--players 2] [--anonymous]

Life (the default): creates a game, runs two :class:`client.bots.LifeBot` concurrently
to the end (they ask for speed 8: the server ticks 8 generations/s × speed).
CellWar: creates a ``--size`` × ``--size`` game (default 16) with the default start
(2 infantry each, corners first) for ``--players`` (2..8) and runs that many
:class:`client.cellwar_bot.CellWarBot` to the end.
With ``--matchmaking`` the bots do not create a game: each queues a matchmaking ticket
(``--players`` of them, Life 2 or 4, CellWar 2..8; rated under a fresh profile unless
``--anonymous``), plays the game it is matched into, and its rating before and after is
printed (client/matchplay.py).
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

from client.bots import LifeBot
from client.cellwar_bot import CellWarBot
from client.sdk import ApiError, AsyncCellWarClient


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
    async with AsyncCellWarClient(url) as api:
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
    """Writes one progress line to stderr per round (units per player as far as the
    first bot can tell: its own count, ``?`` for the others while the game runs)."""

    def __init__(self) -> None:
        self._last: tuple[Any, Any] | None = None

    def __call__(self, _bot: CellWarBot, view: dict[str, Any]) -> None:
        key = (view.get("phase"), view.get("round"))
        if key == self._last:
            return
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
    async with AsyncCellWarClient(url) as api:
        game_id = await api.create_game("cellwar", config)
        if not quiet:
            sys.stderr.write(f"game {game_id}: cellwar {config.get('width')}x{config.get('height')}, "
                             f"{players} players, seed {seed}\n")
        bots = [
            CellWarBot(api, game_id, f"bot-{i}", seed=seed * 1000 + i, on_view=progress if i == 1 else None)
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


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also the ``cellwar-bots`` script)."""
    parser = argparse.ArgumentParser(prog="python -m client.play", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://localhost:8000", help="gateway base URL")
    parser.add_argument("--kind", default="life", choices=("life", "cellwar"), help="game kind")
    parser.add_argument("--players", type=int, default=3, help="CellWar: seats and bots (2..8)")
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
    args = parser.parse_args(argv)
    try:
        if args.matchmaking:
            from client.matchplay import play_matchmaking, print_matchmaking

            players = args.players if args.kind == "cellwar" or args.players in (2, 4) else 2
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
        if args.kind == "cellwar":
            return _print_cellwar(
                asyncio.run(
                    play_cellwar(
                        args.url, size=args.size or 16, players=args.players, seed=args.seed, quiet=args.quiet
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
