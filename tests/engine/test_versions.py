"""Engine versions (engine/versions.py; docs/architecture/engine-versions.md): each event
folds under the version that recorded it, a game's state carries its rules version, decide
always uses the current one, version-1 states keep their bytes."""

from __future__ import annotations

import pytest

import engine
from engine import versions
from engine.api import rules_version, upgrade

BLOCK = [[1, 1], [2, 1], [1, 2], [2, 2]]
LIFE = {"kind": "life", "config": {"width": 16, "height": 16}}


def created(version=None, payload=LIFE):
    return engine.apply_event(None, "GameCreated", 0, payload, engine_version=version)


def test_game_created_fixes_the_rules_version():
    assert rules_version(created("1")) == "1"
    assert rules_version(created("2")) == "2"
    assert rules_version(created()) == engine.ENGINE_VERSION == versions.VERSIONS[-1]


@pytest.mark.parametrize("payload", [LIFE, {"kind": "campaign", "config": {"level": 2}},
                                     {"kind": "cellwar", "config": {"players": 3}}])
def test_version_1_states_keep_their_bytes_and_every_state_round_trips(payload):
    old, new = created("1", payload), created("2", payload)
    assert b'"rules"' not in engine.encode_state(old)
    assert b'"rules":"2"' in engine.encode_state(new)
    for state in (old, new):
        back = engine.decode_state(engine.encode_state(state))
        assert rules_version(back) == rules_version(state)
        assert engine.encode_state(back) == engine.encode_state(state)


def test_unknown_versions_and_versions_going_down_are_refused():
    with pytest.raises(engine.GameError) as err:
        created("9")
    assert err.value.code == "MALFORMED" and "'9'" in err.value.message
    new = engine.apply_event(created("2"), "PlayerJoined", 0, {"name": "a"}, engine_version="2")
    with pytest.raises(engine.GameError) as err:
        engine.apply_event(new, "PlayerJoined", 0, {"name": "b"}, engine_version="1")
    assert err.value.code == "MALFORMED" and "never go down" in err.value.message
    forged = engine.encode_state(created("2")).replace(b'"rules":"2"', b'"rules":"9"')
    with pytest.raises(engine.GameError) as err:
        engine.decode_state(forged)
    assert err.value.code == "MALFORMED"


def test_a_later_event_of_a_newer_version_upgrades_the_state():
    state = created("1")
    state = engine.apply_event(state, "PlayerJoined", 0, {"name": "a"}, engine_version="1")
    assert rules_version(state) == "1"
    state = engine.apply_event(state, "PlayerJoined", 0, {"name": "b"}, engine_version="2")
    assert rules_version(state) == "2"
    assert upgrade(state, "2") is state


def test_decide_uses_the_current_version_and_records_it():
    state = created("1")
    for name in ("a", "b"):
        state = engine.apply_event(state, "PlayerJoined", 0, {"name": name}, engine_version="1")
    state = engine.apply_event(state, "ActionApplied", 1, {"action": {"type": "place", "cells": BLOCK}},
                               engine_version="1")
    # version 1 recorded this no-op; the current rules refuse it
    again = {"action": {"type": "place", "cells": BLOCK}}
    assert engine.state_hash(engine.apply_event(state, "ActionApplied", 1, again, engine_version="1")) == \
        engine.state_hash(state)
    with pytest.raises(engine.GameError) as err:
        engine.decide(state, "action", 1, again["action"])
    assert err.value.code == "NO_CHANGE"
    drafts, new = engine.decide(state, "end_turn", 1, {})
    assert rules_version(new) == engine.ENGINE_VERSION
    folded = engine.apply_event(state, "TurnEnded", 1, {}, engine_version=engine.ENGINE_VERSION)
    assert engine.state_hash(folded) == drafts[0].state_hash


def test_decide_tick_that_runs_nothing_leaves_an_old_state_as_it_is():
    state = created("1")
    assert engine.decide_tick(state, 8) == ([], state)


def test_fold_takes_versioned_and_plain_events_and_flushes_ticks_at_a_version_change():
    plain = [("GameCreated", 0, LIFE), ("PlayerJoined", 0, {"name": "a"}), ("PlayerJoined", 0, {"name": "b"})]
    assert rules_version(engine.fold(None, plain)) == engine.ENGINE_VERSION
    run = [
        ("GameCreated", 0, LIFE, "1"),
        ("PlayerJoined", 0, {"name": "a"}, "1"),
        ("PlayerJoined", 0, {"name": "b"}, "1"),
        ("ActionApplied", 1, {"action": {"type": "place", "cells": [[1, 1], [2, 1], [3, 1]]}}, "1"),
        ("TurnEnded", 1, {}, "1"),
        ("ActionApplied", 2, {"action": {"type": "place", "cells": [[12, 5], [12, 6], [12, 7]]}}, "1"),
        ("TurnEnded", 2, {}, "1"),
        ("GenerationsTicked", 0, {"count": 1}, "1"),
        ("GenerationsTicked", 0, {"count": 1}, "2"),
    ]
    state = None
    for e in run:
        state = engine.apply_event(state, *e[:3], engine_version=e[3])
    folded = engine.fold(None, run)
    assert engine.state_hash(folded) == engine.state_hash(state)
    assert rules_version(folded) == "2" and folded.phase == "redraw"  # two blinkers: period 2
