"""CellWar unit ids drawn per owner (engine/cellwar/ids.py: ids must not count
hidden units), and the numbering engine version 1 keeps for its logs."""

from __future__ import annotations

import engine
from engine.cellwar.ids import start_ids

INF, FAC = "infantry", "factory"


def game(units, players=2, width=10, height=10, version=None):
    spec = [{"owner": o, "type": t, "x": x, "y": y} for o, t, x, y in units]
    config = engine.config_from_dict("cellwar", {"width": width, "height": height, "players": players, "units": spec})
    state = engine.new_game(config, engine_version=version)
    for p in range(1, players + 1):
        state = engine.add_player(state, f"p{p}")
    return state


def own_ids(state, pid):
    return sorted(u.id for u in state.units if u.owner == pid)


def produce(state, pid, fac_cell):
    """``pid``'s factory on ``fac_cell`` produces on its first free neighbour (its combat
    units fortify or stand first)."""
    for u in state.units_of(pid):
        if u.combat and not u.acted:
            state = engine.apply_action(state, pid, {"unit_id": u.id, "dx": 0, "dy": 0})
    fac = next(u for u in state.units if (u.x, u.y) == fac_cell)
    free = engine.get_valid_actions(state, pid, fac.id)[0]
    return engine.apply_action(state, pid, {"unit_id": fac.id, "dx": free["dx"], "dy": free["dy"]})


def test_produced_id_does_not_count_hidden_enemy_units():
    """The issue's case: player 1's factory produces; the enemy has one hidden unit, or
    three. Version 1 gave ids 3 and 5 (they follow the config's length); now both games
    give player 1 the same id."""
    one = game([(1, FAC, 1, 1), (2, INF, 9, 9)])
    three = game([(1, FAC, 1, 1), (2, INF, 9, 9), (2, INF, 8, 9), (2, INF, 9, 8)])
    a, b = produce(one, 1, (1, 1)), produce(three, 1, (1, 1))
    assert own_ids(a, 1) == own_ids(b, 1) == [1, 3]  # the factory, then 1 * 2 players + 1
    old_one = produce(game([(1, FAC, 1, 1), (2, INF, 9, 9)], version="1"), 1, (1, 1))
    old_three = produce(
        game([(1, FAC, 1, 1), (2, INF, 9, 9), (2, INF, 8, 9), (2, INF, 9, 8)], version="1"), 1, (1, 1)
    )
    assert own_ids(old_one, 1) == [1, 3] and own_ids(old_three, 1) == [1, 5]


def test_start_ids_do_not_depend_on_where_the_config_lists_enemy_units():
    mine = [(1, INF, 0, 0), (1, FAC, 1, 1)]
    theirs = [(2, INF, 9, 9), (2, INF, 8, 8), (2, INF, 7, 7)]
    first, last = game(mine + theirs), game(theirs + mine)
    assert own_ids(first, 1) == own_ids(last, 1) == [1, 3]
    assert engine.get_visible_state(first, 1)["units"] == engine.get_visible_state(last, 1)["units"]


def test_ids_are_owner_plus_a_multiple_of_the_seats():
    state = game([(1, INF, 0, 0), (2, INF, 9, 9), (3, INF, 0, 9), (2, INF, 8, 9), (1, INF, 1, 0)], players=3)
    assert {u.id: u.owner for u in state.units} == {1: 1, 2: 2, 3: 3, 5: 2, 4: 1}
    ids, issued = start_ids(state.config, "2")
    assert ids == (1, 2, 3, 5, 4) and issued == (2, 2, 1)
    assert start_ids(state.config, "1") == ((1, 2, 3, 4, 5), ())


def test_default_start_ids():
    state = engine.new_game(engine.config_from_dict("cellwar", {"players": 3}))
    assert sorted((u.owner, u.id) for u in state.units) == [(1, 1), (1, 4), (2, 2), (2, 5), (3, 3), (3, 6)]


def test_produced_ids_continue_each_owners_sequence_and_are_never_reused():
    state = game([(1, FAC, 1, 1), (2, FAC, 8, 8)])
    seen = {u.id for u in state.units}
    for turn in range(6):
        pid = 1 + turn % 2
        cell = (1, 1) if pid == 1 else (8, 8)
        before = {u.id for u in state.units}
        state = produce(state, pid, cell)
        (new,) = {u.id for u in state.units} - before
        assert new % 2 == pid % 2 and new not in seen  # owner p: ids = p mod players
        seen.add(new)
        state = engine.end_player_turn(state, pid)
    assert state.issued[0] >= 3 and state.issued[1] >= 3


def test_a_version_1_game_upgraded_mid_game_never_reuses_an_id():
    """A game of engine version 1 goes on under version 2 (``decide`` upgrades it): new
    ids start above every id version 1 could have issued; the mixed log folds back."""
    old = game([(1, FAC, 1, 1), (1, INF, 3, 3), (2, INF, 8, 8), (2, FAC, 6, 6)], version="1")
    old = engine.end_player_turn(produce(old, 1, (1, 1)), 1)  # v1 id 4 + 0 * 2 + 1 = 5
    assert engine.api.rules_version(old) == "1" and 5 in {u.id for u in old.units}
    drafts, new = engine.decide(old, "action", 2, {"unit_id": 3, "dx": 0, "dy": 0})
    drafts, new = engine.decide(new, "action", 2, {"unit_id": 4, "dx": -1, "dy": 0})
    assert engine.api.rules_version(new) == engine.ENGINE_VERSION
    made = {u.id for u in new.units} - {u.id for u in old.units}
    assert len(made) == 1 and min(made) > max(u.id for u in old.units)
    assert [d.type for d in drafts] == ["ActionApplied"]


def test_fold_of_a_mixed_log_checks_every_hash():
    """A log whose first events are version 1 and later ones version 2 folds event by
    event to the recorded hashes (each event under its own version)."""
    units = [{"owner": 1, "type": FAC, "x": 1, "y": 1}, {"owner": 2, "type": INF, "x": 8, "y": 8}]
    cfg = {"kind": "cellwar", "config": {"width": 10, "height": 10, "units": units}}
    log = []
    state = engine.apply_event(None, "GameCreated", 0, cfg, engine_version="1")
    log.append(("GameCreated", 0, cfg, "1", engine.state_hash(state)))
    for name in ("a", "b"):
        state = engine.apply_event(state, "PlayerJoined", 0, {"name": name}, engine_version="1")
        log.append(("PlayerJoined", 0, {"name": name}, "1", engine.state_hash(state)))
    def at(x, y):
        return next(u.id for u in state.units if (u.x, u.y) == (x, y))

    for ctype, actor, payload in (
        ("action", 1, lambda: {"unit_id": at(1, 1), "dx": 1, "dy": 0}),  # produces on (2, 1)
        ("end_turn", 1, dict),
        ("action", 2, lambda: {"unit_id": at(8, 8), "dx": -1, "dy": 0}),
        ("end_turn", 2, dict),
        ("action", 1, lambda: {"unit_id": at(2, 1), "dx": 0, "dy": 0}),
        ("action", 1, lambda: {"unit_id": at(1, 1), "dx": 0, "dy": 1}),  # produces on (1, 2)
    ):
        drafts, state = engine.decide(state, ctype, actor, payload())
        for d in drafts:
            log.append((d.type, d.actor, d.payload, engine.ENGINE_VERSION, d.state_hash))
    folded = None
    for etype, actor, payload, version, recorded in log:
        folded = engine.apply_event(folded, etype, actor, payload, engine_version=version)
        assert engine.state_hash(folded) == recorded
    assert engine.state_hash(engine.fold(None, [e[:4] for e in log])) == log[-1][4]
    produced = sorted(u.id for u in folded.units if u.owner == 1)
    # the game switched to version 2 at its first decided action: ids above v1's (3, 5, ...)
    assert produced[0] == 1 and len(produced) == 3 and produced[1] > 3
    assert engine.api.rules_version(folded) == engine.ENGINE_VERSION
