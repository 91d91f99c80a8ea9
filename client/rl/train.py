"""``python -m client.rl.train --kind cellwar``: train the CellWar policy by evolution.

The policy is :class:`client.bots.policies.LinearPolicy` (one weight per hand-made
feature, :mod:`client.rl.features`). CMA-ES (the ``cma`` package, extra ``[train]``)
searches the weights; a candidate's fitness is its win rate in seat-balanced 8×8 games
against the heuristic bot (weight 0.75) and the random bot (0.25), half of them from
the default start and half from seeded random starts, the same games for every
candidate of a generation. Every game of a generation (all candidates, both opponents)
is played at once on the batched environment (:func:`client.rl.cellwar_vector_env`,
docs/vector-envs.md); only the policies run per game. At the end the CMA mean and the
best candidate seen are compared on held-out games against the heuristic and the best
is written as ``.npz`` (``weights`` plus the run's settings and figures), numpy only.

Everything is seeded (``--seed``): the same command on the same machine gives the same
weights. The default output is ``runs/cellwar-policy.npz``, never the shipped
``client/rl/policies/cellwar.npz`` (replace that only by naming it in ``--out``).
Usage::

    python -m client.rl.train --kind cellwar --seed 0 --out runs/cellwar-policy.npz
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from client.bots.policies import HeuristicPolicy, RandomPolicy
from client.rl.features import FEATURES, BatchMemory, batch_action_features

#: Rounds after which a training game counts as not won (a strong policy wins well before).
TRAIN_MAX_ROUNDS = 60
#: Where ``python -m client.rl.train`` writes by default (outside the shipped artifact).
DEFAULT_OUT = "runs/cellwar-policy.npz"


class _Progress:
    """Games finished out of the run's total, with an ETA (tqdm on ``log``)."""

    def __init__(self, total: int, log: Any) -> None:
        from tqdm import tqdm

        self.log = log
        self.bar = tqdm(total=total, file=log, unit="game", dynamic_ncols=True, mininterval=0.5,
                        disable=log is None)

    def update(self, n: int) -> None:
        self.bar.update(n)

    def note(self, text: str) -> None:
        if self.log is not None:
            self.bar.write(text, file=self.log)

    def close(self) -> None:
        self.bar.close()


def play_batch(
    weights: np.ndarray,
    opponents: Sequence[Callable[[], Any]],
    seats: Sequence[int],
    seeds: Sequence[int],
    *,
    start: str,
    size: int,
    max_rounds: int = TRAIN_MAX_ROUNDS,
    progress: _Progress | None = None,
) -> np.ndarray:
    """Play one 2-player game per row at once on :func:`client.rl.cellwar_vector_env`:
    the linear policy of ``weights[k]`` (``(k, FEATURES)``; scored for every game at
    once by :func:`client.rl.features.batch_action_features`, the features
    :class:`~client.bots.policies.LinearPolicy` computes one by one) in seat
    ``seats[k]`` against ``opponents[k]()``, the game seeded ``seeds[k]`` (as
    ``cellwar_env`` reset with that seed). Returns ``(k,) bool``: the linear policy won
    (a game unfinished after ``max_rounds`` rounds is not won)."""
    from client.rl.vector import cellwar_vector_env

    weights = np.asarray(weights, dtype=np.float32)
    k = len(seats)
    seats_a = np.asarray(seats)
    env = cellwar_vector_env(k, width=size, height=size, start=start, max_rounds=max_rounds, autoreset=False)
    obs, infos = env.reset(options={"seeds": list(seeds)})
    others = [make() for make in opponents]
    for policy in others:
        policy.reset()
    memory = BatchMemory(k, size, size)
    won = np.zeros(k, bool)
    live = np.ones(k, bool)
    while live.any():
        masks, planes = obs["action_mask"], obs["observation"]
        actions = masks.argmax(axis=1)  # games already decided: any legal action
        ours = live & (infos["seat"] == seats_a)
        rows = np.flatnonzero(ours)
        if len(rows):
            memory.update(rows, planes[rows])
            feats = batch_action_features(planes[rows], masks[rows], memory, rows)
            scores = np.einsum("ijf,if->ij", feats, weights[rows])
            actions[rows] = np.where(masks[rows] > 0, scores, -np.inf).argmax(axis=1)
        for i in np.flatnonzero(live & ~ours).tolist():
            actions[i] = others[i].act({"observation": planes[i], "action_mask": masks[i]})
        obs, _, terminated, truncated, infos = env.step(actions)
        over = live & (terminated | truncated)
        if over.any():
            idx = np.flatnonzero(over)
            won[idx] = infos["winner"][idx] == seats_a[idx]
            live[idx] = False
            if progress is not None:
                progress.update(len(idx))
    return won


def generation_fitness(
    candidates: Sequence[np.ndarray], games: int, seed: int, size: int, progress: _Progress | None = None
) -> list[float]:
    """Fitness of each weight vector: 0.75 × win rate vs heuristic + 0.25 × vs random,
    over ``games // 2`` games vs the heuristic and half as many vs random per start kind
    (default and random start), the candidate in seat 1 in even games and seat 2 in odd
    ones, the same games (seeds) for every candidate; a game unfinished after
    :data:`TRAIN_MAX_ROUNDS` rounds is not won."""
    half = max(games // 2, 1)
    quarter = max(half // 2, 1)
    scores = np.zeros(len(candidates))
    for start, offset in (("default", 0), ("random", 500_000)):
        players, opponents, seats, seeds, weight = [], [], [], [], []
        for w in candidates:
            for j in range(half + quarter):
                vs_heuristic = j < half
                s = seed + offset + (j if vs_heuristic else 7 + j - half)
                players.append(w)
                opponents.append((lambda s=s: HeuristicPolicy(seed=s)) if vs_heuristic else (lambda s=s: RandomPolicy(seed=s)))
                seats.append(1 if (j if vs_heuristic else j - half) % 2 == 0 else 2)
                seeds.append(s)
                weight.append(0.75 / half if vs_heuristic else 0.25 / quarter)
        won = play_batch(np.stack(players), opponents, seats, seeds, start=start, size=size, progress=progress)
        per = (won * np.asarray(weight)).reshape(len(candidates), half + quarter).sum(axis=1)
        scores += per / 2
    return scores.tolist()


def fitness(weights: np.ndarray, games: int, seed: int, size: int) -> float:
    """:func:`generation_fitness` of one weight vector."""
    return generation_fitness([np.asarray(weights)], games, seed, size)[0]


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
    """Run CMA-ES; returns ``{"weights", "choice", "fitness", "holdout_vs_heuristic",
    "seconds", "history"}`` (module docstring). Progress (games done, ETA) and one line
    per generation go to ``log`` (None: silent).

    Raises:
        ImportError: ``cma`` is missing (install the ``[train]`` extra).
    """
    with warnings.catch_warnings():  # cma warns that matplotlib (plots) is absent
        warnings.filterwarnings("ignore", message="Could not import matplotlib")
        import cma

    t0 = time.perf_counter()
    half = max(games // 2, 1)
    per_generation = 2 * popsize * (half + max(half // 2, 1))
    progress = _Progress(generations * per_generation + 2 * holdout, log)
    es = cma.CMAEvolutionStrategy(
        np.zeros(FEATURES), sigma, {"seed": seed + 1, "popsize": popsize, "verbose": -9}
    )
    best_w, best_f = np.zeros(FEATURES), -1.0
    history = []
    for gen in range(generations):
        candidates = [np.asarray(w) for w in es.ask()]
        game_seed = seed * 1_000_003 + gen * 1_000
        scores = generation_fitness(candidates, games, game_seed, size, progress)
        es.tell(candidates, [-s for s in scores])
        top = int(np.argmax(scores))
        if scores[top] > best_f:
            best_f, best_w = scores[top], candidates[top].copy()
        history.append(float(np.mean(scores)))
        progress.note(
            f"generation {gen + 1}/{generations}: mean {np.mean(scores):.3f} best {scores[top]:.3f} "
            f"({time.perf_counter() - t0:.0f} s)"
        )
    mean_w = np.asarray(es.result.xfavorite)
    held: dict[str, float] = {}
    base = seed + 9_000_000
    pair = (("mean", mean_w), ("best", best_w))
    won = play_batch(
        np.stack([w for _, w in pair for _ in range(holdout)]).reshape(-1, FEATURES),
        [lambda s=base + i: HeuristicPolicy(seed=s) for _ in pair for i in range(holdout)],
        [1 if i % 2 == 0 else 2 for _ in pair for i in range(holdout)],
        [base + i for _ in pair for i in range(holdout)],
        start="default", size=size, max_rounds=100, progress=progress,
    )
    for n, (label, _) in enumerate(pair):
        held[label] = float(won[n * holdout : (n + 1) * holdout].mean()) if holdout else 0.0
        progress.note(f"held-out vs heuristic ({label}): {held[label]:.3f} over {holdout} games")
    progress.close()
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
    parser = argparse.ArgumentParser(
        prog="python -m client.rl.train",
        description="Train the CellWar linear policy by CMA-ES on the batched environment (docs/vector-envs.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--kind", default="cellwar", choices=("cellwar",), help="game kind (CellWar only)")
    parser.add_argument("--seed", type=int, default=0, help="seed of CMA-ES and of every game")
    parser.add_argument("--generations", type=int, default=12, help="CMA-ES generations")
    parser.add_argument("--popsize", type=int, default=12, help="candidates per generation")
    parser.add_argument("--games", type=int, default=24, help="games per candidate per start kind (half vs the heuristic)")
    parser.add_argument("--sigma", type=float, default=0.5, help="initial CMA-ES step size")
    parser.add_argument("--size", type=int, default=8, help="board side in cells")
    parser.add_argument("--holdout", type=int, default=200, help="held-out games vs the heuristic at the end")
    parser.add_argument(
        "--out", default=DEFAULT_OUT,
        help="where to write the weights (the shipped policy is client/rl/policies/cellwar.npz: name it to replace it)",
    )
    args = parser.parse_args(argv)
    sys.stderr.write(
        f"training CellWar policy: {args.generations} generations x {args.popsize} candidates, "
        f"{args.size}x{args.size}, seed {args.seed}, writing {args.out}\n"
    )
    sys.stderr.flush()
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
