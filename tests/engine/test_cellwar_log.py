"""A player's fog-filtered CellWar log (engine/cellwar/log.py; docs/architecture/contracts.md): the
events it observes, numbered in its own sequence (``seq`` 1..k, ``log_seq`` the real seq)."""

from __future__ import annotations

import base64
import json

import pytest

import engine
from engine.cellwar.fog import rle_to_mask
from engine.cellwar.log import player_log

INF = "infantry"

#: 12x12, 3 players. p1: a unit at (2, 2). p2: units at (5, 2) and (10, 10).
#: p3: a unit at (4, 3) (sees x 3..5, y 2..4). Ids are drawn per owner (engine/cellwar/ids.py).
UNITS = [
    {"owner": 1, "type": INF, "x": 2, "y": 2},
    {"owner": 2, "type": INF, "x": 5, "y": 2},
    {"owner": 2, "type": INF, "x": 10, "y": 10},
    {"owner": 3, "type": INF, "x": 4, "y": 3},
]
CONFIG = {"width": 12, "height": 12, "players": 3, "units": UNITS}


def record(commands, state=None, events=None):
    """Run commands through engine.decide; return the log (JSON-clean dicts) and state."""
    events = [] if events is None else events
    for ctype, actor, payload in commands:
        if ctype == "move":  # ("move", pid, (x, y, dx, dy)): the unit on (x, y)
            x, y, dx, dy = payload
            ctype, payload = "action", {"unit_id": unit_at(state, x, y), "dx": dx, "dy": dy}
        drafts, state = engine.decide(state, ctype, actor, payload)
        for d in drafts:
            events.append(
                json.loads(
                    json.dumps(
                        {
                            "seq": len(events) + 1,
                            "type": d.type,
                            "actor": d.actor,
                            "payload": d.payload,
                            "state_hash": d.state_hash,
                        }
                    )
                )
            )
    return events, state


def unit_at(state, x, y):
    return next(u.id for u in state.units if (u.x, u.y) == (x, y))


def move(pid, x, y, dx, dy):
    return ("move", pid, (x, y, dx, dy))


@pytest.fixture
def game():
    """seq 1 GameCreated, 2-4 PlayerJoined; p1: 5 move (2, 2) right to (3, 2), 6 TurnEnded;
    p2: 7 fortify at (5, 2), 8 move (10, 10) left (fog), 9 TurnEnded; p3: 10 attacks
    (3, 2) from (4, 3), killing p1's last unit (GameFinished? no: p2 and p3 left)."""
    return record(
        [
            ("create", 0, {"kind": "cellwar", "config": CONFIG}),
            ("join", 0, {"name": "a"}),
            ("join", 0, {"name": "b"}),
            ("join", 0, {"name": "c"}),
            move(1, 2, 2, 1, 0),
            ("end_turn", 1, {}),
            move(2, 5, 2, 0, 0),
            move(2, 10, 10, -1, 0),
            ("end_turn", 2, {}),
            move(3, 4, 3, -1, -1),
        ]
    )


def by_seq(log):
    """The filtered log by real seq (``log_seq``)."""
    return {e["log_seq"]: e for e in log}


def test_items_are_numbered_in_the_readers_own_sequence(game):
    events, _ = game
    for pid, real in ((1, [1, 2, 3, 4, 5, 6, 9, 10]), (2, [1, 2, 3, 4, 6, 7, 8, 9, 10]),
                      (3, [1, 2, 3, 4, 5, 6, 7, 9, 10])):
        log = player_log(events, pid)
        assert [e["log_seq"] for e in log] == real
        assert [e["seq"] for e in log] == list(range(1, len(real) + 1))


def test_public_events_and_own_actions_are_seen_in_full_without_hashes(game):
    events, _ = game
    log = by_seq(player_log(events, 2))
    assert [log[s]["type"] for s in (1, 2, 3, 4, 6, 9)] == [
        "GameCreated",
        "PlayerJoined",
        "PlayerJoined",
        "PlayerJoined",
        "TurnEnded",
        "TurnEnded",
    ]
    assert log[1]["payload"] == {
        "kind": "cellwar",
        "config": {**events[0]["payload"]["config"], "units": [UNITS[1], UNITS[2]]},
    }
    # p2's units have ids 2 and 5: its n-th unit is n * 3 players + 2
    assert log[7]["payload"] == {"action": {"unit_id": 2, "dx": 0, "dy": 0}}
    assert log[8]["payload"] == {"action": {"unit_id": 5, "dx": -1, "dy": 0}}
    assert all("state_hash" not in e for e in log.values())
    assert set(log[7]) == {"seq", "log_seq", "type", "actor", "payload"}


def test_an_action_in_the_fog_is_left_out(game):
    events, _ = game
    assert 5 not in by_seq(player_log(events, 2))  # p1's move: p2 sees x 4..6 only
    assert 8 not in by_seq(player_log(events, 1))  # p2's unit 3 far away
    assert 8 not in by_seq(player_log(events, 3))


def test_only_the_visible_cells_of_another_players_action_are_told(game):
    events, _ = game
    p3 = by_seq(player_log(events, 3))
    # p1 moved (2, 2) -> (3, 2): p3 at (4, 3) sees (3, 2) but not (2, 2)
    assert p3[5] == {"seq": 5, "log_seq": 5, "type": "ActionApplied", "actor": 1,
                     "payload": {"action": {"dx": 1, "dy": 0}, "to": [3, 2]}}
    # p2 fortified at (5, 2): start and target visible to p3
    assert p3[7]["payload"] == {"action": {"dx": 0, "dy": 0}, "from": [5, 2], "to": [5, 2]}


def test_an_attack_that_kills_the_watcher_is_seen_by_it(game):
    events, state = game
    assert events[9]["type"] == "ActionApplied"
    assert engine.get_visible_state(state, 1)["players"][0]["out"] is True
    p1 = by_seq(player_log(events, 1))
    assert p1[10]["payload"] == {"action": {"dx": -1, "dy": -1}, "from": [4, 3], "to": [3, 2]}


def fold(events):
    """The state after ``events``."""
    state = None
    for e in events:
        state = engine.apply_event(state, e["type"], e["actor"], e["payload"])
    return state


def rolled_back(events, to_seq):
    """A ``RolledBack`` event to the state after ``to_seq`` (as the engine plans one)."""
    start = fold(events[:to_seq])
    return {
        "seq": len(events) + 1,
        "type": "RolledBack",
        "actor": 0,
        "payload": {"to_seq": to_seq, "state": base64.b64encode(engine.encode_state(start)).decode()},
        "state_hash": engine.state_hash(start),
    }, start


def test_rolled_back_loses_its_state_and_removals_are_public(game):
    events, _ = game
    back, start = rolled_back(events, 9)  # undoes p3's attack: p1 is back in the game
    events, final = record(
        [("remove_player", 0, {"player_id": 2, "reason": "disconnected"})],
        start,
        events + [back],
    )
    assert [e["type"] for e in events[-2:]] == ["RolledBack", "PlayerRemoved"]
    log = by_seq(player_log(events, 3))
    # p3 observed 8 events up to seq 9 (not p2's move in the fog): to_seq in its numbering
    assert log[11] == {"seq": 10, "log_seq": 11, "type": "RolledBack", "actor": 0,
                       "payload": {"to_seq": 8}}
    assert log[12]["payload"] == {"player_id": 2, "reason": "disconnected"}
    assert engine.get_visible_state(final, 1)["players"][0]["out"] is False


def test_a_rollback_of_moves_a_player_never_saw_is_hidden_from_it():
    """p2 moves its far unit in the fog, then leaves in its own turn: the RolledBack that
    undoes the move is not in p1's or p3's log, which read exactly as when p2 leaves
    before moving (a public rollback would tell that p2 had acted)."""
    start = [
        ("create", 0, {"kind": "cellwar", "config": CONFIG}),
        ("join", 0, {"name": "a"}),
        ("join", 0, {"name": "b"}),
        ("join", 0, {"name": "c"}),
        move(1, 2, 2, 1, 0),
        ("end_turn", 1, {}),
    ]
    leave = [("remove_player", 2, {"player_id": 2, "reason": "left"})]
    at_once, _ = record(start + leave)
    moved, _ = record([*start, move(2, 10, 10, -1, 0)])
    back, anchor = rolled_back(moved, 6)
    moved, _ = record(leave, anchor, moved + [back])
    assert [e["type"] for e in moved[-3:]] == ["ActionApplied", "RolledBack", "PlayerRemoved"]
    assert [e["type"] for e in at_once[-1:]] == ["PlayerRemoved"]
    for pid in (1, 3):
        def told(events, pid=pid):
            return [{k: v for k, v in e.items() if k != "log_seq"} for e in player_log(events, pid)]

        assert told(moved) == told(at_once)
        assert "RolledBack" not in [e["type"] for e in player_log(moved, pid)]
    assert "RolledBack" in [e["type"] for e in player_log(moved, 2)]  # its own moves undone


def test_every_told_cell_was_visible_to_the_reader_and_no_foreign_unit_id_leaks(game):
    events, _ = game
    for pid in (1, 2, 3):
        states = [None]
        for e in events:
            states.append(engine.apply_event(states[-1], e["type"], e["actor"], e["payload"]))
        for entry in player_log(events, pid):
            if entry["type"] != "ActionApplied" or entry["actor"] == pid:
                continue
            assert "unit_id" not in entry["payload"]["action"]
            seen = set()
            for st in (states[entry["log_seq"] - 1], states[entry["log_seq"]]):
                view = engine.get_visible_state(st, pid)
                w = view["width"]
                mask = rle_to_mask(view["visible"], w, view["height"])
                seen |= {(i % w, i // w) for i in range(w * view["height"]) if mask >> i & 1}
            cells = [tuple(entry["payload"][k]) for k in ("from", "to") if k in entry["payload"]]
            assert cells and all(c in seen for c in cells)


def test_game_created_tells_each_player_only_its_own_start_units(game):
    events, _ = game
    config = events[0]["payload"]["config"]
    assert len(config["units"]) == 4  # the recorded event keeps the whole start
    for pid, own in ((1, [UNITS[0]]), (2, [UNITS[1], UNITS[2]]), (3, [UNITS[3]])):
        created = player_log(events, pid)[0]
        assert created["type"] == "GameCreated"
        assert created["payload"] == {
            "kind": "cellwar",
            "config": {
                "width": 12,
                "height": 12,
                "players": 3,
                "units": own,
                "disconnect_timeout_s": config["disconnect_timeout_s"],
            },
        }
    assert player_log(events, 9)[0]["payload"]["config"]["units"] == []  # no seat: none


def test_a_log_of_another_kind_goes_to_its_own_rule():
    events, _ = record(
        [
            ("create", 0, {"kind": "life", "config": {"width": 20, "height": 20}}),
            ("join", 0, {"name": "a"}),
        ]
    )
    # Life in waiting: nothing hidden, but a filtered log carries no hash
    expected = [{"log_seq": e["seq"], **{k: e[k] for k in ("seq", "type", "actor", "payload")}}
                for e in events]
    assert player_log(events, 1) == expected == engine.player_log(events, 1)


def test_a_log_must_start_with_game_created(game):
    events, _ = game
    with pytest.raises(engine.GameError) as err:
        player_log(events[1:], 1)
    assert err.value.code == "MALFORMED"
    assert player_log([], 1) == []
