"""The ``life`` kind: territorial Game of Life rules (the Life seed), behind :mod:`engine.api`.

Implements the per-kind contract documented in :mod:`engine.api`. States are
:class:`engine.life.state.LifeState` values: every function returns a new state and
never changes its arguments.

Phases: ``waiting`` (seats open) → ``placement`` (players 1..n draw one at a time,
blind) → ``running`` ⇄ ``paused``; ``running`` → ``redraw`` (stable board; every player
draws at once, then says ready) → ``running``; any → ``finished``.

Decisions where the seed's rules are silent (mirrored in docs/architecture/rules.md "Life"):

- Blind placement: during ``placement`` a player's view shows only the viewer's own
  cells, and other players' ``cells`` and ``budget_left`` are ``null`` (the budget
  would reveal how many cells were placed); a spectator sees an empty board.
- ``reset_turn`` restores the player's own zone and budget to the start of the
  player's drawing turn (the placement turn, or the redraw round); other zones are not
  touched, so in ``redraw`` it never undoes another player's drawing.
- An empty redraw round is one that ends with no cell placed in it still on the board
  (placing and erasing the same cell counts as nothing placed), so a round cannot be
  repeated forever without progress.
- Budget deadlock with a tie at the top (but not all equal) counts as "all scores
  equal": it needs every remaining player unable to move (budget 0 and no cell of this
  turn left to erase).
- ``resign`` is the voluntary form of ``remove_player``: the player is out and their
  cells leave the board. The game goes on while two or more players remain.
- ``remove_player`` in ``waiting`` marks the seat out (seats are player ids and are
  not reused); a game whose seats fill with at most one player left ends at once.
- Extinction puts out a player with no cells of their colour after a generation; out
  players never come back (a QuadLife birth of an out colour scores nothing).
- Order after each generation: extinction, ``max_generations``, then stability
  (which opens ``redraw``, where budget deadlock is checked at once).
- Out players cannot act (``INVALID_ACTION``); ``pause``/``resume``/``speed`` are open
  to every remaining player; ``speed`` in any phase but ``finished``.
- A stamp crops the pattern to its live cells before rotating; its top-left corner is
  the top-left of that live box after rotation.
- A stamp that would place no cell is refused rather than recorded as a no-op:
  ``OUT_OF_ZONE`` when no pattern cell lands in the player's zone, ``NO_CHANGE`` (engine
  version 1: ``INVALID_ACTION``) when every in-zone cell is already alive (or the pattern
  has no live cell). A stamp partly outside still places its in-zone cells (the seed's
  rule: skipped cells are free).
- No-op commands (engine version 2+, :mod:`engine.versions`): any action or ``end_turn``
  that would change nothing is refused with ``NO_CHANGE`` and nothing is recorded:
  ``place`` of cells that are all alive already (or of no cell), ``erase`` of cells none
  of which is the player's, ``reset_turn`` with nothing drawn, ``speed`` to the speed it
  has, ``propose_finish`` twice, ``end_turn`` in ``redraw`` when already ready. Version 1
  recorded them as events that changed nothing; its logs still fold.
- Stamps read their RLE as Golly does and place only the cells the pattern's own rule
  calls alive (engine version 2+, :meth:`engine.life.rle.Pattern.live`); version 1 read
  every non-zero state as alive with its own tag set (``rle.parse(text, reader="v1")``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from cellwar.v1.codes import ErrorCode
from engine.errors import NO_CHANGE, GameError
from engine.life import stability
from engine.life.bitboard import bitboard, colours_of
from engine.life.state import (
    COLOURS,
    MAX_INT,
    SPEEDS,
    LifeConfig,
    LifePlayer,
    LifeState,
    decode,
    encode,
)
from engine.life.state import config_from_dict as _config_from_dict
from engine.life.state import config_to_dict as _config_to_dict
from engine.life.zones import Zone, in_zone, zone_slices, zones_for
from engine.memo import once
from engine.versions import ENGINE_VERSION, at_least

#: Most cells one place/erase action may list.
MAX_ACTION_CELLS = 1024 * 1024
#: Longest RLE text a stamp may carry.
MAX_RLE_CHARS = 100_000
#: Largest live area (either side, cells) of a stamp.
MAX_STAMP_SIDE = 64
#: Phases in which players draw (place, erase, stamp, reset_turn).
DRAWING_PHASES = ("placement", "redraw")

__all__ = [
    "LifeConfig",
    "LifePlayer",
    "LifeState",
    "add_player",
    "apply_action",
    "apply_action_run",
    "config_from_dict",
    "config_to_dict",
    "decode_state",
    "encode_state",
    "end_player_turn",
    "get_valid_actions",
    "get_visible_state",
    "get_winner",
    "new_game",
    "observers",
    "player_log",
    "remove_player",
    "summary",
    "tick",
    "time_out",
    "timed_out_players",
    "turn_timer",
    "upgrade",
]


# =========================================================================== config


def config_from_dict(data: dict[str, Any]) -> LifeConfig:
    """Validate a JSON config (see :func:`engine.life.state.config_from_dict`).

    Raises:
        GameError: ``INVALID_CONFIG`` naming the field and its limits.
    """
    return _config_from_dict(data)


def config_to_dict(config: LifeConfig) -> dict[str, Any]:
    """The normalised JSON config, defaults filled in."""
    return _config_to_dict(config)


def new_game(config: LifeConfig, rules: str = ENGINE_VERSION) -> LifeState:
    """An empty board waiting for ``config.players`` players, under the rules of engine
    version ``rules`` (:mod:`engine.versions`)."""
    return LifeState(config=config, board=bytes(config.width * config.height), rules=rules)


def upgrade(state: LifeState, version: str) -> LifeState:
    """The state under the rules of ``version`` (newer than ``state.rules``): from a version
    before 3 to 3 or later the stability history is emptied, as its digests are of the
    older kind (:mod:`engine.life.stability`) and could never match a new board's; a
    running game so compares its boards from the upgrade on (at most 15 generations later
    than without the upgrade)."""
    changes: dict[str, Any] = {"rules": version}
    if not stability.digests_planes(state.rules) and stability.digests_planes(version):
        changes["history"] = ()
    return replace(state, **changes)


def refuses_noops(state: LifeState) -> bool:
    """Engine version 2+: a command that changes nothing is refused with ``NO_CHANGE``."""
    return at_least(state.rules, "2")


def no_change(message: str) -> GameError:
    """The ``NO_CHANGE`` refusal of a command that would change nothing."""
    return GameError(NO_CHANGE, message)


# =========================================================================== helpers


def _zone(state: LifeState, player_id: int) -> Zone:
    """Where ``player_id`` may draw: :meth:`LifeState.drawing_zone` (a half or a quadrant;
    the campaign's state returns its level's zone)."""
    return state.drawing_zone(player_id)


def _alive(state: LifeState) -> list[LifePlayer]:
    """Players still in the game (not out)."""
    return [p for p in state.players if not p.out]


def unknown_action(action: Mapping[str, Any], known: list[str], game: str) -> str:
    """The message of a ``MALFORMED`` refusal of an action whose ``type`` is missing or
    not one of ``known`` (``game``: "a Life", "a campaign"); an action without a ``type``
    is said to need one (a ``{unit_id, dx, dy}`` move is a CellWar game's action)."""
    if "type" not in action:
        return f"{game} game's action needs a 'type', one of {known} (a {{unit_id, dx, dy}} move is for CellWar games)"
    return f"unknown action type {action['type']!r}; known: {known}"


def cell_counts(grid: np.ndarray) -> list[int]:
    """Live cells per colour: ``counts[k]`` for k = 0..4 (index 0 = dead cells) of an
    (H, W) uint8 board. One comparison pass per colour (a 300×300 board: ~45 µs, where
    ``np.bincount``'s conversion to machine integers took ~420 µs)."""
    flat = grid.ravel()
    return [flat.size - int(np.count_nonzero(flat)), *(int(np.count_nonzero(flat == k)) for k in (1, 2, 3, 4))]


def state_counts(state: LifeState) -> list[int]:
    """:func:`cell_counts` of ``state``'s board, computed once per state (its rules and
    every viewer's view share them)."""
    return once(state, "cell_counts", lambda: cell_counts(state.grid))


def end_drawing_turn(state: LifeState) -> LifeState:
    """Forget the drawing-turn bookkeeping (placed mask, turn board)."""
    return replace(state, placed=b"", turn_board=b"")


def begin_drawing_turn(state: LifeState) -> LifeState:
    """Start a drawing turn: the board and budgets now are what ``reset_turn`` restores,
    and nothing counts as placed in this turn yet."""
    return replace(
        state,
        placed=bytes(len(state.board)),
        turn_board=state.board,
        players=tuple(replace(p, turn_budget=p.budget_left) for p in state.players),
    )


def _finish(state: LifeState, winner: int | None) -> LifeState:
    """End the game: ``winner`` wins, or a draw when None."""
    state = end_drawing_turn(state)
    return replace(
        state,
        phase="finished",
        turn=0,
        winner=winner,
        result="win" if winner is not None else "draw",
    )


def finish_by_score(state: LifeState) -> LifeState:
    """End the game by score (the seed's rule: most cells of one's own colour wins): the
    remaining player with the most live cells of their own colour wins; a tie at the top
    (or nobody left) is a draw."""
    counts = state_counts(state)
    alive = _alive(state)
    if not alive:
        return _finish(state, None)
    top = max(counts[p.id] for p in alive)
    leaders = [p.id for p in alive if counts[p.id] == top]
    return _finish(state, leaders[0] if len(leaders) == 1 else None)


def finish_last_standing(state: LifeState) -> LifeState:
    """End the game when at most one player remains: that player wins, none = draw."""
    alive = _alive(state)
    return _finish(state, alive[0].id if alive else None)


# =========================================================================== phases


def add_player(state: LifeState, name: str) -> LifeState:
    """The next seat (player id = seat number from 1) joins; the last seat starts
    ``placement`` with player 1 drawing.

    Raises:
        GameError: ``GAME_FINISHED``; ``GAME_FULL`` when every seat is taken.
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    if state.phase != "waiting" or len(state.players) >= state.config.players:
        raise GameError(ErrorCode.GAME_FULL, f"all {state.config.players} seats are taken")
    budget = state.config.budget
    player = LifePlayer(len(state.players) + 1, str(name), budget, budget)
    state = replace(state, players=(*state.players, player))
    if len(state.players) == state.config.players:
        return start_placement(state)
    return state


def start_placement(state: LifeState) -> LifeState:
    """All seats taken: the first remaining player starts drawing (phase
    ``placement``); with at most one player left the game ends at once."""
    alive = _alive(state)
    if len(alive) <= 1:
        return finish_last_standing(state)
    return begin_drawing_turn(replace(state, phase="placement", turn=alive[0].id))


def pass_placement_turn(state: LifeState) -> LifeState:
    """The next remaining player draws; after the last, the simulation starts."""
    nxt = [p.id for p in _alive(state) if p.id > state.turn]
    if not nxt:
        return start_running(state)
    return begin_drawing_turn(replace(state, turn=nxt[0]))


def start_running(state: LifeState) -> LifeState:
    """Leave a drawing phase: the simulation runs (``stable`` False, ready flags cleared)."""
    state = end_drawing_turn(state)
    return replace(
        state,
        phase="running",
        turn=0,
        stable=False,
        players=state.map_players(ready=False),
    )


def open_redraw(state: LifeState) -> LifeState:
    """The board is stable (:mod:`engine.life.stability`): phase ``redraw`` with ``stable`` True;
    every remaining player's drawing turn starts; budget deadlock is checked at once."""
    state = replace(
        state, phase="redraw", turn=0, stable=True, players=state.map_players(ready=False)
    )
    return settle(begin_drawing_turn(state))


def empty_redraw_round(state: LifeState) -> bool:
    """True when no cell placed in this redraw round is on the board (the end by an
    empty redraw round, docs/architecture/rules.md "Life")."""
    return not state.placed_grid.any()


def budget_deadlock(state: LifeState) -> bool:
    """Budget deadlock, an end of the game (``redraw`` only; docs/architecture/rules.md
    "Life"): every player behind the single leader cannot move (budget 0 and no cell of
    this turn left to erase); with a tie at the top, every remaining player cannot move."""
    if state.phase != "redraw":
        return False
    counts = state_counts(state)
    placed = state.placed_grid
    alive = _alive(state)

    def stuck(p: LifePlayer) -> bool:
        return p.budget_left == 0 and not placed[zone_slices(_zone(state, p.id))].any()

    top = max(counts[p.id] for p in alive)
    leaders = [p for p in alive if counts[p.id] == top]
    if len(leaders) == 1:
        return all(stuck(p) for p in alive if p.id != leaders[0].id)
    return all(stuck(p) for p in alive)


def settle(state: LifeState) -> LifeState:
    """Apply the rules that follow any change of a started game, in this order:
    at most one player left ends it; agreement (every remaining player proposed finish)
    ends it by score; in ``placement`` an out current player passes the turn; in
    ``redraw`` all ready ends the round (empty round: finished by score, otherwise the
    simulation resumes), else budget deadlock ends it by score."""
    if state.phase in ("waiting", "finished"):
        return state
    alive = _alive(state)
    if len(alive) <= 1:
        return finish_last_standing(state)
    if all(p.proposed_finish for p in alive):
        return finish_by_score(state)
    if state.phase == "placement" and state.player(state.turn).out:
        return pass_placement_turn(state)
    if state.phase == "redraw":
        if all(p.ready for p in alive):
            return finish_by_score(state) if empty_redraw_round(state) else start_running(state)
        if budget_deadlock(state):
            return finish_by_score(state)
    return state


def eliminate(state: LifeState, player_id: int) -> LifeState:
    """Player ``player_id`` is out and their cells leave the board (and the turn board,
    so ``reset_turn`` cannot bring them back)."""
    grid = state.grid
    mine = grid == player_id
    board = np.where(mine, 0, grid).astype(np.uint8)
    changes: dict[str, Any] = {"board": board.tobytes()}
    if state.placed:
        changes["placed"] = np.where(mine, 0, state.placed_grid).astype(np.uint8).tobytes()
    if state.turn_board:
        tg = state.turn_grid
        changes["turn_board"] = np.where(tg == player_id, 0, tg).astype(np.uint8).tobytes()
    player = replace(state.player(player_id), out=True, ready=False)
    return replace(state.with_player(player), **changes)


def remove_player(state: LifeState, player_id: int) -> LifeState:
    """Remove a player (disconnect past the timeout, leave; docs/game-end.md):
    out, cells removed; with at most one player left a started game ends (the remaining
    player wins). A player already out: unchanged.

    Raises:
        GameError: ``GAME_FINISHED``, ``UNKNOWN_PLAYER``.
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    if state.player(player_id).out:
        return state
    return settle(eliminate(state, player_id))


def end_player_turn(state: LifeState, player_id: int) -> LifeState:
    """``placement``: the current player passes the turn (after the last, the simulation
    starts). ``redraw``: the player is ready; when all remaining players are ready the
    round ends (a second ``end_turn``: ``NO_CHANGE`` from engine version 2, a no-op
    before).

    Raises:
        GameError: ``GAME_FINISHED``, ``UNKNOWN_PLAYER``, ``INVALID_ACTION`` (player out),
            ``NOT_YOUR_TURN`` (placement, not the current player), ``WRONG_PHASE``,
            ``NO_CHANGE``.
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    player = acting_player(state, player_id)
    if state.phase == "placement":
        if state.turn != player_id:
            raise GameError(ErrorCode.NOT_YOUR_TURN, f"player {state.turn} is placing")
        return pass_placement_turn(state)
    if state.phase == "redraw":
        if player.ready and refuses_noops(state):
            raise no_change(f"player {player_id} is ready already")
        return settle(state.with_player(replace(player, ready=True)))
    raise GameError(
        ErrorCode.WRONG_PHASE, f"end_turn is for placement and redraw, not {state.phase}"
    )


# =========================================================================== turn timers


def turn_timer(state: LifeState):
    """The timer of the current drawing turn (:mod:`engine.timers`): each placement turn
    and each redraw round lasts the config's ``turn_time_s``; None without a timer or
    outside ``placement``/``redraw``."""
    from engine.timers import TurnTimer  # engine.timers dispatches to this module

    seconds = getattr(state.config, "turn_time_s", None)
    if not seconds:
        return None
    if state.phase == "placement":
        return TurnTimer(seconds, ("placement", state.turn))
    if state.phase == "redraw":
        return TurnTimer(seconds, ("redraw", state.generation))
    return None


def timed_out_players(state: LifeState) -> list[int]:
    """Who ran out of time: the placing player, or in ``redraw`` every remaining player
    not ready yet."""
    if state.phase == "redraw":
        return [p.id for p in _alive(state) if not p.ready]
    return [state.turn] if state.turn else []


def time_out(state: LifeState) -> LifeState:
    """The current drawing turn ran out (:mod:`engine.timers`): in ``placement`` what the
    player placed stays and the turn passes (after the last player the simulation
    starts); in ``redraw`` every remaining player not ready is made ready, which ends the
    round (the simulation resumes, or an empty round ends the game).

    Raises:
        GameError: ``GAME_FINISHED``, ``WRONG_PHASE`` (no drawing turn).
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    if state.phase == "placement":
        return pass_placement_turn(state)
    if state.phase == "redraw":
        players = tuple(p if p.out else replace(p, ready=True) for p in state.players)
        return settle(replace(state, players=players))
    raise GameError(ErrorCode.WRONG_PHASE, f"no timed turn in {state.phase}")


# =========================================================================== simulation


def tick(state: LifeState, generations: int) -> LifeState:
    """Run up to ``generations`` generations of a ``running`` game (other phases:
    unchanged), one at a time; after each: extinction, ``max_generations``, stability
    (docs/architecture/rules.md "Life"). Stops early when the phase leaves ``running``.

    The board advances as Python-int bit planes (:mod:`engine.life.bitboard`: one
    board, no numpy call per generation); stability compares a new board with the
    boards of this call exactly and with the state's recorded history by population and
    digest (:mod:`engine.life.stability`), whose digests of the boards it leaves are
    computed at the end."""
    if state.phase != "running" or generations <= 0:
        return state
    grid = state.grid
    bb = bitboard(state.config.height, state.config.width, state.config.torus, colours_of(grid))
    planes = bb.load(grid)
    counts = bb.counts(planes)
    # [population, digest or None, planes or None], oldest first (a RepeatDetector on ints)
    history: list[list] = [[pop, dig, None] for pop, dig in state.history][-stability.HISTORY :]
    pop, digest = counts[0], None
    generation = state.generation
    players = state.players
    outcome = None
    for _ in range(generations):
        history.append([pop, digest, planes])
        if len(history) > stability.HISTORY:
            del history[0]
        planes = bb.step(planes)
        generation += 1
        counts = bb.counts(planes)
        players, alive = extinction_counts(players, counts)
        if alive <= 1:
            outcome = "last_standing"
            break
        if generation >= state.config.max_generations:
            outcome = "score"
            break
        pop, digest = counts[0], None
        for entry in history:
            if entry[0] != pop:
                continue
            if entry[2] is not None:
                if entry[2] == planes:
                    outcome = "stable"
                    break
                continue
            if digest is None:
                digest = bb.digest(planes, state.rules)
            if digest == entry[1]:
                outcome = "stable"
                break
        if outcome is not None:
            break
    for entry in history:
        if entry[1] is None:
            entry[1] = bb.digest(entry[2], state.rules)
    new = replace(
        state,
        board=bb.board(planes).tobytes(),
        generation=generation,
        history=tuple((e[0], e[1]) for e in history),
        players=players,
    )
    if outcome == "last_standing":
        return finish_last_standing(new)
    if outcome == "score":
        return finish_by_score(new)
    if outcome == "stable":
        return open_redraw(new)
    return new


def extinction_counts(
    players: tuple[LifePlayer, ...], counts: list[int] | np.ndarray
) -> tuple[tuple[LifePlayer, ...], int]:
    """Extinction (docs/playing.md "Life") from the live cells per colour (``counts[c]``): a
    remaining player with no cells is out. Returns the players (``players`` itself when
    none went out) and how many remain. The packed paths (:mod:`engine.life.packed_runs`,
    :mod:`engine.life.slots`) apply it too."""
    if any(not p.out and counts[p.id] == 0 for p in players):
        players = tuple(
            replace(p, out=True) if not p.out and counts[p.id] == 0 else p for p in players
        )
    return players, sum(1 for p in players if not p.out)


# =========================================================================== actions


def acting_player(state: LifeState, player_id: int) -> LifePlayer:
    """The joined player ``player_id``, who must not be out.

    Raises:
        GameError: ``UNKNOWN_PLAYER``; ``INVALID_ACTION`` when the player is out.
    """
    player = state.player(player_id)
    if player.out:
        raise GameError(ErrorCode.INVALID_ACTION, f"player {player_id} is out of the game")
    return player


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_cells(action: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The ``cells`` of a place/erase action as int64 arrays ``(xs, ys)``.

    Raises:
        GameError: ``MALFORMED`` unless ``cells`` is a list of at most
            :data:`MAX_ACTION_CELLS` ``[x, y]`` integer pairs within ``±MAX_INT``.
    """
    cells = action.get("cells")
    if not isinstance(cells, list | tuple):
        raise GameError(ErrorCode.MALFORMED, "cells must be a list of [x, y] pairs")
    if len(cells) > MAX_ACTION_CELLS:
        raise GameError(ErrorCode.MALFORMED, f"at most {MAX_ACTION_CELLS} cells per action")
    xs: list[int] = []
    ys: list[int] = []
    for cell in cells:
        if not isinstance(cell, list | tuple) or len(cell) != 2 or not all(map(_is_int, cell)):
            raise GameError(
                ErrorCode.MALFORMED, f"a cell must be an [x, y] pair of integers, got {cell!r}"
            )
        x, y = cell
        if not (-MAX_INT <= x <= MAX_INT and -MAX_INT <= y <= MAX_INT):
            # Beyond any board (and maybe beyond int64): refused with the numbers as
            # sent, never a clamped stand-in.
            raise GameError(
                ErrorCode.MALFORMED,
                f"cell [{x}, {y}]: coordinates must be within -{MAX_INT}..{MAX_INT}",
            )
        xs.append(x)
        ys.append(y)
    return np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64)


def _require_drawing(state: LifeState, player: LifePlayer) -> Zone:
    """Drawing rights (docs/playing.md "Life"): ``placement`` only the current player, ``redraw``
    every remaining player. Returns the player's zone.

    Raises:
        GameError: ``WRONG_PHASE``, ``NOT_YOUR_TURN``.
    """
    if state.phase not in DRAWING_PHASES:
        raise GameError(
            ErrorCode.WRONG_PHASE, f"drawing is for placement and redraw, not {state.phase}"
        )
    if state.phase == "placement" and state.turn != player.id:
        raise GameError(ErrorCode.NOT_YOUR_TURN, f"player {state.turn} is placing")
    return _zone(state, player.id)


def zone_text(zone: Zone) -> str:
    """The half-open ``zone`` ``(x0, y0, x1, y1)`` as refusals name it: inclusive ranges,
    ``"(x 0..9, y 0..9)"``."""
    x0, y0, x1, y1 = zone
    return f"(x {x0}..{x1 - 1}, y {y0}..{y1 - 1})"


def _check_in_zone(zone: Zone, xs: np.ndarray, ys: np.ndarray) -> None:
    """Raises ``OUT_OF_ZONE`` unless every cell lies in ``zone`` (hence on the board)."""
    inside = in_zone(zone, xs, ys)
    if not inside.all():
        i = int(np.flatnonzero(~inside)[0])
        raise GameError(
            ErrorCode.OUT_OF_ZONE,
            f"cell [{int(xs[i])}, {int(ys[i])}] is outside your zone {zone_text(zone)}",
        )


def _put_cells(state: LifeState, player: LifePlayer, flat: np.ndarray) -> LifeState:
    """Place dead cells ``flat`` (unique flat indices) in the player's colour; each costs 1
    and is marked placed in this turn."""
    if flat.size == 0:
        return state
    board = state.grid.copy()
    placed = state.placed_grid.copy()
    board.flat[flat] = player.id
    placed.flat[flat] = 1
    player = replace(player, budget_left=player.budget_left - int(flat.size))
    return replace(state.with_player(player), board=board.tobytes(), placed=placed.tobytes())


def _check_budget(player: LifePlayer, cost: int) -> None:
    if cost > player.budget_left:
        raise GameError(
            ErrorCode.BUDGET_EXCEEDED,
            f"{cost} new cells but only {player.budget_left} left in the budget",
        )


def action_place(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``place`` (docs/architecture/contracts.md "Life actions"): all or nothing. Cells already
    alive are skipped and free; each new cell costs 1.

    Raises:
        GameError: ``MALFORMED``, ``WRONG_PHASE``, ``NOT_YOUR_TURN``, ``OUT_OF_ZONE`` (any
            cell outside the board or the zone), ``BUDGET_EXCEEDED``.
    """
    xs, ys = parse_cells(action)
    zone = _require_drawing(state, player)
    _check_in_zone(zone, xs, ys)
    flat = np.unique(ys * state.config.width + xs)
    new = flat[state.grid.ravel()[flat] == 0]
    if new.size == 0 and refuses_noops(state):
        raise no_change("every cell given is alive already" if flat.size else "no cell given")
    _check_budget(player, int(new.size))
    return _put_cells(state, player, new)


def apply_action_run(
    state: LifeState, player_id: int, actions: list[dict[str, Any]]
) -> LifeState | None:
    """Several actions of one player applied one after the other, as one update, when
    that is the same thing (a replay folds them at once): ``place`` actions during
    ``placement`` (blind placement: a placement never triggers a rule after it). Each
    action is checked in order as :func:`apply_action` checks it (zone, budget, nothing
    new); None for any other run (fold it action by action).

    Raises:
        GameError: as :func:`apply_action` would for the first action it refuses.
    """
    if state.phase != "placement" or any(a.get("type") != "place" for a in actions):
        return None
    player = acting_player(state, player_id)
    zone = _require_drawing(state, player)
    dead = state.grid.ravel() == 0
    taken = np.zeros_like(dead)
    chosen: list[np.ndarray] = []
    spent = 0
    for action in actions:
        xs, ys = parse_cells(action)
        _check_in_zone(zone, xs, ys)
        flat = np.unique(ys * state.config.width + xs)
        new = flat[dead[flat] & ~taken[flat]]  # dead before the run and not placed in it yet
        if new.size == 0 and refuses_noops(state):
            raise no_change("every cell given is alive already" if flat.size else "no cell given")
        _check_budget(replace(player, budget_left=player.budget_left - spent), int(new.size))
        spent += int(new.size)
        taken[new] = True
        chosen.append(new)
    if not chosen:
        return state
    return _put_cells(state, player, np.concatenate(chosen))


def action_erase(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``erase``: remove the player's own live cells among ``cells`` (other cells are
    ignored); each erased cell placed in the current drawing turn refunds 1.

    Raises:
        GameError: ``MALFORMED``, ``WRONG_PHASE``, ``NOT_YOUR_TURN``, ``OUT_OF_ZONE``.
    """
    xs, ys = parse_cells(action)
    zone = _require_drawing(state, player)
    _check_in_zone(zone, xs, ys)
    flat = np.unique(ys * state.config.width + xs)
    own = flat[state.grid.ravel()[flat] == player.id]
    if own.size == 0:
        if refuses_noops(state):
            raise no_change("none of the cells given is one of your live cells")
        return state
    board = state.grid.copy()
    placed = state.placed_grid.copy()
    refund = int(placed.flat[own].sum())
    board.flat[own] = 0
    placed.flat[own] = 0
    player = replace(player, budget_left=player.budget_left + refund)
    return replace(state.with_player(player), board=board.tobytes(), placed=placed.tobytes())


def _stamp_source(action: dict[str, Any]) -> tuple[str, str]:
    """``("pattern", id)`` or ``("rle", text)``. Raises ``MALFORMED``."""
    has_pattern, has_rle = "pattern" in action, "rle" in action
    if has_pattern == has_rle:
        raise GameError(ErrorCode.MALFORMED, "a stamp needs exactly one of 'pattern' and 'rle'")
    if has_pattern:
        name = action["pattern"]
        if not isinstance(name, str) or not 0 < len(name) <= 64:
            raise GameError(ErrorCode.MALFORMED, "pattern must be a pattern id string")
        return "pattern", name
    text = action["rle"]
    if not isinstance(text, str) or len(text) > MAX_RLE_CHARS:
        raise GameError(
            ErrorCode.MALFORMED, f"rle must be a string of at most {MAX_RLE_CHARS} characters"
        )
    return "rle", text


def load_stamp(source: str, value: str, rules: str = ENGINE_VERSION) -> np.ndarray:
    """The live-cell mask (h, w) bool of a stamp, cropped to its live cells.

    Engine version 2+: the RLE is read as Golly reads it and only the cells the
    pattern's own rule calls alive count (:meth:`engine.life.rle.Pattern.live`; e.g. in
    ``LifeHistory`` the even states are dead). Version 1: every non-zero state of its
    own reader (``reader="v1"``).

    Raises:
        GameError: ``INVALID_ACTION`` (unknown pattern id, live area over
            :data:`MAX_STAMP_SIDE` on a side), ``MALFORMED`` (bad RLE text, a rule whose
            states are not modelled, a state out of the rule's range).
    """
    from engine.life import rle  # lazy: written beside this module

    golly = at_least(rules, "2")
    if source == "pattern":
        from engine.life import patterns

        get = getattr(patterns, "get", None)
        if get is None:  # the library is being written beside this module
            raise GameError(ErrorCode.INVALID_ACTION, "the pattern library is not available")
        try:
            pattern = get(value)
        except (KeyError, LookupError, ValueError, rle.PatternError) as exc:
            raise GameError(ErrorCode.INVALID_ACTION, f"unknown pattern {value!r}") from exc
        live = pattern.live() if golly else np.asarray(pattern.board) != 0
    else:
        try:
            if golly:
                live = rle.parse(value).live()
            else:
                live = np.asarray(rle.parse(value, reader="v1").board) != 0
        except rle.PatternError as exc:
            raise GameError(ErrorCode.MALFORMED, f"bad RLE: {exc}") from exc
    rows, cols = np.flatnonzero(live.any(axis=1)), np.flatnonzero(live.any(axis=0))
    if rows.size == 0:
        return np.zeros((0, 0), dtype=bool)
    live = live[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    if max(live.shape) > MAX_STAMP_SIDE:
        raise GameError(
            ErrorCode.INVALID_ACTION,
            f"stamp live area {live.shape[1]}x{live.shape[0]} exceeds {MAX_STAMP_SIDE}x{MAX_STAMP_SIDE}",
        )
    return live


def action_stamp(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``stamp`` (docs/playing.md "Life", the pattern library): the pattern (library id or own RLE),
    turned ``rotation`` quarter turns clockwise, top-left at (``x``, ``y``); cells off the
    board, outside the zone or on live cells are skipped and free; the rest cost 1 each,
    all or nothing. A stamp that would place no cell is refused (nothing is recorded):
    ``OUT_OF_ZONE`` when no pattern cell lands inside the player's zone,
    ``INVALID_ACTION`` when every cell that does lands on a live cell.

    Raises:
        GameError: ``MALFORMED``, ``WRONG_PHASE``, ``NOT_YOUR_TURN``, ``INVALID_ACTION``
            (unknown pattern), ``NO_CHANGE`` (no cell would be placed, also a pattern
            with no live cell; engine version 1: ``INVALID_ACTION``), ``OUT_OF_ZONE``,
            ``BUDGET_EXCEEDED``.
    """
    source, value = _stamp_source(action)
    x, y, rotation = action.get("x"), action.get("y"), action.get("rotation", 0)
    if not (_is_int(x) and _is_int(y)) or abs(x) > MAX_INT or abs(y) > MAX_INT:
        raise GameError(ErrorCode.MALFORMED, "stamp x and y must be integers")
    if not _is_int(rotation) or rotation not in (0, 1, 2, 3):
        raise GameError(
            ErrorCode.MALFORMED, "rotation must be 0, 1, 2 or 3 quarter turns clockwise"
        )
    zone = _require_drawing(state, player)
    live = np.rot90(load_stamp(source, value, state.rules), -rotation)
    rows, cols = np.nonzero(live)
    xs, ys = cols.astype(np.int64) + x, rows.astype(np.int64) + y
    refusal = NO_CHANGE if refuses_noops(state) else ErrorCode.INVALID_ACTION
    if xs.size == 0:
        raise GameError(refusal, "the stamp has no live cell")
    keep = in_zone(zone, xs, ys)
    if not keep.any():
        raise GameError(
            ErrorCode.OUT_OF_ZONE,
            f"no cell of the stamp at [{x}, {y}] lands inside your zone {zone_text(zone)}",
        )
    flat = ys[keep] * state.config.width + xs[keep]
    new = flat[state.grid.ravel()[flat] == 0]
    if new.size == 0:
        raise GameError(refusal, "every cell of the stamp lands on a live cell")
    _check_budget(player, int(new.size))
    return _put_cells(state, player, new)


def action_reset_turn(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``reset_turn``: the player's zone and budget go back to the start of their current
    drawing turn (placement turn or redraw round).

    Raises:
        GameError: ``WRONG_PHASE``, ``NOT_YOUR_TURN``, ``NO_CHANGE`` (engine version 2+:
            nothing to reset).
    """
    zone = _require_drawing(state, player)
    rows, cols = zone_slices(zone)
    board = state.grid.copy()
    placed = state.placed_grid.copy()
    board[rows, cols] = state.turn_grid[rows, cols]
    placed[rows, cols] = 0
    player = replace(player, budget_left=player.turn_budget)
    new = replace(state.with_player(player), board=board.tobytes(), placed=placed.tobytes())
    if new == state and refuses_noops(state):
        raise no_change("nothing was drawn in this turn: nothing to reset")
    return new


def action_pause(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``pause``: ``running`` → ``paused``. Raises ``WRONG_PHASE``."""
    if state.phase != "running":
        raise GameError(
            ErrorCode.WRONG_PHASE, f"pause needs a running simulation, not {state.phase}"
        )
    return replace(state, phase="paused")


def action_resume(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``resume``: ``paused`` → ``running``. Raises ``WRONG_PHASE``."""
    if state.phase != "paused":
        raise GameError(
            ErrorCode.WRONG_PHASE, f"resume needs a paused simulation, not {state.phase}"
        )
    return replace(state, phase="running")


def action_speed(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``speed``: set the multiplier (1, 2, 4 or 8) of 8 generations/s; any phase but
    finished. Raises ``MALFORMED`` for another value."""
    multiplier = action.get("multiplier")
    if not _is_int(multiplier) or multiplier not in SPEEDS:
        raise GameError(
            ErrorCode.MALFORMED, f"multiplier must be one of {list(SPEEDS)}, got {multiplier!r}"
        )
    if multiplier == state.speed and refuses_noops(state):
        raise no_change(f"the speed is {multiplier} already")
    return replace(state, speed=multiplier)


def action_propose_finish(
    state: LifeState, player: LifePlayer, action: dict[str, Any]
) -> LifeState:
    """``propose_finish`` (the end by agreement, docs/playing.md "Life"): when every
    remaining player has proposed, the game ends by score. Raises ``WRONG_PHASE`` while
    waiting."""
    if state.phase == "waiting":
        raise GameError(ErrorCode.WRONG_PHASE, "the game has not started")
    if player.proposed_finish and refuses_noops(state):
        raise no_change("you have proposed to finish already")
    return settle(state.with_player(replace(player, proposed_finish=True)))


def action_resign(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``resign`` (end condition 4): the player is out and their cells leave the board;
    with one player left, that player wins. Raises ``WRONG_PHASE`` while waiting."""
    if state.phase == "waiting":
        raise GameError(ErrorCode.WRONG_PHASE, "the game has not started")
    return settle(eliminate(state, player.id))


def action_restart(state: LifeState, player: LifePlayer, action: dict[str, Any]) -> LifeState:
    """``restart`` belongs to the campaign. Raises ``INVALID_ACTION``."""
    raise GameError(ErrorCode.INVALID_ACTION, "restart is only for campaign levels")


#: Action type -> handler(state, player, action).
ACTIONS = {
    "place": action_place,
    "erase": action_erase,
    "stamp": action_stamp,
    "reset_turn": action_reset_turn,
    "pause": action_pause,
    "resume": action_resume,
    "speed": action_speed,
    "propose_finish": action_propose_finish,
    "resign": action_resign,
    "restart": action_restart,
}


def apply_action(state: LifeState, player_id: int, action: dict[str, Any]) -> LifeState:
    """Apply one action of the REST contract (docs/architecture/contracts.md "Life actions").
    Drawing actions in ``redraw`` are followed by the budget deadlock check.

    Raises:
        GameError: ``MALFORMED`` (unknown type, bad fields), ``GAME_FINISHED``,
            ``UNKNOWN_PLAYER``, ``INVALID_ACTION`` (player out, restart, bad stamp),
            ``NO_CHANGE`` (engine version 2+: the action would change nothing), and each
            handler's rule codes. The input state is never changed.
    """
    atype = action.get("type")
    handler = ACTIONS.get(atype) if isinstance(atype, str) else None
    if handler is None:
        known = sorted(a for a in ACTIONS if a != "restart")  # restart: campaign levels only
        raise GameError(ErrorCode.MALFORMED, unknown_action(action, known, "a Life"))
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    player = acting_player(state, player_id)
    new = handler(state, player, action)
    if new.phase == "redraw":
        new = settle(new)
    if new == state and refuses_noops(state):
        raise no_change(f"{atype} would change nothing")
    return new


# =========================================================================== views


def board_rle(grid: np.ndarray) -> str:
    """Multi-state RLE body of an (H, W) board (Golly: ``.`` dead, ``A`` colour 1, ``B``
    colour 2, ...; ``$`` ends a row, ``!`` ends the pattern): the view's ``board``."""
    from engine.life.rle import board_to_rle_body

    return board_to_rle_body(grid)


def get_visible_state(
    state: LifeState, player_id: int | None, *, reveal: bool = False
) -> dict[str, Any]:
    """The view of ``player_id`` (None = spectator), JSON-ready (docs/api/index.md "Views").

    During ``placement`` (blind) the board shows only the viewer's colour (nothing for a
    spectator) and other players' ``cells``/``budget_left`` are null. ``reveal=True``
    (replays of a finished game: once a game is finished, everything is public,
    docs/architecture/contracts.md) lifts the blind: the whole board and every count, as
    placed.
    """
    viewer = None
    if _is_int(player_id) and 1 <= player_id <= len(state.players):
        viewer = int(player_id)
    grid = state.grid
    counts = state_counts(state)  # the same for every viewer
    blind = state.phase == "placement" and not reveal
    if blind:
        grid = np.where(grid == viewer, grid, 0).astype(np.uint8) if viewer else np.zeros_like(grid)
        board = board_rle(grid)
    else:
        board = once(state, "board_rle", lambda: board_rle(grid))
    players = []
    for p in state.players:
        hidden = blind and p.id != viewer
        players.append(
            {
                "id": p.id,
                "name": p.name,
                "color": COLOURS[p.id],
                "cells": None if hidden else counts[p.id],
                "budget_left": None if hidden else p.budget_left,
                "connected": True,
                "out": p.out,
                "ready": p.ready,
                "proposed_finish": p.proposed_finish,
            }
        )
    cfg = state.config
    zones = {str(pid): list(z) for pid, z in zones_for(cfg.width, cfg.height, cfg.players).items()}
    return {
        "kind": "life",
        "phase": state.phase,
        "turn": state.turn,
        "you": viewer,
        "players": players,
        "max_players": cfg.players,
        "width": cfg.width,
        "height": cfg.height,
        "winner": state.winner,
        "result": state.result,
        "generation": state.generation,
        "max_generations": cfg.max_generations,
        "torus": cfg.torus,
        "budget": cfg.budget,
        "zone": zones[str(viewer)] if viewer else None,
        "zones": zones,
        "stable": state.stable,
        "speed": state.speed,
        "board": board,
    }


def get_valid_actions(state: LifeState, player_id: int, unit_id: int | None = None) -> list[dict]:
    """Life has no per-unit actions: always ``[]``."""
    return []


def get_winner(state: LifeState) -> int | None:
    """The winner's id, or None (not finished, or a draw)."""
    return state.winner


def summary(state: LifeState, *, kind: str = "life", max_players: int | None = None):
    """:class:`engine.api.Summary` of the state (``kind`` and ``max_players``, default
    the config's players, for the kinds built on Life, e.g. the campaign)."""
    from engine.api import Summary  # engine.api imports the kinds lazily; avoid a cycle

    return Summary(
        kind=kind,
        phase=state.phase,
        turn=state.turn,
        generation=state.generation,
        speed=state.speed,
        players_joined=len(state.players),
        max_players=state.config.players if max_players is None else max_players,
        finished=state.phase == "finished",
    )


def encode_state(state: LifeState) -> bytes:
    """Canonical bytes (see :func:`engine.life.state.encode`)."""
    return encode(state)


def decode_state(data: bytes) -> LifeState:
    """Inverse of :func:`encode_state`. Raises ``MALFORMED``."""
    return decode(data)


# =========================================================================== log


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The events of a whole log that ``player_id`` may read: other players' drawing during
    blind placement left out, no ``state_hash`` (rule: :mod:`engine.life.log`, blind
    placement)."""
    from engine.life.log import player_log as life_player_log  # it imports engine.api

    return life_player_log(events, player_id)


def observers(
    before: LifeState | None, etype: str, actor: int, payload: Mapping[str, Any], after: LifeState
) -> frozenset[int]:
    """Who observes a Life event (:func:`engine.api.observers`): only the actor for a
    drawing action during blind placement, everyone (and a spectator, 0) otherwise (rule:
    :mod:`engine.life.log`, the same as :func:`player_log`)."""
    from engine.life.log import observers as life_observers  # it imports engine.api

    return life_observers(before, etype, actor, payload, after)
