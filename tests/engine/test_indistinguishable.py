"""Indistinguishability (docs/architecture/contracts.md, engine level): two
games that differ only in what player 1 cannot see give player 1 identical sequences of
(version, view JSON) and identical filtered logs (``player_log`` of the whole log, without
``log_seq``, which the session strips).

- CellWar: player 2 has, besides the units player 1 may meet (x <= 5), hidden units on
  the far side (x >= 8, beyond the reach of any vision of player 1's units, which stay at
  x <= 5) that differ between the two games: how many, where, which type (a factory
  produces), and when in player 2's turn they act. Player 1 starts with a factory, so the
  ids of its produced infantry would tell a count of the enemy's units if ids were global.
- Life: the opponents' blind placements reach the same cells by different actions (one
  place, or chunks, extra cells erased again, a reset and a redraw, a stamp), so the
  games are the same from the end of placement on, but the number and timing of the
  hidden drawing events differ.

A game that ends makes everything public, so a CellWar pair is compared up
to the event that finishes it. The same check on the rules of engine version 1 and the
numbering of the old filtered logs (global seqs) tells the games apart
(:func:`test_the_check_tells_the_games_apart_under_the_old_rules`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import engine
from engine.api import observers
from engine.life.zones import zones_for

PAIRS = 200


# =========================================================================== recording


@dataclass
class Game:
    """A game played through the engine library, event by event, under ``rules``."""

    rules: str
    state: Any = None
    events: list[dict] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)  # states[i] = after events[i]

    def record(self, etype: str, actor: int, payload: dict, new: Any) -> None:
        self.events.append(
            {
                "seq": len(self.events) + 1,
                "type": etype,
                "actor": actor,
                "payload": json.loads(json.dumps(payload)),
                "engine_version": self.rules,
            }
        )
        self.states.append(new)
        self.state = new

    def create(self, kind: str, config: dict) -> None:
        cfg = engine.config_from_dict(kind, config)
        new = engine.new_game(cfg, engine_version=self.rules)
        self.record("GameCreated", 0, {"kind": kind, "config": engine.api.rules_for(kind).config_to_dict(cfg)}, new)

    def join(self, name: str) -> None:
        new = engine.add_player(self.state, name)
        pid = engine.summary(new).players_joined
        self.record("PlayerJoined", pid, {"player_id": pid, "name": name}, new)

    def act(self, pid: int, action: dict) -> None:
        new = engine.apply_action(self.state, pid, action)
        etype = "ControlChanged" if action.get("type") in engine.CONTROL_ACTIONS else "ActionApplied"
        self.record(etype, pid, {"action": action}, new)
        self._finish()

    def end_turn(self, pid: int) -> None:
        self.record("TurnEnded", pid, {}, engine.end_player_turn(self.state, pid))
        self._finish()

    def tick(self, n: int) -> None:
        new = engine.tick(self.state, n)
        ran = engine.summary(new).generation - engine.summary(self.state).generation
        if ran > 0 or engine.summary(new).phase != engine.summary(self.state).phase:
            self.record("GenerationsTicked", 0, {"count": ran}, new)
            self._finish()

    def _finish(self) -> None:
        if engine.summary(self.state).finished and self.events[-1]["type"] != "GameFinished":
            view = engine.get_visible_state(self.state, None)
            self.record("GameFinished", 0, {"winner": view["winner"], "result": view["result"]}, self.state)


def seen_by(game: Game, pid: int, *, old_numbering: bool = False) -> tuple[list, list]:
    """What player ``pid`` receives: ``[(version, view JSON)]`` at each event it observes,
    and its filtered log without ``log_seq``, both up to the event that ends the game
    (then everything is public). ``old_numbering``: the version is the game's seq and the
    log is numbered by it (engine version 1 and the session before per-player versions)."""
    frames = []
    version = 0
    before = None
    end = next((i for i, s in enumerate(game.states) if engine.summary(s).finished), len(game.states))
    for event, after in zip(game.events[:end], game.states[:end], strict=True):
        if pid in observers(before, event["type"], event["actor"], event["payload"], after):
            version = event["seq"] if old_numbering else version + 1
            frames.append((version, json.dumps(engine.get_visible_state(after, pid), sort_keys=True)))
        before = after
    log = engine.player_log(game.events[:end], pid)
    if old_numbering:
        log = [{**e, "seq": e["log_seq"]} for e in log]
    return frames, [{k: v for k, v in e.items() if k != "log_seq"} for e in log]


# =========================================================================== CellWar

WIDTH, HEIGHT = 16, 10
NEAR_X = 5  # player 1 and player 2's visible units stay at x <= NEAR_X (vision reaches x <= 7)
FAR_X = 8  # player 2's hidden units stay at x >= FAR_X


class Stuck(Exception):
    """A unit had no allowed action (its region is full): the seed is skipped."""


def _region_ok(unit: Any, kind: str, dx: int, dy: int, far: bool) -> bool:
    """An action keeps its unit in its region, and a new factory has all its neighbours
    there (so it is never forced to produce across the border)."""
    x = unit.x + dx
    if far:
        if x < FAR_X:
            return False
        return kind != "become_factory" or unit.x - 1 >= FAR_X
    if x > NEAR_X:
        return False
    return kind != "become_factory" or unit.x + 1 <= NEAR_X


def _choose(game: Game, pid: int, unit_id: int, rng: random.Random, far: bool) -> dict:
    unit = game.state.unit(unit_id)
    options = [
        a for a in engine.get_valid_actions(game.state, pid, unit_id)
        if _region_ok(unit, a["kind"], a["dx"], a["dy"], far)
    ]
    if not options:
        raise Stuck
    attacks = [a for a in options if a["kind"] == "attack"]
    pick = rng.choice(attacks if attacks and rng.random() < 0.7 else options)
    return {"unit_id": unit_id, "dx": pick["dx"], "dy": pick["dy"]}


def _turn_plan(game: Game, pid: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(near, far)`` cells of the player's units at the start of its turn, combat units
    first (by cell), then factories (the rules: factories act after combat units)."""
    units = sorted(game.state.units_of(pid), key=lambda u: (not u.combat, u.y, u.x))
    near = [(u.x, u.y) for u in units if u.x <= NEAR_X]
    far = [(u.x, u.y) for u in units if u.x >= FAR_X]
    return near, far


def _unit_at(game: Game, x: int, y: int) -> Any:
    return next((u for u in game.state.units if (u.x, u.y) == (x, y)), None)


def _play_turn(game: Game, pid: int, shared: random.Random, own: random.Random) -> None:
    """One turn: the near units act with choices from ``shared`` (the same in both games),
    the far ones with ``own``, interleaved at random (``own``) within combat units and
    within factories."""
    near, far = _turn_plan(game, pid)
    near_units = [_unit_at(game, *c) for c in near]
    far_units = [_unit_at(game, *c) for c in far]
    near_choices = [shared.random() for _ in near_units]  # drawn up front: same in both games
    phases = []
    for combat in (True, False):
        n = [(u, c) for u, c in zip(near_units, near_choices, strict=True) if u.combat == combat]
        f = [u for u in far_units if u.combat == combat]
        slots = sorted(own.sample(range(len(n) + len(f)), len(f)))
        order, ni, fi = [], 0, 0
        for i in range(len(n) + len(f)):
            if fi < len(slots) and slots[fi] == i:
                order.append(("far", f[fi], None))
                fi += 1
            else:
                order.append(("near", *n[ni]))
                ni += 1
        phases.extend(order)
    for where, unit, choice in phases:
        if game.state.phase != "playing" or game.state.turn != pid:
            return
        live = game.state.unit(unit.id)
        if live is None or live.acted:
            continue  # destroyed meanwhile (a 1st hit on a fortification kills the attacker)
        rng = random.Random(choice) if where == "near" else own
        game.act(pid, _choose(game, pid, unit.id, rng, far=where == "far"))
    if game.state.phase == "playing" and game.state.turn == pid:
        game.end_turn(pid)


def cellwar_pair(seed: int, rules: str = engine.ENGINE_VERSION) -> tuple[Game, Game]:
    """Two CellWar games that differ only in player 2's hidden units (module docstring)."""
    setup = random.Random(seed)
    cells = [(x, y) for x in range(NEAR_X + 1) for y in range(HEIGHT)]
    setup.shuffle(cells)
    near = [{"owner": 1, "type": "factory", "x": min(cells[0][0], NEAR_X - 1), "y": cells[0][1]}]
    taken = {(near[0]["x"], near[0]["y"])}
    for owner, n in ((1, setup.randint(1, 3)), (2, setup.randint(1, 3))):
        for x, y in (c for c in cells[1:] if c not in taken):
            near.append({"owner": owner, "type": setup.choice(["infantry", "infantry", "fortification"]), "x": x, "y": y})
            taken.add((x, y))
            n -= 1
            if not n:
                break
    far_cells = [(x, y) for x in range(FAR_X + 1, WIDTH) for y in range(HEIGHT)]
    games = []
    for variant in (0, 1):
        hidden = random.Random(seed * 7919 + variant)
        far = []
        for x, y in hidden.sample(far_cells, hidden.randint(1, 3)):
            kind = hidden.choice(["infantry", "infantry", "fortification", "factory"])
            far.append({"owner": 2, "type": kind, "x": x, "y": y})
        game = Game(rules)
        game.create("cellwar", {"width": WIDTH, "height": HEIGHT, "units": near + far})
        game.join("one")
        game.join("two")
        shared = random.Random(seed)
        for _ in range(6):  # rounds
            for pid in (1, 2):
                if game.state.phase == "playing":
                    _play_turn(game, pid, shared, hidden)
        games.append(game)
    return games[0], games[1]


def _cellwar_pairs(rules: str = engine.ENGINE_VERSION, count: int = PAIRS):
    seed = 0
    done = 0
    while done < count:
        seed += 1
        try:
            yield seed, cellwar_pair(seed, rules)
        except Stuck:
            continue
        done += 1


def test_cellwar_hidden_units_are_invisible_to_player_one():
    produced = differ = 0
    for seed, (a, b) in _cellwar_pairs():
        assert seen_by(a, 1) == seen_by(b, 1), f"seed {seed}"
        differ += len(a.events) != len(b.events)
        produced += a.state.issued[0] > sum(u.owner == 1 for u in a.state.config.units)
    assert differ > PAIRS // 2  # the hidden units took different numbers of actions
    assert produced > PAIRS // 4  # player 1's factory produced in many games


# =========================================================================== Life


def _cells_in(zone: tuple[int, int, int, int], rng: random.Random, n: int) -> list[list[int]]:
    x0, y0, x1, y1 = zone
    every = [[x, y] for y in range(y0, y1) for x in range(x0, x1)]
    return rng.sample(every, n)


def _draw(game: Game, pid: int, target: list[list[int]], spare: list[list[int]], style: int, rng: random.Random) -> None:
    """Player ``pid`` reaches exactly ``target`` in its zone by the drawing ``style``."""
    if style == 0:
        game.act(pid, {"type": "place", "cells": target})
        return
    if style == 1:  # one cell at a time, in random order
        for cell in rng.sample(target, len(target)):
            game.act(pid, {"type": "place", "cells": [cell]})
        return
    if style == 2:  # extra cells placed and erased again
        game.act(pid, {"type": "place", "cells": target[: len(target) // 2] + spare})
        game.act(pid, {"type": "erase", "cells": spare})
        game.act(pid, {"type": "place", "cells": target[len(target) // 2 :]})
        return
    # style 3: drawn, reset, drawn again
    game.act(pid, {"type": "place", "cells": spare})
    game.act(pid, {"type": "reset_turn"})
    for chunk in (target[:2], target[2:]):
        game.act(pid, {"type": "place", "cells": chunk})


def life_pair(seed: int, rules: str = engine.ENGINE_VERSION) -> tuple[Game, Game]:
    """Two Life games whose opponents' blind placements differ only in how they were drawn."""
    setup = random.Random(seed)
    players = setup.choice([2, 4])
    config = {"width": 16, "height": 16, "players": players, "budget": 40, "max_generations": 60}
    zones = zones_for(16, 16, players)
    targets = {p: _cells_in(zones[p], setup, 8) for p in range(1, players + 1)}
    spares = {p: [c for c in _cells_in(zones[p], setup, 12) if c not in targets[p]][:3] for p in targets}
    p1_style = setup.randrange(4)
    speed_after = setup.randrange(1, players + 1)
    resign = setup.choice([None, *range(2, players + 1)]) if players == 4 else None
    ticks = [setup.randint(1, 8) for _ in range(8)]
    games = []
    for variant in (0, 1):
        hidden = random.Random(seed * 104729 + variant)
        game = Game(rules)
        game.create("life", config)
        for p in range(1, players + 1):
            game.join(f"p{p}")
        for p in range(1, players + 1):
            if p == 1:
                _draw(game, 1, targets[1], spares[1], p1_style, random.Random(seed))
            else:
                _draw(game, p, targets[p], spares[p], hidden.randrange(4), hidden)
            if p == speed_after:
                game.act(p, {"type": "speed", "multiplier": 2})
            if p == resign:
                game.act(p, {"type": "resign"})
            else:
                game.end_turn(p)
        for n in ticks:
            if game.state.phase == "running":
                game.tick(n)
        games.append(game)
    return games[0], games[1]


def test_life_blind_placements_are_invisible_to_player_one():
    differ = 0
    for seed in range(PAIRS):
        a, b = life_pair(seed)
        differ += len(a.events) != len(b.events)
        assert engine.state_hash(a.state) == engine.state_hash(b.state)  # the same game after placement
        assert seen_by(a, 1) == seen_by(b, 1), f"seed {seed}"
    assert differ > PAIRS // 2  # the hidden drawing took different numbers of events


# =========================================================================== the old rules


def test_the_check_tells_the_games_apart_under_the_old_rules():
    """Engine version 1's global unit ids, and views and filtered logs numbered by the
    game's seq (the session before per-player versions), give player 1 different messages."""
    ids_differ = numbering_differs = 0
    for _, (a, b) in _cellwar_pairs(rules="1", count=40):
        ids_differ += seen_by(a, 1)[0] != seen_by(b, 1)[0]
        numbering_differs += seen_by(a, 1, old_numbering=True) != seen_by(b, 1, old_numbering=True)
    assert ids_differ > 10 and numbering_differs > 30
    life_differs = sum(
        seen_by(a, 1, old_numbering=True) != seen_by(b, 1, old_numbering=True)
        for a, b in (life_pair(seed, rules="1") for seed in range(40))
    )
    assert life_differs > 20


def _probe(state: Any) -> list:
    """What player 1 learns from every command it could send now: for each unit id up to
    a bound and each vector, the error (code, message) or its view after the action, and
    each id's ``valid_actions``."""
    out = []
    for unit_id in range(0, 16):
        out.append(json.dumps(engine.get_valid_actions(state, 1, unit_id or None), sort_keys=True))
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                try:
                    after = engine.apply_action(state, 1, {"unit_id": unit_id, "dx": dx, "dy": dy})
                except engine.GameError as exc:
                    out.append((exc.code, exc.message))
                else:
                    out.append(json.dumps(engine.get_visible_state(after, 1), sort_keys=True))
    try:
        out.append(json.dumps(engine.get_visible_state(engine.end_player_turn(state, 1), 1), sort_keys=True))
    except engine.GameError as exc:
        out.append((exc.code, exc.message))
    return out


def test_cellwar_errors_and_valid_actions_tell_nothing_hidden():
    """At the start of each of player 1's turns, every command it could send (any unit id,
    any vector, ``valid_actions``, ``end_turn``) answers the same in both games."""
    for seed, (a, b) in _cellwar_pairs(count=30):
        def starts(game: Game) -> list:
            return [s for e, s in zip(game.events, game.states, strict=True)
                    if e["type"] == "TurnEnded" and e["actor"] == 2 and s.turn == 1]

        pairs = list(zip(starts(a), starts(b), strict=True))
        assert pairs, seed
        for sa, sb in pairs:
            assert _probe(sa) == _probe(sb), f"seed {seed}"
