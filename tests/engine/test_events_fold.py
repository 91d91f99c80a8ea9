"""Commands become events and events fold back into the same states, bit for bit
(docs/architecture/contracts.md "Commands and events")."""

from __future__ import annotations

import base64

import pytest

import engine
from engine.errors import GameError

BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]
BLINKER = [[0, 0], [1, 0], [2, 0]]


def shift(cells, dx, dy):
    return [[x + dx, y + dy] for x, y in cells]


class Recorder:
    """Runs commands through :func:`engine.decide` and keeps every draft."""

    def __init__(self):
        self.state = None
        self.drafts: list[engine.EventDraft] = []
        self.states: list = []

    def _keep(self, drafts, state):
        self.drafts.extend(drafts)
        self.states.extend([state] * len(drafts))
        self.state = state
        return drafts

    def cmd(self, command_type, actor=0, **payload):
        return self._keep(*engine.decide(self.state, command_type, actor, payload))

    def tick(self, n):
        return self._keep(*engine.decide_tick(self.state, n))


def play_small_game() -> Recorder:
    rec = Recorder()
    rec.cmd("create", kind="life", config={"width": 16, "height": 16, "budget": 12})
    rec.cmd("join", name="alice")
    rec.cmd("join", name="bob")
    rec.cmd("action", 1, type="place", cells=shift(BLINKER, 2, 3))
    rec.cmd("action", 1, type="stamp", rle="2o$2o!", x=2, y=10, rotation=1)
    rec.cmd("end_turn", 1)
    rec.cmd("action", 2, type="place", cells=shift(BLOCK, 12, 3))
    rec.cmd("action", 2, type="erase", cells=[[12, 3]])
    rec.cmd("action", 2, type="reset_turn")
    rec.cmd("action", 2, type="place", cells=shift(BLOCK, 12, 3))
    rec.cmd("end_turn", 2)
    rec.cmd("action", 2, type="speed", multiplier=4)
    rec.cmd("action", 1, type="pause")
    assert rec.tick(8) == []  # paused: nothing runs, nothing recorded
    rec.cmd("action", 2, type="resume")
    rec.tick(1)
    rec.tick(8)  # blinker repeats at generation 2: redraw
    assert rec.state.phase == "redraw"
    rec.cmd("action", 2, type="place", cells=[[14, 12], [14, 13]])  # they die
    rec.cmd("end_turn", 1)
    rec.cmd("end_turn", 2)
    assert rec.state.phase == "running"
    for _ in range(20):
        if rec.state.phase != "running":
            break
        rec.tick(8)
    assert rec.state.phase == "redraw"
    rec.cmd("end_turn", 2)
    rec.cmd("end_turn", 1)  # nobody placed: the game ends by score
    assert rec.state.phase == "finished"
    return rec


def test_decide_records_the_expected_events():
    rec = play_small_game()
    types = [d.type for d in rec.drafts]
    assert types[:3] == ["GameCreated", "PlayerJoined", "PlayerJoined"]
    assert "ControlChanged" in types and "GenerationsTicked" in types
    assert types[-2:] == ["TurnEnded", "GameFinished"]
    assert rec.drafts[-1].payload == {"winner": 1, "result": "win"}  # 7 red against 4 green
    assert rec.drafts[1].payload == {"player_id": 1, "name": "alice"}
    ticked = [d.payload["count"] for d in rec.drafts if d.type == "GenerationsTicked"]
    assert sum(ticked) == rec.state.generation
    assert all(n > 0 for n in ticked)


def test_fold_from_scratch_reproduces_every_hash():
    rec = play_small_game()
    state = None
    for draft, expected in zip(rec.drafts, rec.states, strict=True):
        state = engine.apply_event(state, draft.type, draft.actor, draft.payload)
        assert engine.state_hash(state) == draft.state_hash == engine.state_hash(expected)
    events = [(d.type, d.actor, d.payload) for d in rec.drafts]
    final = engine.fold(None, events)
    assert engine.state_hash(final) == rec.drafts[-1].state_hash
    assert final == rec.state


def test_fold_from_a_snapshot_in_the_middle():
    rec = play_small_game()
    k = len(rec.drafts) // 2
    snapshot = engine.decode_state(engine.encode_state(rec.states[k - 1]))
    rest = [(d.type, d.actor, d.payload) for d in rec.drafts[k:]]
    assert engine.state_hash(engine.fold(snapshot, rest)) == rec.drafts[-1].state_hash


def test_rolled_back_event_restores_the_encoded_state():
    rec = play_small_game()
    earlier = rec.states[5]
    payload = {"to_seq": 6, "state": base64.b64encode(engine.encode_state(earlier)).decode()}
    assert engine.apply_event(rec.state, "RolledBack", 0, payload) == earlier


def test_encode_decode_round_trip_for_every_state():
    rec = play_small_game()
    for state in rec.states:
        data = engine.encode_state(state)
        back = engine.decode_state(data)
        assert back == state
        assert engine.encode_state(back) == data


def test_decode_refuses_foreign_bytes():
    for data in (b"", b"CWS1", b"hello world", b"CWS1\x04life" + b"\x00\x00\x00\x05{oops"):
        with pytest.raises(GameError) as err:
            engine.decode_state(data)
        assert err.value.code == "MALFORMED"


def test_refused_command_raises_and_records_nothing():
    rec = Recorder()
    rec.cmd("create", kind="life", config={"width": 16, "height": 16})
    rec.cmd("join", name="alice")
    rec.cmd("join", name="bob")
    before = (len(rec.drafts), engine.state_hash(rec.state))
    for command_type, actor, payload, code in [
        ("action", 2, {"type": "place", "cells": [[12, 0]]}, "NOT_YOUR_TURN"),
        ("action", 1, {"type": "place", "cells": [[12, 0]]}, "OUT_OF_ZONE"),
        ("end_turn", 2, {}, "NOT_YOUR_TURN"),
        ("join", 0, {"name": "carol"}, "GAME_FULL"),
        ("action", 1, {"type": "fly"}, "MALFORMED"),
        ("teleport", 1, {}, "MALFORMED"),
    ]:
        with pytest.raises(GameError) as err:
            rec.cmd(command_type, actor, **payload)
        assert err.value.code == code
    assert (len(rec.drafts), engine.state_hash(rec.state)) == before
    with pytest.raises(GameError) as err:
        engine.decide(None, "create", 0, {"kind": "life", "config": {"width": 3}})
    assert err.value.code == "INVALID_CONFIG"


def test_created_event_carries_the_normalised_config():
    drafts, _ = engine.decide(None, "create", 0, {"kind": "life", "config": {"players": 4}})
    assert drafts[0].payload == {
        "kind": "life",
        "config": {
            "width": 60,
            "height": 60,
            "players": 4,
            "budget": 100,
            "torus": False,
            "max_generations": 5000,
        },
    }


def test_folding_merged_tick_events_equals_folding_them_one_by_one():
    """fold() sums runs of GenerationsTicked into one tick; the state is the same as
    applying each event alone, and equals the recorded hash."""
    import numpy as np

    config = {"kind": "life", "config": {"width": 40, "height": 40, "budget": 400}}
    _, state = engine.decide(None, "create", 0, config)
    for name in ("a", "b"):
        _, state = engine.decide(state, "join", 0, {"name": name})
    rng = np.random.default_rng(7)
    for pid, x0 in ((1, 0), (2, 20)):
        cells = sorted({(x0 + int(x), int(y)) for x, y in zip(rng.integers(0, 20, 300), rng.integers(0, 40, 300), strict=True)})
        _, state = engine.decide(state, "action", pid, {"type": "place", "cells": [list(c) for c in cells]})
        _, state = engine.decide(state, "end_turn", pid, {})
    start = state
    drafts = []
    for count in (1, 3, 1, 7, 2, 11):
        new_drafts, state = engine.decide_tick(state, count)
        drafts += new_drafts
    ticks = [d for d in drafts if d.type == "GenerationsTicked"]
    assert len(ticks) >= 3, "the game must keep running for the test to mean something"
    events = [(d.type, d.actor, d.payload) for d in drafts]
    merged = engine.fold(start, events)
    one_by_one = start
    for etype, actor, payload in events:
        one_by_one = engine.apply_event(one_by_one, etype, actor, payload)
    assert engine.state_hash(merged) == engine.state_hash(one_by_one) == drafts[-1].state_hash
    assert engine.summary(merged).generation == engine.summary(start).generation + sum(d.payload["count"] for d in ticks)


@pytest.mark.parametrize(
    ("payload", "code", "words"),
    [
        ({"config": "x"}, "MALFORMED", "GameCreated without kind"),
        ({}, "MALFORMED", "GameCreated without kind and config"),
        ({"kind": ["life"], "config": {}}, "INVALID_CONFIG", "the game kind must be a string"),
        ({"kind": "life", "config": "x"}, "INVALID_CONFIG", "config must be a JSON object"),
    ],
)
def test_a_game_created_that_names_no_game_is_a_game_error_not_a_crash(payload, code, words):
    from engine.api import apply_event

    with pytest.raises(GameError) as err:
        apply_event(None, "GameCreated", 0, payload)
    assert err.value.code == code and words in err.value.message


def test_a_remove_player_command_with_a_malformed_payload_is_refused():
    from cellwar.v1.codes import CommandType
    from engine import envelope

    drafts, state, env = envelope.decide(None, envelope.Envelope(), CommandType.CREATE, 0, {"kind": "life"})
    for payload in ({"player_id": "x"}, {"player_id": [1]}, {"player_id": True}, {"player_id": 1, "reason": 5}):
        with pytest.raises(GameError) as err:
            envelope.decide(state, env, CommandType.REMOVE_PLAYER, 0, payload)
        assert err.value.code == "MALFORMED" and "integer player_id and a string reason" in err.value.message


@pytest.mark.parametrize(
    ("etype", "payload", "words"),
    [
        ("PlayerJoined", {}, "PlayerJoined needs name as str"),
        ("ActionApplied", {"action": [1]}, "ActionApplied needs action as Mapping"),
        ("GenerationsTicked", {"count": "135"}, "GenerationsTicked needs count as int, got '135'"),
        ("GenerationsTicked", {"count": True}, "needs count as int, got True"),
        ("PlayerRemoved", {"player_id": "2"}, "PlayerRemoved needs player_id as int, got '2'"),
        ("PlayerRemoved", {"player_id": 2.0}, "needs player_id as int"),
        ("PlayerRemoved", {"reason": "left"}, "needs player_id as int, got None"),
        ("RolledBack", {"state": "x"}, "RolledBack's state is not base64"),
    ],
)
def test_a_recorded_event_with_a_malformed_payload_folds_to_a_game_error(etype, payload, words):
    """verify and show fold what a file says: a field of the wrong type is MALFORMED,
    never a KeyError/TypeError, nor silently converted ("2" taken as player 2)."""
    from engine.api import apply_event, fold

    created = apply_event(None, "GameCreated", 0, {"kind": "life", "config": {}})
    joined = apply_event(apply_event(created, "PlayerJoined", 0, {"name": "a"}), "PlayerJoined", 0, {"name": "b"})
    with pytest.raises(GameError) as err:
        apply_event(joined, etype, 1, payload)
    assert err.value.code == "MALFORMED" and words in err.value.message
    if etype in ("GenerationsTicked", "ActionApplied"):  # the run paths of a whole fold too
        with pytest.raises(GameError) as err:
            fold(joined, [(etype, 1, payload), (etype, 1, payload)])
        assert err.value.code == "MALFORMED"
