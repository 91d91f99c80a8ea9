"""CellWar properties over seeded random bot games (2–4 players, 8x8..16x16) and
Hypothesis-drawn start positions: fog never leaks, every finished game has exactly one
winner, encode/decode round-trips, states are values, decide/fold agree, and an action
is accepted exactly when get_valid_actions lists it."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import GameError
from engine.cellwar.fog import rle_to_mask

RADIUS = {"infantry": 1, "fortification": 2, "factory": 1}
MAX_ROUNDS = 200


def vision(state, pid):
    """Independent reimplementation: cells within Chebyshev radius of pid's units."""
    w, h = state.width, state.height
    cells = set()
    for u in state.units:
        if u.owner == pid:
            r = RADIUS[u.type]
            cells |= {
                (x, y)
                for x in range(max(0, u.x - r), min(w, u.x + r + 1))
                for y in range(max(0, u.y - r), min(h, u.y + r + 1))
            }
    return cells


def view_cells(view):
    w, h = view["width"], view["height"]
    mask = rle_to_mask(view["visible"], w, h)
    return {(x, y) for y in range(h) for x in range(w) if mask >> (y * w + x) & 1}


def check_views(state, memory):
    """Every player's view shows exactly the units on the cells it sees now."""
    everything = {(x, y) for x in range(state.width) for y in range(state.height)}
    for p in state.players:
        view = engine.get_visible_state(state, p.id)
        cells = view_cells(view)
        if state.phase == "finished":
            expected = everything
        elif p.id == state.turn:
            expected = memory | vision(state, p.id)
        else:
            expected = vision(state, p.id)
        assert cells == expected, (p.id, state.turn)
        for u in view["units"]:
            assert (u["x"], u["y"]) in cells
            if u["owner"] != p.id and state.phase != "finished":
                assert u["id"] is None and u["acted"] is None
        shown = sorted((u["owner"], u["type"], u["x"], u["y"]) for u in view["units"])
        truth = sorted((u.owner, u.type, u.x, u.y) for u in state.units if (u.x, u.y) in cells)
        assert shown == truth
        for other in view["players"]:
            if other["id"] != p.id and state.phase != "finished":
                assert other["units"] is None and other["cells"] is None


def check_valid_actions_exact(state):
    """apply_action succeeds exactly for the listed (unit, dx, dy) of the current player."""
    pid = state.turn
    listed = {(a["unit_id"], a["dx"], a["dy"]) for a in engine.get_valid_actions(state, pid)}
    for u in state.units_of(pid):
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                try:
                    engine.apply_action(state, pid, {"unit_id": u.id, "dx": dx, "dy": dy})
                    ok = True
                except GameError as exc:
                    assert exc.code in {"INVALID_ACTION", "UNIT_ALREADY_ACTED", "UNITS_NOT_DONE"}
                    ok = False
                assert ok == ((u.id, dx, dy) in listed), (u, dx, dy)


BUILD = {"fortify", "stand", "become_factory", "produce"}


def choose(state, actions, rng, build_until=0):
    """A bot that builds (stays, produces) until round ``build_until``, then turns
    aggressive: attacks, else closes in on the nearest enemy; sometimes random."""
    if rng.random() < 0.15:
        return rng.choice(actions)
    if state.round <= build_until and rng.random() < 0.85:
        build = [a for a in actions if a["kind"] in BUILD]
        if build:
            return rng.choice(build)
    attacks = [a for a in actions if a["kind"] == "attack"]
    if attacks:
        return rng.choice(attacks)
    pid = state.turn
    enemies = [(u.x, u.y) for u in state.units if u.owner != pid]

    def distance(a):
        u = state.unit(a["unit_id"])
        x, y = u.x + a["dx"], u.y + a["dy"]
        return min(max(abs(x - ex), abs(y - ey)) for ex, ey in enemies)

    scored = [(distance(a), a) for a in actions]
    best = min(d for d, _ in scored)
    return rng.choice([a for d, a in scored if d == best])


def play(config_dict, seed, *, exhaustive_every=0, removals=True):
    """Play a bot game through engine.decide; check the invariants after every step."""
    rng = random.Random(seed)
    build_until = rng.choice([0, 0, 6, 15])
    events = []
    drafts, state = engine.decide(None, "create", 0, {"kind": "cellwar", "config": config_dict})
    events += drafts
    for i in range(state.config.players):
        drafts, state = engine.decide(state, "join", 0, {"name": f"bot{i + 1}"})
        events += drafts
    memory = vision(state, state.turn) if state.phase == "playing" else set()
    steps = 0
    while state.phase == "playing" and state.round <= MAX_ROUNDS:
        before = engine.encode_state(state)
        prev = (state.turn, state.round)
        pid = state.turn
        if removals and rng.random() < 0.001:
            victim = rng.choice(state.active_ids())
            drafts, new = engine.decide(
                state, "remove_player", 0, {"player_id": victim, "reason": "left"}
            )
        else:
            actions = engine.get_valid_actions(state, pid)
            if actions:
                a = choose(state, actions, rng, build_until)
                cmd = {"unit_id": a["unit_id"], "dx": a["dx"], "dy": a["dy"]}
                drafts, new = engine.decide(state, "action", pid, cmd)
            else:
                drafts, new = engine.decide(state, "end_turn", pid, {})
        events += drafts
        assert engine.encode_state(state) == before  # the old state is unchanged
        state = new
        if new.phase == "playing":
            if (new.turn, new.round) != prev:
                memory = vision(new, new.turn)
            else:
                memory |= vision(new, new.turn)
        check_views(state, memory)
        if exhaustive_every and steps % exhaustive_every == 0 and state.phase == "playing":
            check_valid_actions_exact(state)
        if steps % 7 == 0:
            assert engine.decode_state(engine.encode_state(state)) == state
        steps += 1
    assert engine.decode_state(engine.encode_state(state)) == state
    folded = engine.fold(None, [(d.type, d.actor, d.payload) for d in events])
    assert engine.state_hash(folded) == engine.state_hash(state) == events[-1].state_hash
    if state.phase == "finished":
        winner = engine.get_winner(state)
        owners = {u.owner for u in state.units}
        assert winner is not None and owners == {winner}
        assert [p.id for p in state.players if not p.out] == [winner]
        assert events[-1].type == "GameFinished" and events[-1].payload == {
            "winner": winner,
            "result": "win",
        }
        assert sum(d.type == "GameFinished" for d in events) == 1
    return state


GAMES = [
    ({"width": 8 + (seed * 5) % 9, "height": 8 + (seed * 3) % 9, "players": 2 + seed % 3}, seed)
    for seed in range(24)
]


@pytest.mark.parametrize(("config", "seed"), GAMES)
def test_bot_games(config, seed):
    state = play(config, seed, exhaustive_every=9)
    assert state.phase == "finished"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    width=st.integers(4, 8),
    height=st.integers(4, 8),
    players=st.integers(2, 4),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_start_positions(width, height, players, data, seed):
    cells = data.draw(
        st.lists(
            st.tuples(st.integers(0, width - 1), st.integers(0, height - 1)),
            min_size=players,
            max_size=min(3 * players, width * height),
            unique=True,
        )
    )
    types = data.draw(
        st.lists(
            st.sampled_from(["infantry", "fortification", "factory"]),
            min_size=len(cells),
            max_size=len(cells),
        )
    )
    units = []
    for i, ((x, y), t) in enumerate(zip(cells, types, strict=True)):
        owner = i + 1 if i < players else data.draw(st.integers(1, players))
        unit = {"owner": owner, "type": t, "x": x, "y": y}
        if t == "fortification":
            unit["standing"] = data.draw(st.integers(1, 3))
        units.append(unit)
    config = {"width": width, "height": height, "players": players, "units": units}
    play(config, seed, exhaustive_every=3, removals=False)
