"""``python -m client.rl.train --kind cellwar``: train the CellWar policy by evolution.

The policy is :class:`client.bots.policies.LinearPolicy` (one weight per hand-made
feature, :mod:`client.rl.features`). CMA-ES (the ``cma`` package, extra ``[train]``)
searches the weights; a candidate's fitness is its win rate in seat-balanced 8×8 games
against the heuristic bot (weight 0.75) and the random bot (0.25), half of them from
the default start and half from seeded random starts, the same games for every
candidate of a generation. At the end the CMA mean and the best candidate seen are
compared on held-out games against the heuristic and the best is written as
``.npz`` (``weights`` plus the run's settings and figures), numpy only.

Everything is seeded (``--seed``): the same command on the same machine gives the same
weights. Usage::

    python -m client.rl.train --kind cellwar --seed 0 --generations 12 --popsize 12 \\
        --games 24 --out client/rl/policies/cellwar.npz
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from client.bots.policies import HeuristicPolicy, LinearPolicy, RandomPolicy
from client.rl.arena import match
from client.rl.cellwar import cellwar_env
from client.rl.features import FEATURES

#: Rounds after which a training game counts as not won (a strong policy wins well before).
TRAIN_MAX_ROUNDS = 60


def fitness(weights: np.ndarray, games: int, seed: int, size: int) -> float:
    """Score of one weight vector: 0.75 × win rate vs heuristic + 0.25 × vs random, over
    ``games`` games vs the heuristic and half as many vs random per start kind (default
    and random start); a game unfinished after :data:`TRAIN_MAX_ROUNDS` is not won."""
    half = max(games // 2, 1)
    total = 0.0
    for start, offset in (("default", 0), ("random", 500_000)):
        env = cellwar_env(width=size, height=size, start=start, max_rounds=TRAIN_MAX_ROUNDS)
        vs_h = match(lambda s: LinearPolicy(weights), lambda s: HeuristicPolicy(seed=s), half, seed=seed + offset, env=env)
        vs_r = match(lambda s: LinearPolicy(weights), lambda s: RandomPolicy(seed=s), max(half // 2, 1), seed=seed + offset + 7, env=env)
        total += 0.75 * vs_h.win_rate + 0.25 * vs_r.win_rate
    return total / 2


def train(
    *,
    seed: int = 0,
    generations: int = 12,
    popsize: int = 12,
    games: int = 24,
    sigma: float = 0.5,
    size: int = 8,
    holdout: int = 200,
    log: Any = sys.stderr,
) -> dict[str, Any]:
    """Run CMA-ES; returns ``{"weights", "fitness", "holdout_vs_heuristic", "seconds",
    "history"}`` (module docstring).

    Raises:
        ImportError: ``cma`` is missing (install the ``[train]`` extra).
    """
    with warnings.catch_warnings():  # cma warns that matplotlib (plots) is absent
        warnings.filterwarnings("ignore", message="Could not import matplotlib")
        import cma

    t0 = time.perf_counter()
    es = cma.CMAEvolutionStrategy(
        np.zeros(FEATURES), sigma, {"seed": seed + 1, "popsize": popsize, "verbose": -9}
    )
    best_w, best_f = np.zeros(FEATURES), -1.0
    history = []
    for gen in range(generations):
        candidates = es.ask()
        game_seed = seed * 1_000_003 + gen * 1_000
        scores = [fitness(np.asarray(w), games, game_seed, size) for w in candidates]
        es.tell(candidates, [-s for s in scores])
        top = int(np.argmax(scores))
        if scores[top] > best_f:
            best_f, best_w = scores[top], np.asarray(candidates[top]).copy()
        history.append(float(np.mean(scores)))
        log.write(
            f"generation {gen + 1}/{generations}: mean {np.mean(scores):.3f} best {scores[top]:.3f} "
            f"({time.perf_counter() - t0:.0f} s)\n"
        )
        log.flush()
    mean_w = np.asarray(es.result.xfavorite)
    env = cellwar_env(width=size, height=size)
    held: dict[str, float] = {}
    for label, w in (("mean", mean_w), ("best", best_w)):
        r = match(lambda s, w=w: LinearPolicy(w), lambda s: HeuristicPolicy(seed=s), holdout, seed=seed + 9_000_000, env=env)
        held[label] = r.win_rate
        log.write(f"held-out vs heuristic ({label}): {r.win_rate:.3f} over {holdout} games\n")
    label = "mean" if held["mean"] >= held["best"] else "best"
    return {
        "weights": mean_w if label == "mean" else best_w,
        "choice": label,
        "fitness": best_f,
        "holdout_vs_heuristic": held[label],
        "seconds": time.perf_counter() - t0,
        "history": history,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m client.rl.train", description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="cellwar", choices=("cellwar",), help="game kind (CellWar only)")
    parser.add_argument("--seed", type=int, default=0, help="seed of CMA-ES and of every game")
    parser.add_argument("--generations", type=int, default=12)
    parser.add_argument("--popsize", type=int, default=12)
    parser.add_argument("--games", type=int, default=24, help="games per candidate per start kind vs the heuristic")
    parser.add_argument("--sigma", type=float, default=0.5, help="initial CMA-ES step size")
    parser.add_argument("--size", type=int, default=8, help="board side in cells")
    parser.add_argument("--holdout", type=int, default=200, help="held-out games vs the heuristic at the end")
    parser.add_argument("--out", default="client/rl/policies/cellwar.npz", help="where to write the weights")
    args = parser.parse_args(argv)
    try:
        result = train(
            seed=args.seed, generations=args.generations, popsize=args.popsize, games=args.games,
            sigma=args.sigma, size=args.size, holdout=args.holdout,
        )
    except ImportError as err:
        sys.stderr.write(f"{err}: install the training extra, pip install -e '.[train]'\n")
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        weights=np.asarray(result["weights"], dtype=np.float32),
        features=np.int64(FEATURES),
        seed=np.int64(args.seed),
        generations=np.int64(args.generations),
        popsize=np.int64(args.popsize),
        games=np.int64(args.games),
        sigma=np.float64(args.sigma),
        size=np.int64(args.size),
        choice=np.str_(result["choice"]),
        fitness=np.float64(result["fitness"]),
        holdout_vs_heuristic=np.float64(result["holdout_vs_heuristic"]),
        seconds=np.float64(result["seconds"]),
        history=np.asarray(result["history"], dtype=np.float64),
    )
    sys.stderr.write(f"wrote {out} in {result['seconds']:.0f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
