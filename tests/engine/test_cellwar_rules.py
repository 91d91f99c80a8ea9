"""CellWar rules, table-driven from the seed's action and attack tables
(``seeds/001_9d7c8657bdcb51a7.txt`` "API действий", "Правила атаки") and
docs/architecture/rules.md "CellWar"."""

from __future__ import annotations

import pytest

import engine
from engine import GameError
from engine.cellwar import game as cw
from engine.cellwar.config import CellWarConfig, config_from_dict, config_to_dict
from tests.engine.cellwarkit import act, start, uid


def board(state):
    """Units as sorted ``(owner, type, x, y, standing)``."""
    return sorted((u.owner, u.type, u.x, u.y, u.standing) for u in state.units)


def code(fn, *args):
    with pytest.raises(GameError) as info:
        fn(*args)
    return info.value.code


INF, FORT, FAC = "infantry", "fortification", "factory"
FAR = (2, INF, 7, 7)  # an enemy far away, so the game goes on

# (name, start units (unit 1 acts, owned by player 1), dx, dy, units after | error code)
ACTION_TABLE = [
    # infantry
    (
        "infantry stay -> fortification 1",
        [(1, INF, 3, 3), FAR],
        0,
        0,
        [(1, FORT, 3, 3, 1), (2, INF, 7, 7, 0)],
    ),
    (
        "infantry move to empty",
        [(1, INF, 3, 3), FAR],
        1,
        -1,
        [(1, INF, 4, 2, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "infantry attacks infantry",
        [(1, INF, 3, 3), (2, INF, 4, 3), FAR],
        1,
        0,
        [(1, INF, 4, 3, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "infantry attacks fortification (1st hit)",
        [(1, INF, 3, 3), (1, INF, 0, 0), (2, FORT, 4, 4, 2), FAR],
        1,
        1,
        [(1, INF, 0, 0, 0), (2, INF, 4, 4, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "infantry attacks factory",
        [(1, INF, 3, 3), (2, FAC, 3, 4), FAR],
        0,
        1,
        [(1, INF, 3, 4, 0), (2, INF, 7, 7, 0)],
    ),
    ("infantry onto own unit", [(1, INF, 3, 3), (1, INF, 2, 3), FAR], -1, 0, "INVALID_ACTION"),
    ("infantry off the board", [(1, INF, 0, 3), FAR], -1, 0, "INVALID_ACTION"),
    ("infantry off the board (corner)", [(1, INF, 0, 0), FAR], -1, -1, "INVALID_ACTION"),
    # fortification
    (
        "fortification stay: standing +1",
        [(1, FORT, 3, 3, 1), FAR],
        0,
        0,
        [(1, FORT, 3, 3, 2), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification stay at 3 -> factory",
        [(1, FORT, 3, 3, 2), FAR],
        0,
        0,
        [(1, FAC, 3, 3, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification moves -> infantry",
        [(1, FORT, 3, 3, 2), FAR],
        -1,
        0,
        [(1, INF, 2, 3, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification attacks infantry",
        [(1, FORT, 3, 3, 1), (2, INF, 3, 2), FAR],
        0,
        -1,
        [(1, INF, 3, 2, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification attacks fortification (1st hit)",
        [(1, FORT, 3, 3, 2), (1, INF, 0, 0), (2, FORT, 2, 2, 1), FAR],
        -1,
        -1,
        [(1, INF, 0, 0, 0), (2, INF, 2, 2, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification attacks factory",
        [(1, FORT, 3, 3, 1), (2, FAC, 4, 2), FAR],
        1,
        -1,
        [(1, INF, 4, 2, 0), (2, INF, 7, 7, 0)],
    ),
    (
        "fortification onto own unit",
        [(1, FORT, 3, 3, 1), (1, FAC, 3, 4), FAR],
        0,
        1,
        "INVALID_ACTION",
    ),
    ("fortification off the board", [(1, FORT, 7, 3, 1), (2, INF, 0, 7)], 1, 0, "INVALID_ACTION"),
    # factory (player 1 has no combat unit, so its factory may act)
    (
        "factory produces on empty",
        [(1, FAC, 3, 3), FAR],
        1,
        0,
        [(1, FAC, 3, 3, 0), (1, INF, 4, 3, 0), (2, INF, 7, 7, 0)],
    ),
    ("factory (0,0) is invalid", [(1, FAC, 3, 3), FAR], 0, 0, "INVALID_ACTION"),
    ("factory onto own unit", [(1, FAC, 3, 3), (1, FAC, 4, 3), FAR], 1, 0, "INVALID_ACTION"),
    ("factory onto enemy", [(1, FAC, 3, 3), (2, INF, 4, 3), FAR], 1, 0, "INVALID_ACTION"),
    ("factory off the board", [(1, FAC, 0, 3), FAR], -1, 0, "INVALID_ACTION"),
]


@pytest.mark.parametrize(
    ("units", "dx", "dy", "expected"),
    [r[1:] for r in ACTION_TABLE],
    ids=[r[0] for r in ACTION_TABLE],
)
def test_action_table(units, dx, dy, expected):
    state = start(units)
    before = engine.encode_state(state)
    if isinstance(expected, str):
        assert code(act, state, 1, 1, dx, dy) == expected
        assert all((d["dx"], d["dy"]) != (dx, dy) for d in engine.get_valid_actions(state, 1, 1))
    else:
        new = act(state, 1, 1, dx, dy)
        assert board(new) == sorted(expected)
        assert any((d["dx"], d["dy"]) == (dx, dy) for d in engine.get_valid_actions(state, 1, 1))
    assert engine.encode_state(state) == before  # states are values


def test_valid_action_kinds():
    state = start([(1, INF, 3, 3), (1, FORT, 0, 0, 2), (2, INF, 4, 3), (2, FORT, 3, 4, 1), FAR])
    kinds = {
        (d["unit_id"], d["dx"], d["dy"]): d["kind"] for d in engine.get_valid_actions(state, 1)
    }
    fort = uid(state, 2)  # player 1's second unit: 1 * 2 players + 1 = 3
    assert fort == 3
    assert kinds[(1, 0, 0)] == "fortify"
    assert kinds[(1, 1, 0)] == "attack"
    assert kinds[(1, 0, 1)] == "attack"
    assert kinds[(1, -1, 0)] == "move"
    assert kinds[(fort, 0, 0)] == "become_factory"
    assert kinds[(fort, 1, 1)] == "move"
    assert (fort, -1, 0) not in kinds  # off the board
    assert engine.get_valid_actions(start([(1, FORT, 3, 3, 1), FAR]), 1)[4]["kind"] == "stand"
    produce = engine.get_valid_actions(start([(1, FAC, 0, 0), FAR]), 1)
    assert [(d["dx"], d["dy"], d["kind"]) for d in produce] == [
        (1, 0, "produce"),
        (0, 1, "produce"),
        (1, 1, "produce"),
    ]


def test_second_hit_takes_the_fortification():
    state = start([(1, INF, 2, 3), (1, INF, 4, 3), (2, FORT, 3, 3, 2), FAR])
    state = act(state, 1, 1, 1, 0)  # 1st hit: attacker dies, fortification -> infantry
    assert board(state) == [(1, INF, 4, 3, 0), (2, INF, 3, 3, 0), (2, INF, 7, 7, 0)]
    state = act(state, 1, uid(state, 2), -1, 0)  # 2nd hit: infantry vs infantry
    assert board(state) == [(1, INF, 3, 3, 0), (2, INF, 7, 7, 0)]


def test_hit_fortification_stays_infantry_on_its_own_turn():
    state = start([(1, INF, 2, 3), (1, INF, 0, 0), (2, FORT, 3, 3, 2)])
    state = act(state, 1, 1, 1, 0)
    state = engine.end_player_turn(act(state, 1, uid(state, 2), 0, 0), 1)
    fort = uid(state, 3)
    unit = state.unit(fort)
    assert (unit.type, unit.standing) == (INF, 0)
    assert {
        d["kind"] for d in engine.get_valid_actions(state, 2, fort) if (d["dx"], d["dy"]) == (0, 0)
    } == {"fortify"}


def end_both(state, p1_moves=(), p2_moves=()):
    for m in p1_moves:
        state = act(state, 1, *m)
    state = engine.end_player_turn(state, 1)
    for m in p2_moves:
        state = act(state, 2, *m)
    return engine.end_player_turn(state, 2)


def test_fortification_stands_three_times_and_becomes_a_factory():
    state = start([(1, INF, 3, 3), FAR])
    state = end_both(state, [(1, 0, 0)], [(2, 0, 0)])
    assert board(state)[0] == (1, FORT, 3, 3, 1)
    state = end_both(state, [(1, 0, 0)], [(2, 0, 0)])
    assert board(state)[0] == (1, FORT, 3, 3, 2)
    state = act(state, 1, 1, 0, 0)
    assert board(state)[0] == (1, FAC, 3, 3, 0)
    # it produces from the next turn only
    assert engine.get_valid_actions(state, 1, 1) == []
    assert code(act, state, 1, 1, 1, 0) == "UNIT_ALREADY_ACTED"
    state = end_both(state, [], [(2, 0, 0)])
    state = act(state, 1, 1, 1, 0)
    assert board(state)[:2] == [(1, FAC, 3, 3, 0), (1, INF, 4, 3, 0)]


def test_infantry_produced_this_turn_cannot_act():
    state = act(start([(1, FAC, 3, 3), FAR]), 1, 1, 1, 0)
    new_id = max(u.id for u in state.units)
    assert state.unit(new_id).acted
    assert engine.get_valid_actions(state, 1, new_id) == []
    assert code(act, state, 1, new_id, 1, 0) == "UNIT_ALREADY_ACTED"
    state = engine.end_player_turn(state, 1)  # nothing left to act
    assert state.turn == 2


def test_surrounded_factory_dies_at_end_of_turn():
    units = [(1, FAC, 0, 0), (1, INF, 1, 0), (2, INF, 0, 1), (2, FORT, 1, 1, 1), (2, INF, 7, 7)]
    state = start(units)
    assert engine.get_valid_actions(state, 1, 1) == []
    state = act(state, 1, uid(state, 2), 0, 0)  # the infantry fortifies: the factory stays blocked
    assert engine.get_valid_actions(state, 1) == []
    state = engine.end_player_turn(state, 1)
    assert state.unit(1) is None
    assert state.turn == 2 and state.phase == "playing"


def test_blocked_factory_alone_dies_and_its_owner_is_out():
    state = start([(1, FAC, 0, 0), (2, INF, 1, 0), (2, INF, 0, 1), (2, INF, 1, 1)])
    state = engine.end_player_turn(state, 1)
    assert state.phase == "finished" and engine.get_winner(state) == 2


def test_end_turn_refused_while_units_have_to_act():
    state = start([(1, INF, 3, 3), (1, FAC, 0, 0), FAR])
    before = engine.encode_state(state)
    assert code(engine.end_player_turn, state, 1) == "UNITS_NOT_DONE"
    state = act(state, 1, 1, 0, 0)
    assert code(engine.end_player_turn, state, 1) == "UNITS_NOT_DONE"  # the factory with room
    assert engine.encode_state(start([(1, INF, 3, 3), (1, FAC, 0, 0), FAR])) == before
    state = act(state, 1, uid(state, 2), 1, 1)
    assert engine.end_player_turn(state, 1).turn == 2


def test_unit_already_acted():
    state = act(start([(1, INF, 3, 3), FAR]), 1, 1, 1, 0)
    assert code(act, state, 1, 1, 1, 0) == "UNIT_ALREADY_ACTED"
    assert engine.get_valid_actions(state, 1, 1) == []


def test_not_your_turn():
    state = start([(1, INF, 3, 3), FAR])
    assert code(act, state, 2, 2, 0, 0) == "NOT_YOUR_TURN"
    assert code(engine.end_player_turn, state, 2) == "NOT_YOUR_TURN"
    assert engine.get_valid_actions(state, 2) == []


def test_unknown_or_foreign_unit_is_invalid():
    state = start([(1, INF, 3, 3), FAR])
    assert code(act, state, 1, 2, 0, 0) == "INVALID_ACTION"  # player 2's unit
    assert code(act, state, 1, 99, 0, 0) == "INVALID_ACTION"
    assert engine.get_valid_actions(state, 1, 2) == []


@pytest.mark.parametrize(
    "action",
    [
        {},
        {"unit_id": 1, "dx": 2, "dy": 0},
        {"unit_id": 1, "dx": 0},
        {"unit_id": "1", "dx": 0, "dy": 0},
        {"unit_id": 1, "dx": True, "dy": 0},
        {"unit_id": 1, "dx": 0.5, "dy": 0},
        {"type": "pause"},
    ],
)
def test_malformed_actions(action):
    assert code(engine.apply_action, start([(1, INF, 3, 3), FAR]), 1, action) == "MALFORMED"


def test_factories_act_after_combat_units():
    state = start([(1, INF, 3, 3), (1, FAC, 0, 0), FAR])
    fac = uid(state, 2)
    assert code(act, state, 1, fac, 1, 0) == "UNITS_NOT_DONE"
    assert {d["unit_id"] for d in engine.get_valid_actions(state, 1)} == {1}
    assert engine.get_valid_actions(state, 1, fac) == []
    state = act(state, 1, 1, 0, 0)
    assert {d["unit_id"] for d in engine.get_valid_actions(state, 1)} == {fac}
    state = act(state, 1, fac, 1, 0)
    assert board(state)[:3] == [(1, FAC, 0, 0, 0), (1, FORT, 3, 3, 1), (1, INF, 1, 0, 0)]


def test_turn_order_and_rounds():
    state = start([(1, INF, 0, 0), (2, INF, 7, 0), (3, INF, 0, 7)], players=3)
    seen = []
    for _ in range(6):
        seen.append((state.round, state.turn))
        pid = state.turn
        uid = state.units_of(pid)[0].id
        state = engine.end_player_turn(act(state, pid, uid, 0, 0), pid)
    assert seen == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
    assert (state.round, state.turn) == (3, 1)
    state = engine.remove_player(state, 2)
    state = engine.end_player_turn(act(state, 1, 1, 0, 0), 1)
    assert (state.round, state.turn) == (3, 3)
    state = engine.end_player_turn(act(state, 3, 3, 0, 0), 3)
    assert (state.round, state.turn) == (4, 1)


def test_acted_flags_reset_for_the_next_turn():
    state = end_both(start([(1, INF, 3, 3), FAR]), [(1, 0, 0)], [(2, 0, 0)])
    assert not any(u.acted for u in state.units)


def test_elimination_and_winner():
    state = start([(1, INF, 3, 3), (2, INF, 4, 3)])
    assert engine.get_winner(state) is None
    state = act(state, 1, 1, 1, 0)
    assert state.phase == "finished" and engine.get_winner(state) == 1
    s = engine.summary(state)
    assert (s.finished, s.turn, s.phase) == (True, 0, "finished")
    view = engine.get_visible_state(state, 2)
    assert (view["winner"], view["result"]) == (1, "win")
    assert code(act, state, 1, 1, 0, 0) == "GAME_FINISHED"
    assert code(engine.end_player_turn, state, 1) == "GAME_FINISHED"


def test_eliminated_player_is_skipped_among_three():
    state = start([(1, INF, 3, 3), (2, INF, 4, 3), (3, INF, 0, 7), (1, INF, 0, 0)], players=3)
    state = act(state, 1, 1, 1, 0)
    assert state.player(2).out and state.phase == "playing"
    state = engine.end_player_turn(act(state, 1, 4, 0, 0), 1)
    assert state.turn == 3 and state.round == 1


def test_attacker_losing_its_last_unit_on_a_fortification():
    state = start([(1, INF, 3, 3), (2, FORT, 4, 3, 1), (3, INF, 0, 7)], players=3)
    state = act(state, 1, 1, 1, 0)
    assert state.player(1).out and state.turn == 2 and state.phase == "playing"
    two = start([(1, INF, 3, 3), (2, FORT, 4, 3, 1)])
    two = act(two, 1, 1, 1, 0)
    assert two.phase == "finished" and two.winner == 2


def test_remove_player_during_own_turn():
    state = start([(1, INF, 0, 0), (2, INF, 7, 0), (3, INF, 0, 7)], players=3)
    state = act(state, 1, 1, 0, 0)
    state = engine.remove_player(state, 1)
    assert state.units_of(1) == [] and state.player(1).out and state.player(1).removed
    assert (state.turn, state.round, state.phase) == (2, 1, "playing")
    view = engine.get_visible_state(state, 2)
    assert view["players"][0]["connected"] is False and view["players"][0]["out"] is True


def test_remove_player_outside_own_turn():
    state = start([(1, INF, 0, 0), (2, INF, 7, 0), (3, INF, 0, 7)], players=3)
    state = engine.remove_player(state, 3)
    assert state.units_of(3) == [] and state.turn == 1
    assert engine.remove_player(state, 3) is state  # already removed: nothing changes
    state = engine.remove_player(state, 2)
    assert state.phase == "finished" and state.winner == 1
    assert code(engine.remove_player, state, 1) == "GAME_FINISHED"
    assert code(engine.remove_player, start([(1, INF, 0, 0), FAR]), 9) == "UNKNOWN_PLAYER"


def test_remove_while_waiting_then_start():
    config = engine.config_from_dict("cellwar", {"width": 8, "height": 8})
    state = engine.add_player(engine.new_game(config), "a")
    assert code(act, state, 1, 1, 0, 0) == "WRONG_PHASE"
    state = engine.remove_player(state, 1)
    assert state.phase == "waiting" and state.units_of(1) == []
    state = engine.add_player(state, "b")
    assert state.phase == "finished" and state.winner == 2


def test_joining():
    config = engine.config_from_dict("cellwar", {})
    state = engine.new_game(config)
    s = engine.summary(state)
    assert (s.kind, s.phase, s.players_joined, s.max_players, s.generation, s.speed) == (
        "cellwar",
        "waiting",
        0,
        2,
        0,
        1,
    )
    state = engine.add_player(engine.add_player(state, "a"), "b")
    assert (state.phase, state.turn, state.round) == ("playing", 1, 1)
    assert code(engine.add_player, state, "c") == "GAME_FULL"
    assert engine.tick(state, 5) is state


def test_default_start():
    config = config_from_dict({"players": 4})
    cells = [(u.owner, u.type, u.x, u.y) for u in config.units]
    assert cells == [
        (1, INF, 0, 0),
        (1, INF, 1, 0),
        (2, INF, 15, 15),
        (2, INF, 14, 15),
        (3, INF, 15, 0),
        (3, INF, 14, 0),
        (4, INF, 0, 15),
        (4, INF, 1, 15),
    ]
    state = engine.new_game(config)
    assert [u.id for u in state.units] == list(range(1, 9))
    eight = config_from_dict({"players": 8})
    assert len({(u.x, u.y) for u in eight.units}) == 16
    assert config_from_dict({}) == CellWarConfig(units=config_from_dict({}).units)
    assert config_from_dict({}).width == 16 and config_from_dict({}).disconnect_timeout_s == 30


@pytest.mark.parametrize(
    "data",
    [
        {
            "units": [
                {"owner": 1, "type": "factory", "x": 0, "y": 0},
                {"owner": 2, "type": "fortification", "x": 3, "y": 3},
            ]
        },
        {"players": 3, "width": 9},
        {
            "units": [
                {"owner": 1, "type": "fortification", "x": 0, "y": 0, "standing": 3},
                {"owner": 2, "type": "infantry", "x": 3, "y": 3},
            ]
        },
        {"width": 30, "height": 5, "players": 8, "disconnect_timeout_s": 2.5},
    ],
)
def test_config_round_trip(data):
    config = config_from_dict(data)
    assert config_from_dict(config_to_dict(config)) == config


def test_fortification_standing_3_is_a_factory():
    config = config_from_dict(
        {
            "units": [
                {"owner": 1, "type": "fortification", "x": 0, "y": 0, "standing": 3},
                {"owner": 2, "type": "infantry", "x": 3, "y": 3},
            ]
        }
    )
    assert config.units[0].type == FAC
    assert config_to_dict(config)["units"][0] == {"owner": 1, "type": "factory", "x": 0, "y": 0}


U2 = {"owner": 2, "type": "infantry", "x": 3, "y": 3}


@pytest.mark.parametrize(
    "data",
    [
        {"width": 3},
        {"width": 65},
        {"height": "16"},
        {"width": True},
        {"players": 1},
        {"players": 9},
        {"players": 8, "width": 4, "height": 4},
        {"disconnect_timeout_s": 0},
        {"disconnect_timeout_s": -1},
        {"disconnect_timeout_s": "30"},
        {"disconnect_timeout_s": float("inf")},
        {"torus": True},
        {"units": []},
        {"units": "x"},
        {"units": [{"owner": 1, "type": "infantry", "x": 0, "y": 0}]},  # player 2 has none
        {"units": [{"owner": 3, "type": "infantry", "x": 0, "y": 0}, U2]},
        {"units": [{"owner": 1, "type": "tank", "x": 0, "y": 0}, U2]},
        {"units": [{"owner": 1, "type": "infantry", "x": 16, "y": 0}, U2]},
        {"units": [{"owner": 1, "type": "infantry", "x": 0, "y": -1}, U2]},
        {"units": [{"owner": 1, "type": "infantry", "x": 3, "y": 3}, U2]},  # same cell
        {"units": [{"owner": 1, "type": "infantry", "x": 0, "y": 0, "standing": 1}, U2]},
        {"units": [{"owner": 1, "type": "fortification", "x": 0, "y": 0, "standing": 4}, U2]},
        {"units": [{"owner": 1, "type": "fortification", "x": 0, "y": 0, "standing": 0}, U2]},
        {"units": [{"owner": 1, "type": "infantry", "x": 0}, U2]},
        {"units": [{"owner": 1, "type": "infantry", "x": 0, "y": 0, "hp": 3}, U2]},
        {"units": [[1, "infantry", 0, 0], U2]},
    ],
)
def test_invalid_configs(data):
    with pytest.raises(GameError) as info:
        engine.config_from_dict("cellwar", data)
    assert info.value.code == "INVALID_CONFIG"
    assert info.value.message


def test_produced_ids_are_unique_and_never_reused():
    state = start([(1, FAC, 3, 3), (2, FAC, 5, 5)])
    ids = {1, 2}
    for _ in range(3):
        for pid, fac in ((1, 1), (2, 2)):
            for u in state.units_of(pid):
                if u.combat:
                    state = act(state, pid, u.id, 0, 0)
            free = engine.get_valid_actions(state, pid, fac)[0]
            state = act(state, pid, fac, free["dx"], free["dy"])
            new = {u.id for u in state.units} - ids
            assert len(new) == 1 and min(new) > 2
            ids |= new
            state = engine.end_player_turn(state, pid)
    assert len(ids) == 8


def test_kind_module_contract():
    for name in (
        "config_from_dict",
        "config_to_dict",
        "new_game",
        "add_player",
        "apply_action",
        "end_player_turn",
        "tick",
        "remove_player",
        "get_visible_state",
        "get_valid_actions",
        "get_winner",
        "summary",
        "encode_state",
        "decode_state",
    ):
        assert callable(getattr(cw, name))


def test_a_typed_action_is_told_that_a_cellwar_action_is_a_move():
    """A Life action sent to a CellWar game names what a CellWar action is and what was
    sent, not a missing ``unit_id``."""
    with pytest.raises(GameError) as err:
        engine.apply_action(start([(1, INF, 3, 3), FAR]), 1, {"type": "place", "cells": [[1, 1]]})
    assert err.value.code == "MALFORMED"
    assert err.value.message == (
        "a CellWar game's action is a move {unit_id, dx, dy} (got type 'place': "
        "typed actions are for Life and campaign games)"
    )
