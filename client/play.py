"""``python -m client.play``: two bots play one Life game through the public API.

Usage::

    python -m client.play --url http://localhost:8000 --size 60 --budget 100 [--seed 1]

Creates a game, runs two :class:`client.bots.LifeBot` concurrently to the end (they ask
for speed 8: the server ticks 8 generations/s × speed), shows progress (phase,
generation, cells per player) on stderr, then prints on stdout the winner, the number
of events and the final state hash (of the last event of ``GET /game/{id}/events``).
Exit code 0 when the game finished, 1 on an API error, 2 when the server is unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import httpx

from client.bots import LifeBot
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
    names = {p.get("id"): p.get("name") for p in final.get("players") or ()}
    return {
        "game_id": game_id,
        "final_view": final,
        "events": events,
        "winner": final.get("winner"),
        "winner_name": names.get(final.get("winner")),
        "result": final.get("result"),
        "state_hash": events[-1]["state_hash"] if events else "",
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also the ``cellwar-bots`` script)."""
    parser = argparse.ArgumentParser(prog="python -m client.play", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://localhost:8000", help="gateway base URL")
    parser.add_argument("--size", type=int, default=60, help="board width and height in cells (8..1024)")
    parser.add_argument("--budget", type=int, default=100, help="cells each player may place")
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' random choices")
    parser.add_argument("--speed", type=int, default=8, choices=(1, 2, 4, 8), help="speed multiplier to ask for")
    parser.add_argument("--max-generations", type=int, default=None, help="end the game after this many")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    try:
        result = asyncio.run(
            play(
                args.url,
                size=args.size,
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


if __name__ == "__main__":
    sys.exit(main())
