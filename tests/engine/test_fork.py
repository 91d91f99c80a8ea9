"""Forks (engine/fork.py; docs/architecture/replay-tools.md "Forks"): a fork at seq n starts in a
state whose hash is the one recorded at n, its seats are free until players take them
over, and it plays on to the end as the original did."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import engine
from cellwar.v1.codes import CommandType, EventType
from engine import envelope
from engine.envelope import Envelope
from engine.errors import GameError
from engine.fork import open_seats, seating_policy, seating_view
from engine.policy import policy
from engine.reenact import recorded, reenact

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
FILES = sorted(LOGS.glob("v*/*.jsonl"))
CURRENT = sorted((LOGS / f"v{engine.ENGINE_VERSION}").glob("*.jsonl"))


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def state_at(events: list[dict], n: int):
    """``(state, envelope)`` right after event ``n``, folded as the engine service does."""
    items = [(e["seq"], e["type"], e["actor"], e["payload"], e["engine_version"]) for e in events[:n]]
    return envelope.fold(None, Envelope(), items)


def fork(events: list[dict], n: int):
    state, env = state_at(events, n)
    return envelope.decide(state, env, CommandType.FORK, 0, {"from_game": "g0", "from_seq": n})


def sample_seqs(events: list[dict]) -> list[int]:
    """Fork points: the first events, every turn end, and a spread of others."""
    n = len(events)
    seqs = {1, 2, 3, n - 1, n} | {e["seq"] for e in events if e["type"] == "TurnEnded"}
    seqs |= set(range(1, n + 1, max(1, n // 12)))
    return sorted(s for s in seqs if 1 <= s <= n)


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_a_fork_at_seq_n_starts_in_the_state_recorded_at_n(path):
    events = read(path)
    for n in sample_seqs(events):
        drafts, state, env = fork(events, n)
        first = drafts[0]
        recorded_hash = events[n - 1]["state_hash"]
        assert first.type == EventType.GAME_FORKED
        assert first.state_hash == recorded_hash, n
        assert first.payload["state_hash"] == recorded_hash
        assert (first.payload["from_game"], first.payload["from_seq"]) == ("g0", n)
        assert engine.state_hash(state) == recorded_hash
        # the fork's log folds on its own (engine.api.fold, as `cellwar verify` does)
        folded = engine.fold(None, [(d.type, d.actor, d.payload) for d in drafts])
        assert engine.state_hash(folded) == recorded_hash
        assert env.seq == len(drafts)
        assert env.open_seats == open_seats(state)


def continuation(events: list[dict], n: int) -> list[dict]:
    """The log of a fork at ``n`` whose seats are taken over under the original names,
    followed by the original events after ``n`` (renumbered; a rollback's ``to_seq``
    moved into the fork's numbering)."""
    drafts, state, env = fork(events, n)
    log = [
        {"seq": i + 1, "type": d.type, "actor": d.actor, "payload": d.payload, "state_hash": d.state_hash, "engine_version": engine.ENGINE_VERSION}
        for i, d in enumerate(drafts)
    ]
    for seat in env.open_seats:
        name = state.players[seat - 1].name
        more, state, env = envelope.decide(state, env, CommandType.JOIN, 0, {"name": name})
        for d in more:
            log.append({"seq": len(log) + 1, "type": d.type, "actor": d.actor, "payload": d.payload, "state_hash": d.state_hash, "engine_version": engine.ENGINE_VERSION})
    shift = len(log) - n
    for e in events[n:]:
        e = dict(e, seq=e["seq"] + shift)
        if e["type"] == "RolledBack":
            assert e["payload"]["to_seq"] >= n  # the turn it rolls back began in the fork
            e["payload"] = dict(e["payload"], to_seq=e["payload"]["to_seq"] + shift)
        log.append(e)
    return log


@pytest.mark.parametrize("path", CURRENT, ids=[p.stem for p in CURRENT])
def test_a_fork_taken_over_by_its_players_plays_on_to_the_recorded_end(path):
    """Seats taken over under the same names change nothing, so the original's remaining
    commands, decided again in the fork, give the original's hashes to the end."""
    events = read(path)
    points = [e["seq"] for e in events if e["type"] == "TurnEnded"][:3] or [len(events) // 2]
    for n in points:
        log = continuation(events, n)
        done = reenact(recorded(log))
        assert done.finished
        assert engine.state_hash(done.state) == events[-1]["state_hash"]


def cellwar_game():
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 1, "type": "infantry", "x": 1, "y": 0},
        {"owner": 2, "type": "infantry", "x": 6, "y": 6},
        {"owner": 2, "type": "infantry", "x": 7, "y": 6},
    ]
    create = {"kind": "cellwar", "config": {"width": 8, "height": 8, "players": 2, "units": units}}
    log, state, env = [], None, Envelope()
    for command, actor, payload in [
        (CommandType.CREATE, 0, create),
        (CommandType.JOIN, 0, {"name": "alice"}),
        (CommandType.JOIN, 0, {"name": "bob"}),
    ]:
        drafts, state, env = envelope.decide(state, env, command, actor, payload)
        log.extend(drafts)
    return log, state, env


def test_a_fork_waits_for_every_seat_before_anything_moves():
    _, state, env = cellwar_game()
    drafts, forked, fenv = envelope.decide(state, env, CommandType.FORK, 0, {"from_game": "g", "from_seq": 3})
    assert fenv.open_seats == (1, 2)
    unit = next(u.id for u in forked.units if u.owner == 1)
    with pytest.raises(GameError) as info:
        envelope.decide(forked, fenv, CommandType.ACTION, 1, {"unit_id": unit, "dx": 0, "dy": 1})
    assert info.value.code == "WRONG_PHASE"
    with pytest.raises(GameError):
        envelope.decide(forked, fenv, CommandType.END_TURN, 1, {})
    assert envelope.tick(forked, fenv, 8)[0] == []
    joined, forked, fenv = envelope.decide(forked, fenv, CommandType.JOIN, 0, {"name": "carol"})
    assert [(d.type, d.payload) for d in joined] == [("PlayerJoined", {"player_id": 1, "name": "carol"})]
    assert fenv.open_seats == (2,)
    assert forked.players[0].name == "carol"
    assert forked.units == state.units  # only the name changed
    joined, forked, fenv = envelope.decide(forked, fenv, CommandType.JOIN, 0, {"name": "dave"})
    assert joined[0].payload == {"player_id": 2, "name": "dave"} and fenv.open_seats == ()
    with pytest.raises(GameError) as info:
        envelope.decide(forked, fenv, CommandType.JOIN, 0, {"name": "eve"})
    assert info.value.code == "GAME_FULL"
    moved, forked, fenv = envelope.decide(forked, fenv, CommandType.ACTION, 1, {"unit_id": unit, "dx": 0, "dy": 1})
    assert moved[0].type == "ActionApplied"


def test_free_seats_stop_ticking_and_show_as_waiting():
    _, state, _ = cellwar_game()
    p = seating_policy(policy(state), (1, 2))
    assert not p.ticking and p.active_players == ()
    view = seating_view(engine.get_visible_state(state, 1), (2,))
    assert view["phase"] == "waiting" and view["open_seats"] == [2]
    assert seating_view({"phase": "playing"}, ()) == {"phase": "playing"}


def test_a_fork_of_a_finished_state_is_finished_at_once():
    events = read(LOGS / f"v{engine.ENGINE_VERSION}" / "life-resign.jsonl")
    drafts, state, env = fork(events, len(events))
    assert [d.type for d in drafts] == ["GameForked", "GameFinished"]
    assert env.open_seats == ()
    assert engine.summary(state).finished


def test_a_forked_state_that_does_not_match_its_hash_does_not_fold():
    events = read(LOGS / f"v{engine.ENGINE_VERSION}" / "life-torus.jsonl")
    drafts, _, _ = fork(events, 12)
    payload = dict(drafts[0].payload)
    other, _ = state_at(events, 13)
    payload["state"] = base64.b64encode(engine.encode_state(other)).decode()
    with pytest.raises(GameError) as info:
        engine.apply_event(None, "GameForked", 0, payload)
    assert info.value.code == "MALFORMED"
    with pytest.raises(GameError):
        engine.apply_event(other, "GameForked", 0, drafts[0].payload)  # only first


def test_a_cellwar_fork_keeps_the_fog_in_its_players_logs():
    _, state, env = cellwar_game()
    drafts, forked, fenv = envelope.decide(state, env, CommandType.FORK, 0, {"from_game": "g", "from_seq": 3})
    log = [{"seq": 1, "type": d.type, "actor": d.actor, "payload": d.payload, "state_hash": d.state_hash, "engine_version": engine.ENGINE_VERSION} for d in drafts]
    for name in ("a", "b"):
        more, forked, fenv = envelope.decide(forked, fenv, CommandType.JOIN, 0, {"name": name})
        log += [{"seq": len(log) + 1, "type": d.type, "actor": d.actor, "payload": d.payload, "state_hash": d.state_hash, "engine_version": engine.ENGINE_VERSION} for d in more]
    items = engine.player_log(log, 2)
    first = items[0]
    assert first["type"] == "GameForked"
    assert "state" not in first["payload"] and "state_hash" not in first["payload"]
    assert all(u["owner"] == 2 for u in first["payload"]["config"].get("units", []))
    assert [i["type"] for i in items] == ["GameForked", "PlayerJoined", "PlayerJoined"]
    assert policy(forked).log_private  # a running CellWar fork's log is private like any
