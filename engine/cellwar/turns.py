"""Turn order, joining, elimination, the end of a turn and player removal.

Sources: seed "Игроки" (strict fixed order, unchanged from round to round), "Раунд" (a
round = every player moved once; combat units first, then factories; every unit must
act exactly once; no skipping), "Фабрика" (a factory with no free neighbouring cell
dies), "Условие победы" (the last player with units wins; no draws), "Отключение игрока"
and docs/architecture/rules.md.

Decisions where the seed is silent (recorded here):

- The game starts (``playing``, round 1, player 1's turn) when the last seat is taken.
- A blocked factory (no free neighbouring cell) dies when ``end_turn`` is called, before
  the check for units that still have to act.
- The turn passes to the next player in id order who is not out; the round number goes
  up by one when the order wraps. A player eliminated during its own turn (its last unit
  died attacking a fortification) loses the turn at once.
- ``acted`` flags are cleared whenever the turn changes, so ``acted`` means "in the
  current turn of its owner".
- ``remove_player`` of a player already removed changes nothing; on a finished game it
  raises ``GAME_FINISHED``. While waiting the seat stays taken (ids stay sequential) but
  the player is out; if at most one player is left when the last seat fills, the game
  finishes at once. The rollback to the previous snapshot (disconnect during one's own
  turn) is the session's ``RolledBack`` event; the engine only removes.

Idle seats (engine version 4; the seed "Потеря связи: ждём таймаут, затем как отключение"
and "Ничья невозможна"; docs/game-end.md): a player who lets :data:`IDLE_TURNS_LIMIT`
of its own turns in a row time out without acting is treated as disconnected.

- A turn counts as *acted* once its player applied an action in it (``turn_acted``) or
  ended it (``end_turn``); either sets the player's ``idle`` to 0.
- A timeout of a turn that was not acted adds one to the player's ``idle``; a timeout of
  an acted turn sets it to 0 (the streak is broken).
- :func:`idle_seats` names the seats that reached the limit; the command ``time_out``
  then records their removal as the usual ``PlayerRemoved {"player_id", "reason":
  "disconnected"}`` by the system (:func:`engine.removal.plan_time_out`): the seat and
  its units go, and when one player is left it wins. The turn has just passed on, so
  it is never that player's own turn and no rollback applies.
- Under versions 1-3 nothing is counted and nobody is removed by timeouts.
"""

from __future__ import annotations

from dataclasses import replace

from cellwar.v1.codes import ErrorCode
from engine.cellwar.fog import vision_mask
from engine.cellwar.state import FINISHED, PLAYING, WAITING, CellWarState, Player
from engine.cellwar.units import FACTORY, VECTORS
from engine.errors import GameError
from engine.versions import at_least

#: Own turns in a row that time out without acting after which a seat is removed as
#: disconnected (engine version 4+; module docstring).
IDLE_TURNS_LIMIT = 2


def check_turn(state: CellWarState, player_id: int) -> None:
    """Raise unless it is ``player_id``'s turn in a running game.

    Raises:
        GameError: ``WRONG_PHASE`` (seats still open), ``GAME_FINISHED``,
            ``UNKNOWN_PLAYER`` (no such seat), ``NOT_YOUR_TURN``.
    """
    if state.phase == WAITING:
        raise GameError(ErrorCode.WRONG_PHASE, "the game has not started: seats are still open")
    if state.phase == FINISHED:
        raise GameError(ErrorCode.GAME_FINISHED, "the game is finished")
    if state.player(player_id) is None:
        raise GameError(ErrorCode.UNKNOWN_PLAYER, f"there is no player {player_id} in this game")
    if player_id != state.turn:
        raise GameError(ErrorCode.NOT_YOUR_TURN, f"it is player {state.turn}'s turn")


def begin_turn(state: CellWarState, player_id: int, round_no: int) -> CellWarState:
    """Give the turn to ``player_id``: clear every ``acted`` flag and ``turn_acted``,
    start its fog memory."""
    units = tuple(replace(u, acted=False) if u.acted else u for u in state.units)
    state = replace(state, units=units, turn=player_id, round=round_no, turn_acted=False)
    return replace(state, seen=vision_mask(state, player_id))


def counts_idle(state: CellWarState) -> bool:
    """The game's rules count idle turns (engine version 4+)."""
    return at_least(state.rules, "4")


def mark_acted(state: CellWarState, player_id: int) -> CellWarState:
    """Version 4+: ``player_id`` acted in its turn: ``turn_acted`` set, its ``idle`` 0
    (the state as given under older rules)."""
    if not counts_idle(state):
        return state
    player = state.player(player_id)
    if player is not None and player.idle:
        state = state.with_player(replace(player, idle=0))
    return state if state.turn_acted else replace(state, turn_acted=True)


def idle_seats(state: CellWarState) -> list[int]:
    """Ids of the players still in the game whose ``idle`` reached
    :data:`IDLE_TURNS_LIMIT` (version 4+; none before, none once finished), ascending."""
    if not counts_idle(state) or state.phase != PLAYING:
        return []
    return [p.id for p in state.players if not p.out and p.idle >= IDLE_TURNS_LIMIT]


def upgrade_idle(state: CellWarState, version: str) -> CellWarState:
    """From a version before 4 to 4+: every ``idle`` starts at 0 and a running turn counts
    as acted (what its player did in it before the upgrade is not known, so it is never
    held against it). The state as given otherwise."""
    if counts_idle(state) or not at_least(version, "4"):
        return state
    players = tuple(replace(p, idle=0) if p.idle else p for p in state.players)
    return replace(state, players=players, turn_acted=state.phase == PLAYING)


def pass_turn(state: CellWarState) -> CellWarState:
    """Give the turn to the next player after ``state.turn`` who is not out."""
    active = state.active_ids()
    later = [pid for pid in active if pid > state.turn]
    if later:
        return begin_turn(state, later[0], state.round)
    return begin_turn(state, active[0], state.round + 1)


def eliminate(state: CellWarState) -> CellWarState:
    """Put out every player who is still in but has no unit left."""
    owners = {u.owner for u in state.units}
    for p in state.players:
        if not p.out and p.id not in owners:
            state = state.with_player(replace(p, out=True))
    return state


def finish_if_over(state: CellWarState) -> CellWarState:
    """Finish a running game when at most one player is left; that one wins."""
    active = state.active_ids()
    if state.phase != PLAYING or len(active) > 1:
        return state
    units = tuple(replace(u, acted=False) if u.acted else u for u in state.units)
    return replace(
        state,
        phase=FINISHED,
        turn=0,
        seen=0,
        units=units,
        winner=active[0] if active else None,
        turn_acted=False,
    )


def settle(state: CellWarState) -> CellWarState:
    """After a unit's action: eliminations, the end of the game, or the turn passing on
    (the current player was eliminated), else extend the current player's fog memory."""
    state = finish_if_over(eliminate(state))
    if state.phase != PLAYING:
        return state
    current = state.player(state.turn)
    if current is None or current.out:
        return pass_turn(state)
    return replace(state, seen=state.seen | vision_mask(state, state.turn))


def has_free_neighbour(state: CellWarState, x: int, y: int) -> bool:
    """Some cell around (x, y) (8 directions) is on the board and empty."""
    occupied = {(u.x, u.y) for u in state.units}
    return any(
        (dx, dy) != (0, 0) and state.in_board(x + dx, y + dy) and (x + dx, y + dy) not in occupied
        for dx, dy in VECTORS
    )


def add_player(state: CellWarState, name: str) -> CellWarState:
    """The next player id (1, 2, ...) takes a seat; the last seat starts the game.

    Raises:
        GameError: ``MALFORMED`` (name not a non-empty string), ``GAME_FULL``,
            ``GAME_FINISHED``.
    """
    if not isinstance(name, str) or not name.strip():
        raise GameError(ErrorCode.MALFORMED, "name must be a non-empty string")
    if state.phase == FINISHED:
        raise GameError(ErrorCode.GAME_FINISHED, "the game is finished")
    if state.phase != WAITING or len(state.players) >= state.config.players:
        raise GameError(ErrorCode.GAME_FULL, f"all {state.config.players} seats are taken")
    players = state.players + (Player(len(state.players) + 1, name),)
    state = replace(state, players=players)
    if len(players) < state.config.players:
        return state
    state = replace(state, phase=PLAYING)
    state = finish_if_over(state)
    if state.phase != PLAYING:
        return state
    return begin_turn(state, state.active_ids()[0], 1)


def end_player_turn(state: CellWarState, player_id: int) -> CellWarState:
    """End ``player_id``'s turn: blocked factories that have not acted die, then every
    unit must have acted; the turn passes to the next player (seed "Раунд").

    Raises:
        GameError: ``WRONG_PHASE``, ``GAME_FINISHED``, ``UNKNOWN_PLAYER``,
            ``NOT_YOUR_TURN``, ``UNITS_NOT_DONE`` (a unit that must act has not; nothing
            changes, not even blocked factories).
    """
    check_turn(state, player_id)
    own = [u for u in state.units if u.owner == player_id and not u.acted]
    waiting_combat = [u.id for u in own if u.combat]
    if waiting_combat:
        raise GameError(ErrorCode.UNITS_NOT_DONE, f"units {waiting_combat} have not acted yet")
    blocked = {u.id for u in own if u.type == FACTORY and not has_free_neighbour(state, u.x, u.y)}
    waiting_factories = [u.id for u in own if u.type == FACTORY and u.id not in blocked]
    if waiting_factories:
        raise GameError(
            ErrorCode.UNITS_NOT_DONE, f"factories {waiting_factories} have not produced yet"
        )
    if blocked:
        state = replace(state, units=tuple(u for u in state.units if u.id not in blocked))
    state = mark_acted(state, player_id)
    state = finish_if_over(eliminate(state))
    if state.phase != PLAYING:
        return state
    return pass_turn(state)


def turn_timer(state: CellWarState):
    """The timer of the current turn (:mod:`engine.timers`): every turn of a ``playing``
    game lasts the config's ``turn_time_s``; the key ``("turn", round, player)`` changes
    whenever the turn passes. None without a timer or outside ``playing``."""
    from engine.timers import TurnTimer  # engine.timers dispatches to this module

    if state.phase != PLAYING or not state.config.turn_time_s:
        return None
    return TurnTimer(state.config.turn_time_s, ("turn", state.round, state.turn))


def time_out(state: CellWarState) -> CellWarState:
    """The current player's time ran out (:mod:`engine.timers`): the units that
    have not acted stay where they are and do nothing (a combat unit neither moves nor
    fortifies; a factory that has not produced produces nothing this turn), except that a
    factory with no free neighbouring cell dies, as at any end of turn (seed "Фабрика");
    then the turn passes as after ``end_turn`` (eliminations and the end of the game
    first). Version 4+: the player's ``idle`` goes up by one when it did not act in the
    turn, else to 0 (module docstring "Idle seats"); :func:`idle_seats` then names it
    once it reached the limit.

    Raises:
        GameError: ``WRONG_PHASE`` (seats open), ``GAME_FINISHED``.
    """
    if state.phase == WAITING:
        raise GameError(ErrorCode.WRONG_PHASE, "the game has not started: seats are still open")
    if state.phase == FINISHED:
        raise GameError(ErrorCode.GAME_FINISHED, "the game is finished")
    player_id = state.turn
    if counts_idle(state):
        player = state.player(player_id)
        assert player is not None
        state = state.with_player(replace(player, idle=0 if state.turn_acted else player.idle + 1))
    blocked = {
        u.id
        for u in state.units
        if u.owner == player_id
        and u.type == FACTORY
        and not u.acted
        and not has_free_neighbour(state, u.x, u.y)
    }
    if blocked:
        state = replace(state, units=tuple(u for u in state.units if u.id not in blocked))
    state = finish_if_over(eliminate(state))
    if state.phase != PLAYING:
        return state
    return pass_turn(state)


def remove_player(state: CellWarState, player_id: int) -> CellWarState:
    """Remove a player (left, or disconnected past the timeout) and all its units.

    If it was that player's turn, the turn passes on; if one player is left, it wins.

    Raises:
        GameError: ``UNKNOWN_PLAYER`` (no such seat), ``GAME_FINISHED``.
    """
    if state.phase == FINISHED:
        raise GameError(ErrorCode.GAME_FINISHED, "the game is finished")
    player = state.player(player_id)
    if player is None:
        raise GameError(ErrorCode.UNKNOWN_PLAYER, f"there is no player {player_id} in this game")
    if player.removed:
        return state
    state = state.with_player(replace(player, out=True, removed=True))
    state = replace(state, units=tuple(u for u in state.units if u.owner != player_id))
    if state.phase != PLAYING:
        return state
    state = finish_if_over(state)
    if state.phase == PLAYING and state.turn == player_id:
        return pass_turn(state)
    return state
