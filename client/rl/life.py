"""Life placement as a Gymnasium environment (docs/vector-envs.md has its batched form).

The agent holds one seat of a 2-player Life game (``seat``, default 1) and places its
whole budget one cell at a time in its zone; a fixed opponent policy places the other
seat's cells (blind placement: neither sees the other's cells). Then the game runs:
the simulation until the board is stable or ``max_generations`` is reached, and a
stable board's redraw round passes with nobody drawing, which ends the game (:mod:`engine.life.game`
end condition 3). The reward, given once at the end, is the agent's share of the live
cells: ``own / (own + opponent)`` (0 when none is left).

- Action: ``Discrete(zone_w * zone_h)``, cell ``(x0 + a % zone_w, y0 + a // zone_w)``
  of the agent's zone (left half for seat 1, right half for seat 2).
- Observation: ``{"observation": (2, H, W) uint8`` (plane 0 the agent's own cells as
  its view shows them, plane 1 its zone), ``"action_mask": (zone_w * zone_h,) int8}``
  (1 on empty cells of the zone); ``info["action_mask"]`` too.
- A masked-out action (a cell already placed) changes nothing: reward 0, not
  terminated, ``info["error"] = {"code": "CELL_TAKEN", "message"}``.

``backend="local"`` runs on the engine library; ``backend="remote", url=...`` plays
the same game through the REST API (both seats joined by this env; the server ticks
the simulation in real time at speed 8).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from client.bots.life import decode_board
from client.rl.codes import ErrorCode

#: An opponent: ``(view, budget, rng) -> [(x, y), ...]`` cells of its own zone (view's
#: ``zone``), at most ``budget`` of them.
Opponent = Callable[[dict[str, Any], int, np.random.Generator], list[tuple[int, int]]]


def zone_of(width: int, height: int, seat: int) -> tuple[int, int, int, int]:
    """The half-open zone ``(x0, y0, x1, y1)`` of a seat of a 2-player game (:mod:`engine.life.zones`:
    left half ``x < width // 2`` for seat 1, the right half for seat 2)."""
    mid = width // 2
    return (0, 0, mid, height) if seat == 1 else (mid, 0, width, height)


def random_cells(view: dict[str, Any], budget: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Opponent ``"random"``: ``budget`` distinct cells of its zone at random."""
    x0, y0, x1, y1 = view["zone"]
    flat = rng.choice((x1 - x0) * (y1 - y0), size=min(budget, (x1 - x0) * (y1 - y0)), replace=False)
    return [(x0 + int(i) % (x1 - x0), y0 + int(i) // (x1 - x0)) for i in flat]


def block_cells(view: dict[str, Any], budget: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Opponent ``"blocks"``: 2×2 blocks (a still life) at random spots of its zone, a
    cell apart, as many as the budget pays for (leftover cells unused)."""
    x0, y0, x1, y1 = view["zone"]
    taken: set[tuple[int, int]] = set()
    cells: list[tuple[int, int]] = []
    for _ in range(200):
        if len(cells) + 4 > budget or x1 - x0 < 4 or y1 - y0 < 4:
            break
        x, y = int(rng.integers(x0 + 1, x1 - 2)), int(rng.integers(y0 + 1, y1 - 2))
        block = [(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)]
        halo = {(bx + dx, by + dy) for bx, by in block for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
        if halo & taken:
            continue
        cells += block
        taken.update(block)
    return cells


#: Opponents by name.
OPPONENTS: dict[str, Opponent] = {"random": random_cells, "blocks": block_cells}


def resolve_opponent(opponent: str | Opponent, seat: int) -> Opponent:
    """The opponent callable of ``opponent`` (a name of :data:`OPPONENTS` or a callable).

    Raises:
        ValueError: an unknown opponent name, or a seat other than 1 or 2.
    """
    if isinstance(opponent, str):
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {sorted(OPPONENTS)} or a callable, got {opponent!r}")
        opponent = OPPONENTS[opponent]
    if seat not in (1, 2):
        raise ValueError(f"seat must be 1 or 2, got {seat!r}")
    return opponent


def zone_size(width: int, height: int, seat: int, budget: int) -> tuple[tuple[int, int, int, int], int, int]:
    """``(zone, zone_w, zone_h)`` of a seat (:func:`zone_of`).

    Raises:
        ValueError: a budget outside ``1..`` the zone's cells.
    """
    zone = zone_of(width, height, seat)
    x0, y0, x1, y1 = zone
    cells = (x1 - x0) * (y1 - y0)
    if not 1 <= budget <= cells:
        raise ValueError(f"budget must be in 1..{cells} (the zone's cells), got {budget}")
    return zone, x1 - x0, y1 - y0


def opponent_cells(opponent: Opponent, view: dict[str, Any], budget: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """The cells the opponent places: its answer kept to its zone, without repeats, at
    most ``budget``."""
    cells = opponent(view, budget, rng)
    x0, y0, x1, y1 = view["zone"]
    cells = list(dict.fromkeys((int(x), int(y)) for x, y in cells if x0 <= x < x1 and y0 <= y < y1))
    return cells[:budget]


class _LocalLife:
    """The game on the engine library (events folded as the engine records them)."""

    def __init__(self, config: dict[str, Any]) -> None:
        import engine

        self._engine = engine
        self.config = config
        self.state: Any = None

    def reset(self) -> None:
        e = self._engine
        _, state = e.decide(None, "create", 0, {"kind": "life", "config": self.config})
        for name in ("player_1", "player_2"):
            _, state = e.decide(state, "join", 0, {"name": name})
        self.state = state

    def view(self, seat: int) -> dict[str, Any]:
        return self._engine.get_visible_state(self.state, seat)

    def place(self, seat: int, cells: list[tuple[int, int]]) -> None:
        if cells:
            action = {"type": "place", "cells": [[x, y] for x, y in cells]}
            self.state = self._engine.apply_action(self.state, seat, action)

    def end_turn(self, seat: int) -> None:
        self.state = self._engine.end_player_turn(self.state, seat)

    def run(self) -> dict[str, Any]:
        e = self._engine
        self.state = e.tick(self.state, self.config["max_generations"])
        if e.summary(self.state).phase == "redraw":
            for seat in (1, 2):
                self.state = e.end_player_turn(self.state, seat)
        return e.get_visible_state(self.state, None)

    def close(self) -> None:
        pass


class _RemoteLife:
    """The game through REST: both seats joined here; the server runs the simulation."""

    def __init__(self, config: dict[str, Any], url: str, client: Any, poll_s: float, timeout_s: float) -> None:
        from client.sdk import CellWarClient

        self.api = client if client is not None else CellWarClient(url)
        self.config = config
        self.poll_s, self.timeout_s = poll_s, timeout_s
        self.game_id = ""
        self.tokens: dict[int, str] = {}

    def reset(self) -> None:
        self.game_id = self.api.create_game("life", self.config)
        self.tokens = {}
        for name in ("rl-1", "rl-2"):
            seat = self.api.join(self.game_id, name)
            self.tokens[seat.player_id] = seat.token

    def view(self, seat: int) -> dict[str, Any]:
        return self.api.state(self.game_id, self.tokens[seat])

    def place(self, seat: int, cells: list[tuple[int, int]]) -> None:
        if cells:
            self.api.place(self.game_id, self.tokens[seat], cells)

    def end_turn(self, seat: int) -> None:
        self.api.end_turn(self.game_id, self.tokens[seat])

    def _wait(self, phases: tuple[str, ...]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while True:
            view = self.view(1)
            if view["phase"] in phases:
                return view
            if time.monotonic() > deadline:
                raise TimeoutError(f"game {self.game_id} still {view['phase']} after {self.timeout_s} s")
            time.sleep(self.poll_s)

    def _if_still_possible(self, request: Callable[[], Any]) -> None:
        """Send a request the game may have outrun (the server ticks on its own): a 409
        (e.g. ``GAME_FINISHED``) only means it is no longer needed."""
        from client.sdk import ApiError

        try:
            request()
        except ApiError as err:
            if err.status != 409:
                raise

    def run(self) -> dict[str, Any]:
        view = self.view(1)
        if view["phase"] == "running" and view.get("speed") != 8:
            self._if_still_possible(lambda: self.api.speed(self.game_id, self.tokens[1], 8))
        view = self._wait(("redraw", "finished"))
        if view["phase"] == "redraw":
            for seat in (1, 2):
                self._if_still_possible(lambda seat=seat: self.end_turn(seat))
            view = self._wait(("finished",))
        return view

    def close(self) -> None:
        self.api.close()


class LifePlacementEnv(gym.Env):
    """Life placement against a fixed opponent (module docstring). Build it with
    :func:`life_placement_env`.

    Args:
        opponent: ``"random"``, ``"blocks"`` or an :data:`Opponent` callable.
        width, height: board size in cells (8..1024; default 16×16).
        budget: cells each player places (>= 1, at most the zone's size).
        max_generations: the game ends by score after this many generations.
        seat: the agent's seat, 1 (places first) or 2.
        render_mode: None, ``"ansi"`` or ``"rgb_array"`` (the agent's view).
        backend: ``"local"`` or ``"remote"`` (with ``url``, or ``client`` in tests).

    Raises:
        ValueError: an unknown opponent, backend, seat or render mode; a budget out of range.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(
        self,
        opponent: str | Opponent = "random",
        *,
        width: int = 16,
        height: int = 16,
        budget: int = 12,
        max_generations: int = 300,
        seat: int = 1,
        render_mode: str | None = None,
        backend: str = "local",
        url: str | None = None,
        client: Any = None,
        poll_s: float = 0.05,
        timeout_s: float = 120.0,
    ) -> None:
        opponent = resolve_opponent(opponent, seat)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.zone, self.zone_w, self.zone_h = zone_size(width, height, seat, budget)
        x0, y0, x1, y1 = self.zone
        cells = self.zone_w * self.zone_h
        self.opponent = opponent
        self.seat = seat
        self.budget = budget
        self.render_mode = render_mode
        config = {"width": width, "height": height, "players": 2, "budget": budget, "max_generations": max_generations}
        if backend == "local":
            self.backend: Any = _LocalLife(config)
        elif backend == "remote":
            if not url and client is None:
                raise ValueError("backend='remote' needs url=...")
            self.backend = _RemoteLife(config, url or "", client, poll_s, timeout_s)
        else:
            raise ValueError(f"backend must be 'local' or 'remote', got {backend!r}")
        self.width, self.height = width, height
        self.action_space = spaces.Discrete(cells)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (2, height, width), dtype=np.uint8),
                "action_mask": spaces.MultiBinary(cells),
            }
        )
        self._zone_plane = np.zeros((height, width), dtype=np.uint8)
        self._zone_plane[y0:y1, x0:x1] = 1
        self._own = np.zeros((height, width), dtype=np.uint8)
        self._placed = 0
        self._done = True
        self.final_view: dict[str, Any] | None = None

    # -- helpers

    def cell(self, action: int) -> tuple[int, int]:
        """The board cell (x, y) of an action index."""
        x0, y0, _, _ = self.zone
        return x0 + action % self.zone_w, y0 + action // self.zone_w

    def _read_view(self) -> dict[str, Any]:
        view = self.backend.view(self.seat)
        rows = decode_board(str(view.get("board") or ""), self.width, self.height)
        self._own = (np.asarray(rows, dtype=np.uint8) == self.seat).astype(np.uint8)
        return view

    def _obs(self) -> dict[str, np.ndarray]:
        x0, y0, x1, y1 = self.zone
        free = 1 - self._own[y0:y1, x0:x1]
        mask = free.reshape(-1).astype(np.int8) if not self._done else np.zeros(self.zone_w * self.zone_h, np.int8)
        return {"observation": np.stack([self._own, self._zone_plane]), "action_mask": mask}

    def _opponent_turn(self) -> None:
        other = 3 - self.seat
        view = self.backend.view(other)
        self.backend.place(other, opponent_cells(self.opponent, view, self.budget, self.np_random))
        self.backend.end_turn(other)

    # -- gymnasium

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """A new game; the opponent has placed already when the agent is seat 2."""
        super().reset(seed=seed)
        self.backend.reset()
        self._placed, self._done, self.final_view = 0, False, None
        if self.seat == 2:
            self._opponent_turn()
        view = self._read_view()
        if tuple(view["zone"]) != self.zone:
            raise RuntimeError(f"the server's zone {view['zone']} is not {self.zone}")
        obs = self._obs()
        return obs, {"action_mask": obs["action_mask"]}

    def step(self, action: Any):
        """Place one cell; after the last, run the game to its end (reward = share)."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        obs = self._obs()
        index = int(action)
        if not 0 <= index < self.action_space.n or not obs["action_mask"][index]:
            error = {"code": ErrorCode.CELL_TAKEN, "message": f"action {index} is not a free cell of the zone"}
            return obs, 0.0, False, False, {"action_mask": obs["action_mask"], "error": error}
        self.backend.place(self.seat, [self.cell(index)])
        self._placed += 1
        reward = 0.0
        if self._placed < self.budget:
            self._read_view()
        else:
            self.backend.end_turn(self.seat)
            if self.seat == 1:
                self._opponent_turn()
            self.final_view = self.backend.run()
            counts = {p["id"]: int(p.get("cells") or 0) for p in self.final_view["players"]}
            own, total = counts.get(self.seat, 0), sum(counts.values())
            reward = own / total if total else 0.0
            self._done = True
        obs = self._obs()
        info: dict[str, Any] = {"action_mask": obs["action_mask"]}
        if self._done:
            info["final_cells"] = {str(k): v for k, v in counts.items()}
        return obs, reward, self._done, False, info

    def render(self):
        """``"ansi"``: the agent's own cells (``o``) in its zone (``.``), the rest blank;
        ``"rgb_array"``: ``(H * 8, W * 8, 3) uint8`` of the same."""
        if self.render_mode is None:
            return None
        own, zone = self._own, self._zone_plane
        if self.render_mode == "ansi":
            return "\n".join(
                "".join("o" if own[y, x] else ("." if zone[y, x] else " ") for x in range(self.width))
                for y in range(self.height)
            ) + "\n"
        image = np.zeros((self.height, self.width, 3), dtype=np.uint8)
        image[zone.astype(bool)] = (40, 40, 40)
        image[own.astype(bool)] = (220, 60, 60) if self.seat == 1 else (60, 180, 80)
        return np.repeat(np.repeat(image, 8, axis=0), 8, axis=1)

    def close(self) -> None:
        """Close the remote client."""
        self.backend.close()


def life_placement_env(opponent: str | Opponent = "random", **config: Any) -> LifePlacementEnv:
    """A Life placement environment against ``opponent`` (``"random"``, ``"blocks"`` or a
    callable); ``config`` as :class:`LifePlacementEnv` (``width``, ``budget``, ``seat``,
    ``backend="remote", url=...``)."""
    return LifePlacementEnv(opponent, **config)
