"""The LLM player's benchmark (docs/llm-players.md): SmolLM2-135M-Instruct (the ``llm``
extra) served by ``llama-cpp-python[server]`` on loopback plays seeded CellWar 6×6 games
in process (:func:`client.rl.arena.match`, seats alternating) against the random and the
heuristic policy.

Rows (all ``info``: a 135M model may lose, the figure is what counts):

* win rate against random and against heuristic over ``games`` games each, with the 95 %
  Wilson score interval (Wilson 1927, "Probable inference, the law of succession, and
  statistical inference", JASA 22:209); an unfinished game (the env's round limit)
  counts as not won;
* seconds per move (wall time of ``act``: the request, validation, any fallback), and
  the counts of invalid answers, retries and moves replaced by the heuristic.

Without the ``llm`` extra every row says so (skipped, not failed).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

from client.bots import load_policy
from client.bots.llm import LLMPolicy
from client.bots.llm_local import SMOLLM2_ALIAS, local_server, server_available
from client.rl.arena import MatchResult, match

#: Seed of every benchmark game.
SEED = 20261201
#: Board side of the games (cells).
SIZE = 6
#: Games per opponent between two progress lines (even: the seats alternate as in one match).
CHUNK = 2


def wilson(wins: int, games: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of ``wins / games`` (95 % for the default ``z``), as
    (low, high) in 0..1; (0, 1) without games."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def _skipped(reason: str) -> dict[str, Any]:
    return {
        "rows": [
            {
                "name": f"LLM player (SmolLM2-135M) CellWar {SIZE}x{SIZE}",
                "unit": "-",
                "kernel": None,
                "reference": None,
                "ratio": None,
                "target_text": f"skipped: {reason}",
                "pass": True,
                "info": True,
            }
        ]
    }


def play_matches(url: str, games: int, opponents: tuple[str, ...] = ("heuristic", "random")) -> dict[str, Any]:
    """``games`` games of the LLM policy at ``url`` against each of ``opponents``.

    Returns:
        ``{"results": {opponent: MatchResult}, "stats": LLMStats, "seconds": float}``.
    """
    policy = LLMPolicy(url, SMOLLM2_ALIAS, seed=SEED)
    policy.check()
    results = {opponent: MatchResult() for opponent in opponents}
    t0 = time.perf_counter()
    try:
        # chunks of CHUNK games against each opponent in turn: the same games as one match
        # per opponent (game i: seed SEED + i), with both tallies growing side by side
        for first in range(0, games, CHUNK):
            n = min(CHUNK, games - first)
            for opponent in opponents:
                part = match(
                    lambda s: policy, lambda s, o=opponent: load_policy(o, seed=s), n,
                    seed=SEED + first, width=SIZE, height=SIZE,
                )
                total = results[opponent]
                for field in ("games", "wins", "losses", "unfinished", "steps"):
                    setattr(total, field, getattr(total, field) + getattr(part, field))
            tallies = "; ".join(
                f"vs {o} {r.wins}/{r.games} won ({r.unfinished} unfinished)" for o, r in results.items()
            )
            sys.stderr.write(f"llm: smollm2 {tallies}; {time.perf_counter() - t0:.0f} s; {policy.stats.summary()}\n")
    finally:
        policy.close()
    return {"results": results, "stats": policy.stats, "seconds": time.perf_counter() - t0}


def run(quick: bool = False, games: int | None = None) -> dict[str, Any]:
    """Measure the rows; returns ``{"rows": [...]}``.

    Args:
        quick: 10 games per opponent (a smoke run: wide intervals).
        games: games per opponent (default 100; 10 with ``quick``).
    """
    if not server_available():
        return _skipped("the llm extra is not installed (pip install -e '.[llm]')")
    games = games or (10 if quick else 100)
    log = Path(".bench") / "llm-server.log"
    log.parent.mkdir(exist_ok=True)
    with local_server(log=log) as url:
        measured = play_matches(url, games)
    stats = measured["stats"]
    rows: list[dict[str, Any]] = []
    for opponent, result in measured["results"].items():
        low, high = wilson(result.wins, result.games)
        rows.append(
            {
                "name": f"LLM (SmolLM2-135M) vs {opponent}, {SIZE}x{SIZE}, {result.games} games",
                "unit": "win rate",
                "kernel": result.win_rate,
                "reference": None,
                "ratio": None,
                "target_text": f"95% CI [{low:.1%}, {high:.1%}]",
                "pass": True,
                "info": True,
                "games": result.games,
                "wins": result.wins,
                "losses": result.losses,
                "unfinished": result.unfinished,
                "ci95": [low, high],
                "steps": result.steps,
            }
        )
    rows.append(
        {
            "name": f"LLM (SmolLM2-135M) seconds per move, {SIZE}x{SIZE}",
            "unit": "s/move",
            "kernel": stats.seconds_per_move,
            "reference": None,
            "ratio": None,
            "target_text": (
                f"{stats.moves} moves: {stats.invalid} invalid, {stats.retries} retried, "
                f"{stats.fallbacks} by the heuristic"
            ),
            "pass": True,
            "info": True,
            **stats.as_dict(),
            "wall_seconds": measured["seconds"],
        }
    )
    return {"rows": rows}


if __name__ == "__main__":
    import json

    games_arg = int(sys.argv[1]) if len(sys.argv) > 1 else None
    print(json.dumps(run(games=games_arg), indent=2, default=str))
