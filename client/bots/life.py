"""Life bots that play only through the public API (client/sdk.py).

:class:`LifeBot` joins a game, follows it on its seat's WebSocket, which also carries
its commands (REST when the socket cannot be opened or closes; with a polling fallback
for the views), and when it may draw, places small figures (blocks, beehives, blinkers,
R-pentominoes) at random spots of its own zone within its budget, chosen by its own
seeded ``random.Random`` (never the global one, so a seed replays the same choices).

- ``placement``: on its turn, stamps one still life of the pattern library (when
  ``stamps``), places figures up to ``placement_share`` of the budget, then ``end_turn``.
- ``running``: asks once for the bot's ``speed`` multiplier (the real server ticks at
  8 generations/s × speed).
- ``redraw``: places a few cells on empty spots (``redraw_share`` of what is left,
  at least one figure while budget lasts) or nothing, then says ready (``end_turn``).
- ``finished``: :meth:`LifeBot.play` returns the final view.

A view is the REST view (docs/api/index.md "Views and `seq`"); the bot reads ``phase, turn,
you, zone, players, generation, speed, width, height, board``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from cellwar.v1 import board_codec
from client.bot_base import ApiBot, OnCommand
from client.sdk import ApiError, AsyncCellWarClient, Seat

#: Figures as (x, y) offsets: name -> cells. R-pentomino: the classic methuselah.
FIGURES: dict[str, tuple[tuple[int, int], ...]] = {
    "block": ((0, 0), (1, 0), (0, 1), (1, 1)),
    "blinker": ((0, 0), (1, 0), (2, 0)),
    "beehive": ((1, 0), (2, 0), (0, 1), (3, 1), (1, 2), (2, 2)),
    "r_pentomino": ((1, 0), (2, 0), (0, 1), (1, 1), (1, 2)),
    "tub": ((1, 0), (0, 1), (2, 1), (1, 2)),
}

#: Library stamps the bot may use: name -> (side of its bounding square, live cells).
STAMPS: dict[str, tuple[int, int]] = {"beehive": (4, 6), "loaf": (4, 7), "boat": (3, 5)}

#: How often each figure is picked (still lifes mostly, so games settle).
FIGURE_WEIGHTS: dict[str, int] = {"block": 5, "beehive": 2, "blinker": 2, "tub": 1, "r_pentomino": 2}

OnView = Callable[["LifeBot", dict[str, Any]], Awaitable[None] | None]


def decode_board(rle: str, width: int, height: int) -> list[list[int]]:
    """Decode a view's ``board`` (multi-state: ``.`` dead, ``A`` colour 1, ``B`` colour
    2, ...) or ``visible`` (two-state ``b``/``o``) text into ``height`` rows of ``width``
    ints, ``rows[y][x]``: ``cellwar.v1.board_codec.decode_rows`` (the format: header and
    ``#`` lines skipped, rows padded with dead cells). An empty text (a view without the
    field) is an all-dead board.

    Raises:
        cellwar.v1.board_codec.BoardFormatError: a malformed text or a live cell outside
            ``width`` x ``height`` (a ``ValueError``).
    """
    return board_codec.decode_rows(rle or "!", width, height)


def _me(view: dict[str, Any]) -> dict[str, Any]:
    you = view.get("you")
    for player in view.get("players") or ():
        if player.get("id") == you:
            return player
    return {}


class LifeBot(ApiBot):
    """A Life player driven by the public API.

    Args:
        api: the client (shared between bots is fine).
        game_id: the game to join.
        name: the player name shown to others.
        seed: seeds the bot's own ``random.Random``.
        speed: speed multiplier asked for once the simulation runs (1, 2, 4, 8; 0 = never).
        placement_share: share of the budget spent in the placement turn (0..1).
        redraw_share: share of the remaining budget spent in each redraw round (0..1).
        poll_s: seconds without a stream message after which the state is polled.
        stamps: stamp one library still life (beehive, loaf, boat) in the placement turn.
        on_view: called with (bot, view) for every view seen (progress display).
        commands / on_command: as :class:`client.bot_base.ApiBot` (``socket``: the
            commands go over the seat's stream socket).
    """

    def __init__(
        self,
        api: AsyncCellWarClient,
        game_id: str,
        name: str,
        *,
        seed: int = 0,
        speed: int = 8,
        placement_share: float = 0.7,
        redraw_share: float = 0.5,
        poll_s: float = 2.0,
        stamps: bool = True,
        on_view: OnView | None = None,
        commands: str = "socket",
        on_command: OnCommand | None = None,
    ) -> None:
        super().__init__(
            api, game_id, name, seed=seed, poll_s=poll_s, on_view=on_view, commands=commands, on_command=on_command
        )
        self.speed = speed
        self.placement_share = placement_share
        self.redraw_share = redraw_share
        self.stamps = stamps
        self._placed = False
        self._redraw_done: set[int] = set()
        self._speed_asked = False

    # -- the loop

    async def play(self) -> dict[str, Any]:
        """Act on every view until the game is finished; returns the final view."""
        return await self._follow(await self.join(), self.act_on)

    async def _read_stream(self, seat: Seat, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """:meth:`client.bot_base.ApiBot._forward_views`, then None on ``queue`` once the
        stream ended; a failed stream puts nothing (polling every ``poll_s`` takes over)."""
        try:
            await self._forward_views(seat, queue)
        except Exception:  # the stream failed (network, 4xxx): polling takes over
            return
        await queue.put(None)

    # -- decisions

    async def act_on(self, view: dict[str, Any]) -> None:
        """Do what the view calls for (see the module docstring); rule refusals of a stale
        view (409) are ignored, the next view decides again."""
        phase = view.get("phase")
        try:
            if phase == "placement" and view.get("turn") == view.get("you") and not self._placed:
                self._placed = True
                budget = int(int(_me(view).get("budget_left", 0)) * self.placement_share)
                reserved: set[tuple[int, int]] = set()
                if self.stamps:
                    budget -= await self._stamp_one(view, budget, reserved)
                cells = await self.choose_cells(view, budget, board=None, reserved=reserved)
                await self._place(cells)
                await self.command(None)
            elif phase == "running" and self.speed and not self._speed_asked:
                self._speed_asked = True
                if int(view.get("speed") or 1) != self.speed:
                    await self.command({"type": "speed", "multiplier": self.speed})
            elif phase == "redraw":
                generation = int(view.get("generation") or 0)
                if generation in self._redraw_done:
                    return
                self._redraw_done.add(generation)
                budget = int(_me(view).get("budget_left", 0))
                if budget > 0 and self.rng.random() < 0.8:
                    want = max(min(budget, 3), int(budget * self.redraw_share))
                    board = None
                    if isinstance(view.get("board"), str):
                        board = decode_board(view["board"], int(view["width"]), int(view["height"]))
                    await self._place(await self.choose_cells(view, want, board=board))
                await self.command(None)
        except ApiError as err:
            if err.status != 409:
                raise

    async def _stamp_one(self, view: dict[str, Any], budget: int, reserved: set[tuple[int, int]]) -> int:
        """Stamp one library still life at a random spot of the zone; its bounding square
        goes into ``reserved``. Returns the cells it cost (0 when refused or no room)."""
        name = self.rng.choice(sorted(STAMPS))
        side, cost = STAMPS[name]
        x0, y0, x1, y1 = (int(v) for v in view.get("zone") or (0, 0, view["width"], view["height"]))
        if cost > budget or x1 - x0 < side + 2 or y1 - y0 < side + 2:
            return 0
        x, y = self.rng.randrange(x0 + 1, x1 - side), self.rng.randrange(y0 + 1, y1 - side)
        try:
            rotation = self.rng.randrange(4)
            await self.command({"type": "stamp", "x": x, "y": y, "rotation": rotation, "pattern": name})
        except ApiError as err:  # e.g. a server without the pattern library
            if err.status not in (409, 422):
                raise
            return 0
        reserved.update((x + dx, y + dy) for dx in range(side) for dy in range(side))
        return cost

    async def _place(self, cells: list[tuple[int, int]]) -> None:
        if cells:
            await self.command({"type": "place", "cells": [[int(x), int(y)] for x, y in cells]})

    async def choose_cells(
        self,
        view: dict[str, Any],
        budget: int,
        *,
        board: list[list[int]] | None,
        reserved: Iterable[tuple[int, int]] = (),
    ) -> list[tuple[int, int]]:
        """The cells to place now (up to ``budget``): :meth:`pick_cells` here; a subclass
        may decide otherwise (:class:`client.bots.llm.LLMLifeBot` asks a model)."""
        return self.pick_cells(view, budget, board=board, reserved=reserved)

    def pick_cells(
        self,
        view: dict[str, Any],
        budget: int,
        *,
        board: list[list[int]] | None,
        reserved: Iterable[tuple[int, int]] = (),
    ) -> list[tuple[int, int]]:
        """Up to ``budget`` cells forming whole figures at random spots of the bot's zone,
        one cell apart from each other, from ``reserved`` cells and (when ``board`` is
        given) from live cells."""
        zone = view.get("zone") or [0, 0, int(view["width"]), int(view["height"])]
        x0, y0, x1, y1 = (int(v) for v in zone)
        taken: set[tuple[int, int]] = set(reserved)
        if board is not None:
            taken |= {(x, y) for y in range(y0, y1) for x in range(x0, x1) if board[y][x]}
        chosen: list[tuple[int, int]] = []
        names = list(FIGURE_WEIGHTS)
        weights = [FIGURE_WEIGHTS[n] for n in names]
        attempts = 0
        while attempts < 200 and len(chosen) < budget:
            attempts += 1
            figure = FIGURES[self.rng.choices(names, weights)[0]]
            if len(chosen) + len(figure) > budget:
                figure = FIGURES["blinker"] if budget - len(chosen) >= 3 else ((0, 0),)
            w = max(dx for dx, _ in figure) + 1
            h = max(dy for _, dy in figure) + 1
            if x1 - x0 < w + 2 or y1 - y0 < h + 2:
                break
            ox = self.rng.randrange(x0 + 1, x1 - w)
            oy = self.rng.randrange(y0 + 1, y1 - h)
            cells = [(ox + dx, oy + dy) for dx, dy in figure]
            if any(n in taken for n in _halo(cells)):
                continue
            chosen.extend(cells)
            taken.update(cells)
        return chosen


def _halo(cells: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """The cells and their Moore neighbourhood."""
    return {(x + dx, y + dy) for x, y in cells for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
