"""The ``campaign`` kind: one red player against static green figures, behind :mod:`engine.api`.

Rules: the Life seed's section "Кампания" (docs/playing.md "Campaign"). Implements the
per-kind contract documented in :mod:`engine.api`. A :class:`CampaignState` is a
:class:`engine.life.state.LifeState` whose drawing zone is the level's zone, so the
Life drawing and control actions (``place``, ``erase``, ``stamp``, ``reset_turn``,
``pause``, ``resume``, ``speed``) and the Life kernel and stability detector are reused
as they are. Every function returns a new state and never changes its arguments.

Units: sizes, coordinates and budgets in cells; ``x`` is the column, ``y`` the row;
zones are half-open rectangles ``[x0, y0, x1, y1)``; time in generations.

Phases: ``waiting`` (nobody joined) → ``placement`` (the player draws, ``turn`` 1) →
``running`` ⇄ ``paused``; ``running`` → ``redraw`` (stable board, budget left) →
``running``; ``running`` → ``finished`` (``"win"``: no enemy cell left; ``"loss"``:
stable board with budget 0). ``resign`` and ``remove_player`` → ``finished`` ``"loss"``.
``restart`` → ``placement`` from any phase (after ``waiting``), ``finished`` included.

The rules and how they follow:

- Enemy cells (green, colour 2) cannot be painted, stamped or erased over and cost
  nothing: Life's ``place``/``stamp`` skip live cells for free, and ``erase`` only
  removes the player's own colour (no refund for anything else).
- The player's own extinction is not a loss: no extinction check at all.
- Win: after any generation with no enemy cell on the board (checked every generation,
  before stability).
- Stable: the board equals one of the previous 15 boards (as in Life,
  :mod:`engine.life.stability`), or ``max_generations`` generations have run since the
  simulation last started (``run_start``; placement's or a redraw's "Ready") — a board
  that never stabilises counts as stable then. On a stable board: budget 0 →
  ``finished`` ``"loss"`` (the seed:
  "бюджет исчерпан, а враг ещё жив (фиксируется, когда поле стабилизировалось)"),
  otherwise ``redraw`` opens by itself with ``stable`` True.
- ``end_turn`` ("Ready"/"Готов") in ``placement`` or ``redraw`` starts the simulation at
  once; an empty redraw is not a game end here (unlike Life): the board simply runs
  again, is stable again and ``redraw`` reopens (or the level is lost at budget 0).

Decisions where the seed is silent (mirrored in docs/architecture/rules.md "Campaign"):

- ``restart`` ("Заново") is allowed in every phase after the player joined, ``finished``
  included (the end screen's "Restart"): the state becomes exactly the one after the
  join (level board, full budget, generation 0, speed 1, empty history). A removed
  player (``remove_player``) is out and cannot restart (``INVALID_ACTION``).
- ``resign`` ends the level as ``"loss"`` (the player stays in, so ``restart`` works);
  ``propose_finish`` is refused with ``INVALID_ACTION`` (one player: use ``resign``).
- ``remove_player`` (disconnect/leave) ends the level as ``"loss"``; the board is kept.
- The view shows the whole board in every phase (no blind placement: one player).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from cellwar.v1.codes import ErrorCode
from engine.campaign.levels import LEVEL_COUNT, Level, UnknownLevelError, level
from engine.errors import GameError
from engine.life import game as life
from engine.life import stability
from engine.life.state import COLOURS, MAX_INT, LifePlayer, LifeState, decode_fields, encode
from engine.versions import ENGINE_VERSION

#: The player's colour / id (red) and the enemy's colour (green).
PLAYER, ENEMY = 1, 2
#: Default of ``max_generations``: generations per run before the board counts as stable.
DEFAULT_MAX_GENERATIONS = 5000

__all__ = [
    "CampaignConfig",
    "CampaignState",
    "add_player",
    "apply_action",
    "config_from_dict",
    "config_to_dict",
    "decode_state",
    "encode_state",
    "end_player_turn",
    "get_valid_actions",
    "get_visible_state",
    "get_winner",
    "new_game",
    "player_log",
    "remove_player",
    "summary",
    "tick",
]


# =========================================================================== values


@dataclass(frozen=True)
class CampaignConfig:
    """Settings of one campaign game (the create body's config ``{"level": 1}``).

    Attributes:
        level: level number, 1..103 (:func:`engine.campaign.levels.level`).
        max_generations: generations one run may last before the board counts as
            stable (>= 1; default 5000).

    The Life-shaped properties (``width``, ``height``, ``budget``, ``zone``, ``torus``,
    ``players``) come from the level, so the Life rule functions can read them.
    """

    kind: ClassVar[str] = "campaign"

    level: int
    max_generations: int = DEFAULT_MAX_GENERATIONS

    @cached_property
    def data(self) -> Level:
        """The level (immutable data)."""
        return level(self.level)

    @property
    def width(self) -> int:
        """Board width in cells."""
        return self.data.width

    @property
    def height(self) -> int:
        """Board height in cells."""
        return self.data.height

    @property
    def budget(self) -> int:
        """Cells the player may place over the whole level."""
        return self.data.budget

    @property
    def zone(self) -> tuple[int, int, int, int]:
        """The half-open drawing zone ``(x0, y0, x1, y1)``."""
        return self.data.zone

    @property
    def torus(self) -> bool:
        """Campaign boards have hard edges."""
        return False

    @property
    def players(self) -> int:
        """One seat."""
        return 1


@dataclass(frozen=True)
class CampaignState(LifeState):
    """A campaign game at one moment (immutable): a Life state with one player, the
    level's zone, and ``run_start``.

    Attributes (besides :class:`engine.life.state.LifeState`'s):
        config: the :class:`CampaignConfig`.
        run_start: ``generation`` when the simulation last started (the
            ``max_generations`` limit counts from it).
        result: None while the level runs, then ``"win"`` or ``"loss"``.
    """

    kind: ClassVar[str] = "campaign"

    config: CampaignConfig  # type: ignore[assignment]
    run_start: int = 0

    def drawing_zone(self, player_id: int) -> tuple[int, int, int, int]:
        """The level's zone, for the one player."""
        return self.config.zone


# =========================================================================== config


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def config_from_dict(data: dict[str, Any]) -> CampaignConfig:
    """Validate a JSON config ``{"level": n, "max_generations"?: m}``.

    Raises:
        GameError: ``INVALID_CONFIG`` for a missing or unknown key, ``level`` not an
            integer in 1..103, ``max_generations`` not an integer in 1..2**31-1.
    """
    if not isinstance(data, Mapping):
        raise GameError(ErrorCode.INVALID_CONFIG, "config must be a JSON object")
    unknown = sorted(set(data) - {"level", "max_generations"})
    if unknown:
        raise GameError(
            ErrorCode.INVALID_CONFIG,
            f"unknown config key(s) {unknown}; known: ['level', 'max_generations']",
        )
    number = data.get("level")
    if not _int(number) or not 1 <= number <= LEVEL_COUNT:
        raise GameError(
            ErrorCode.INVALID_CONFIG, f"level must be an integer in 1..{LEVEL_COUNT}, got {number!r}"
        )
    max_generations = data.get("max_generations", DEFAULT_MAX_GENERATIONS)
    if not _int(max_generations) or not 1 <= max_generations <= MAX_INT:
        raise GameError(
            ErrorCode.INVALID_CONFIG,
            f"max_generations must be an integer in 1..{MAX_INT}, got {max_generations!r}",
        )
    try:
        level(number)
    except UnknownLevelError as exc:  # pragma: no cover - the range check above covers it
        raise GameError(ErrorCode.INVALID_CONFIG, str(exc)) from exc
    return CampaignConfig(int(number), int(max_generations))


def config_to_dict(config: CampaignConfig) -> dict[str, Any]:
    """The normalised JSON config (every field present)."""
    return {"level": config.level, "max_generations": config.max_generations}


def new_game(config: CampaignConfig, rules: str = ENGINE_VERSION) -> CampaignState:
    """The level's board (enemy cells in green), waiting for its one player, under the
    rules of engine version ``rules`` (:mod:`engine.versions`)."""
    board = config.data.enemy_board()
    return CampaignState(config=config, board=np.ascontiguousarray(board).tobytes(), rules=rules)


# =========================================================================== phases


def add_player(state: CampaignState, name: str) -> CampaignState:
    """The player (id 1, red) joins with the level's budget; ``placement`` starts.

    Raises:
        GameError: ``GAME_FINISHED``; ``GAME_FULL`` when the seat is taken.
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the level is over")
    if state.phase != "waiting" or state.players:
        raise GameError(ErrorCode.GAME_FULL, "a campaign level has one player")
    budget = state.config.budget
    state = replace(state, players=(LifePlayer(PLAYER, str(name), budget, budget),))
    return life.begin_drawing_turn(replace(state, phase="placement", turn=PLAYER))


def _finish(state: CampaignState, result: str) -> CampaignState:
    """End the level: ``"win"`` (winner 1) or ``"loss"`` (no winner)."""
    return replace(
        life.end_drawing_turn(state),
        phase="finished",
        turn=0,
        winner=PLAYER if result == "win" else None,
        result=result,
    )


def _start_running(state: CampaignState) -> CampaignState:
    """Start the simulation ("Ready") at once; ``max_generations`` counts from now."""
    return replace(life.start_running(state), run_start=state.generation)


def _on_stable(state: CampaignState) -> CampaignState:
    """A stable board (or ``max_generations`` reached) with the enemy alive: budget 0 →
    loss (docs/architecture/rules.md "Campaign"), otherwise ``redraw`` opens by itself
    (``stable`` True)."""
    if state.player(PLAYER).budget_left == 0:
        return _finish(replace(state, stable=True), "loss")
    return life.begin_drawing_turn(
        replace(state, phase="redraw", turn=0, stable=True, players=state.map_players(ready=False))
    )


def end_player_turn(state: CampaignState, player_id: int) -> CampaignState:
    """Say "Ready" (docs/architecture/rules.md "Campaign"): in ``placement`` or ``redraw``
    the simulation starts at once (an empty redraw simply runs again).

    Raises:
        GameError: ``GAME_FINISHED``, ``UNKNOWN_PLAYER``, ``INVALID_ACTION`` (removed),
            ``WRONG_PHASE`` (not placement or redraw).
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the level is over")
    life.acting_player(state, player_id)
    if state.phase not in life.DRAWING_PHASES:
        raise GameError(ErrorCode.WRONG_PHASE, f"end_turn is for placement and redraw, not {state.phase}")
    return _start_running(state)


def remove_player(state: CampaignState, player_id: int) -> CampaignState:
    """The player leaves or is disconnected past the timeout: out, the level is lost
    (``"loss"``); the board is kept. Already out: unchanged.

    Raises:
        GameError: ``GAME_FINISHED``, ``UNKNOWN_PLAYER``.
    """
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the level is over")
    player = state.player(player_id)
    if player.out:
        return state
    return _finish(state.with_player(replace(player, out=True)), "loss")


# =========================================================================== simulation


def tick(state: CampaignState, generations: int) -> CampaignState:
    """Run up to ``generations`` generations of a ``running`` level (other phases:
    unchanged), one at a time, with the Life kernel (hard edges). After each: no enemy
    cell → ``"win"``; ``max_generations`` since ``run_start`` or a board equal to one of
    the previous 15 → stable (:func:`_on_stable`). Stops early when the phase leaves
    ``running``."""
    if state.phase != "running" or generations <= 0:
        return state
    from engine.life import step  # the bit-parallel kernel

    grid = state.grid
    detector = stability.RepeatDetector(state.history)
    pop, digest = stability.population(grid), None
    generation = state.generation
    limit = state.run_start + state.config.max_generations
    outcome = None
    for _ in range(generations):
        detector.push(grid, pop, digest)
        grid = step(grid, torus=False)
        generation += 1
        if not (grid == ENEMY).any():
            outcome = "win"
            break
        if generation >= limit:
            outcome = "stable"
            break
        pop = stability.population(grid)
        repeat, digest = detector.seen(grid, pop)
        if repeat:
            outcome = "stable"
            break
    new = replace(
        state,
        board=np.ascontiguousarray(grid, dtype=np.uint8).tobytes(),
        generation=generation,
        history=detector.history(),
    )
    if outcome == "win":
        return _finish(new, "win")
    if outcome == "stable":
        return _on_stable(new)
    return new


# =========================================================================== actions


def action_propose_finish(
    state: CampaignState, player: LifePlayer, action: dict[str, Any]
) -> CampaignState:
    """Refused: a campaign has one player, there is nobody to agree with.

    Raises:
        GameError: ``INVALID_ACTION`` (use ``resign`` or ``restart``).
    """
    raise GameError(ErrorCode.INVALID_ACTION, "a campaign level has one player: use resign or restart")


def action_resign(
    state: CampaignState, player: LifePlayer, action: dict[str, Any]
) -> CampaignState:
    """``resign``: the level ends as ``"loss"`` (``restart`` still works)."""
    return _finish(state, "loss")


def action_restart(
    state: CampaignState, player: LifePlayer, action: dict[str, Any]
) -> CampaignState:
    """``restart`` ("Заново": the level starts again): the state after
    the player joined — level board, full budget, ``placement``, generation 0, speed 1.
    Allowed in every phase, ``finished`` included (engine version 2+: ``NO_CHANGE`` when
    the level is in that state already)."""
    return add_player(new_game(state.config, state.rules), player.name)


#: Action type -> handler(state, player, action). Drawing and control are Life's.
ACTIONS = {
    "place": life.action_place,
    "erase": life.action_erase,
    "stamp": life.action_stamp,
    "reset_turn": life.action_reset_turn,
    "pause": life.action_pause,
    "resume": life.action_resume,
    "speed": life.action_speed,
    "propose_finish": action_propose_finish,
    "resign": action_resign,
    "restart": action_restart,
}


def apply_action(state: CampaignState, player_id: int, action: dict[str, Any]) -> CampaignState:
    """Apply one action of the REST contract (docs/architecture/contracts.md "Life actions").

    ``place`` is all or nothing; cells already alive (enemy cells included) are skipped
    and free. ``stamp`` skips cells outside the zone or alive. ``erase`` only removes the
    player's own cells (a cell placed in the current drawing turn refunds 1); enemy
    cells are ignored.

    Raises:
        GameError: ``MALFORMED`` (unknown type, bad fields), ``GAME_FINISHED`` (anything
            but ``restart`` once finished), ``UNKNOWN_PLAYER``, ``INVALID_ACTION``
            (removed player, ``propose_finish``, unknown stamp), ``WRONG_PHASE``,
            ``OUT_OF_ZONE``, ``BUDGET_EXCEEDED``, ``NO_CHANGE`` (engine version 2+: the
            action would change nothing). The input state is never changed.
    """
    atype = action.get("type")
    handler = ACTIONS.get(atype) if isinstance(atype, str) else None
    if handler is None:
        raise GameError(ErrorCode.MALFORMED, life.unknown_action(action, sorted(ACTIONS), "a campaign"))
    if state.phase == "finished" and atype != "restart":
        raise GameError(ErrorCode.GAME_FINISHED, "the level is over (restart plays it again)")
    player = life.acting_player(state, player_id)
    new = handler(state, player, action)
    if new == state and life.refuses_noops(state):
        raise life.no_change(f"{atype} would change nothing")
    return new


# =========================================================================== views


def get_visible_state(
    state: CampaignState, player_id: int | None, *, reveal: bool = False
) -> dict[str, Any]:
    """The view (docs/api/index.md "Views"; Life's shape, ``kind`` ``"campaign"``), JSON-ready.

    The whole board is visible in every phase (``reveal`` changes nothing). Extra fields: ``level`` (1..103),
    ``levels_total`` (103), ``level_name`` and ``hint`` (``{"en", "ru"}``), ``hopeless``,
    ``enemy_cells`` (green cells left), ``run_generations`` (generations since the
    simulation last started). ``cells`` of the player is present but is not a score
    (the client hides it). ``zone`` is the level's zone for everyone.
    """
    viewer = PLAYER if _int(player_id) and player_id == PLAYER and state.players else None
    grid = state.grid
    counts = life.cell_counts(grid)
    cfg = state.config
    lv = cfg.data
    players = [
        {
            "id": p.id,
            "name": p.name,
            "color": COLOURS[p.id],
            "cells": counts[p.id],
            "budget_left": p.budget_left,
            "connected": True,
            "out": p.out,
            "ready": p.ready,
            "proposed_finish": p.proposed_finish,
        }
        for p in state.players
    ]
    return {
        "kind": "campaign",
        "phase": state.phase,
        "turn": state.turn,
        "you": viewer,
        "players": players,
        "max_players": 1,
        "width": cfg.width,
        "height": cfg.height,
        "winner": state.winner,
        "result": state.result,
        "generation": state.generation,
        "run_generations": state.generation - state.run_start,
        "max_generations": cfg.max_generations,
        "torus": False,
        "budget": cfg.budget,
        "zone": list(cfg.zone),
        "zones": {str(PLAYER): list(cfg.zone)},
        "stable": state.stable,
        "speed": state.speed,
        "board": life.board_rle(grid),
        "enemy_cells": counts[ENEMY],
        "level": lv.number,
        "levels_total": LEVEL_COUNT,
        "level_name": {"en": lv.name_en, "ru": lv.name_ru},
        "hint": {"en": lv.hint_en, "ru": lv.hint_ru},
        "hopeless": lv.hopeless,
    }


def get_valid_actions(
    state: CampaignState, player_id: int, unit_id: int | None = None
) -> list[dict]:
    """No per-unit actions: always ``[]``."""
    return []


def get_winner(state: CampaignState) -> int | None:
    """1 once the level is won, else None."""
    return state.winner


def summary(state: CampaignState):
    """:class:`engine.api.Summary` of the state (Life's, one player)."""
    return life.summary(state, kind="campaign", max_players=1)


# =========================================================================== encoding

def encode_state(state: CampaignState) -> bytes:
    """Canonical bytes (the Life codec, :func:`engine.life.state.encode`, with the level
    config and ``run_start`` in the header). The board is stored, not rebuilt from the
    level, since the simulation changes it."""
    return encode(state, config_dict=config_to_dict(state.config), extra={"run_start": state.run_start})


def decode_state(data: bytes) -> CampaignState:
    """Inverse of :func:`encode_state`.

    Raises:
        GameError: ``MALFORMED`` when the bytes are not an encoded campaign state.
    """
    fields, header = decode_fields(data, config_from_dict, what="campaign")
    try:
        return CampaignState(**fields, run_start=int(header["run_start"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise GameError(ErrorCode.MALFORMED, f"not an encoded campaign state: {exc}") from exc


# =========================================================================== log


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The log as its player may read it (``GET /game/{id}/events``): a
    campaign has one player and no hidden information (the view shows the whole board
    in every phase), so every event, with its ``state_hash``.

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload",
            "state_hash"?}``.
        player_id: the reader (unused: everything is public to the one player).

    Returns:
        ``[{"seq", "log_seq", "type", "actor", "payload", "state_hash"}]`` in log order
        (the one player observes every event, so its own ``seq`` is the real one).
    """
    return [
        {
            "seq": int(e.get("seq", 0)),
            "log_seq": int(e.get("seq", 0)),
            "type": str(e["type"]),
            "actor": int(e.get("actor", 0)),
            "payload": dict(e.get("payload") or {}),
            "state_hash": str(e.get("state_hash", "")),
        }
        for e in events
    ]
