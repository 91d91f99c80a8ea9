"""Scripted pairs of games that differ only in what player 1 cannot see (Life's blind
placement, CellWar's fog of war), for the indistinguishability test over REST and WebSocket
(tests/api/test_indistinguishable.py; docs/architecture/contracts.md "Indistinguishability
over REST and WebSocket").

A pair is played first through the engine library in this process (``engine.decide``),
which checks every step and records the truth (events and states) that the public log
and the replays of the finished game must show. The REST driver then sends the same
commands to the real stack. Each :class:`Step` says whether player 1 can see it:

- ``hidden`` steps differ between the two games of a pair (how many, which, when);
- every other step is *shared*: the same command, in the same place of the shared
  sequence, in both games, so player 1's own commands are identical too.

The first step marked ``reveals`` is where the games may legitimately start to differ
for player 1: the step that finishes the game (then everything is public), or
for a Life pair whose opponents drew different cells, the end of placement (the board is
then visible to all). The test compares everything player 1 receives before it.

CellWar (:func:`cellwar_pair`): an ``8 x 8`` board; player 1's units and player 2's
*shared* units stay in columns ``x <= NEAR_X``, so player 1's vision (radius at most 2)
never reaches column ``FAR_X``; player 2's hidden units (1..3, any type, a factory may
produce) stay in columns ``x >= FAR_X`` and act at random places in player 2's turn.
Player 1 starts with a factory, so its produced infantry's ids would count the enemy's
units if ids were global.

Life (:func:`life_pair`): 2 or 4 players on boards of 8..16 cells; the opponents'
blind placements differ in how they were drawn (one place, cell by cell, extra cells
erased again, a reset and a redraw, stamps). Even seeds: the same final cells, so the
games stay identical after placement; odd seeds: different cells.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import engine
from engine import envelope
from engine.life.zones import zones_for

# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Step:
    """One command of a scripted game.

    Attributes:
        actor: the player sending it (>= 1).
        command: ``"action"``, ``"end_turn"`` or ``"leave"``.
        body: the action (Life: the REST body; CellWar: ``{"dx", "dy"}``, the unit is
            found by ``at``).
        at: CellWar: ``(x, y)`` of the acting unit before it acts (ids are read from the
            actor's own view, so the driver also works where ids are numbered otherwise).
        hidden: player 1 cannot see it (it differs between the games of a pair).
        reveals: from this step on the games may differ for player 1 (module docstring).
    """

    actor: int
    command: str
    body: dict[str, Any] | None = None
    at: tuple[int, int] | None = None
    hidden: bool = False
    reveals: bool = False

    def shared_key(self) -> tuple:
        """What must be equal between the two games for a shared step."""
        return (self.actor, self.command, repr(self.body), self.at, self.reveals)


@dataclass
class Script:
    """One game of a pair: its create body, its steps and the engine's truth.

    Attributes:
        kind, config: the ``POST /game/create`` body.
        players: seats (all joined by the driver, player 1 first).
        steps: the commands after every seat joined.
        events: ``[{"type", "actor", "payload"}]`` of the whole game, as the engine
            service decides it (the public log of the finished game).
        states: the engine state after each event (``states[i]`` after ``events[i]``).
        step_events: for each step, the seq (1-based) of its last event.
        versions: player 1's view version after each event (the engine's envelope:
            the events it observes), which the session must serve as its ``seq``.
    """

    kind: str
    config: dict[str, Any]
    players: int
    steps: list[Step] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)
    step_events: list[int] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    state: Any = None
    envelope: Any = None

    # ------------------------------------------------------------ recording

    def decide(self, command: str, actor: int, payload: dict[str, Any]) -> None:
        """Run a command as the engine service does (``engine.envelope.decide``: a
        removal in one's own CellWar turn is rolled back first) and keep its events.
        Raises GameError."""
        drafts, new, self.envelope = envelope.decide(self.state, self.envelope, command, actor, payload)
        for d in drafts:
            self.events.append({"type": d.type, "actor": d.actor, "payload": d.payload})
            self.states.append(new)  # (the state after the command, for every one of its events)
            self.versions.append(self.envelope.versions[1] if len(self.envelope.versions) > 1 else 0)
        self.state = new

    def start(self) -> None:
        """Create the game and join every seat (player 1 first)."""
        self.envelope = envelope.Envelope()
        self.decide("create", 0, {"kind": self.kind, "config": self.config})
        for p in range(1, self.players + 1):
            self.decide("join", 0, {"name": f"p{p}"})

    def step(self, step: Step, action: dict[str, Any] | None = None) -> None:
        """Run ``step`` (``action``: the full action when the step's body is partial)."""
        if step.command == "action":
            self.decide("action", step.actor, action if action is not None else dict(step.body or {}))
        elif step.command == "end_turn":
            self.decide("end_turn", step.actor, {})
        else:
            self.decide("remove_player", step.actor, {"player_id": step.actor, "reason": "left"})
        self.steps.append(step)
        self.step_events.append(len(self.events))

    def after(self, steps: int) -> tuple[Any, int]:
        """The engine state and player 1's version after the first ``steps`` steps."""
        seq = self.step_events[steps - 1] if steps else self.players + 1
        return self.states[seq - 1], self.versions[seq - 1]

    @property
    def finished(self) -> bool:
        return engine.summary(self.state).finished

    def hidden_steps(self) -> int:
        """How many steps player 1 cannot see."""
        return sum(s.hidden for s in self.steps)

    def shared(self) -> list[tuple]:
        return [s.shared_key() for s in self.steps if not s.hidden]


class Stuck(Exception):
    """A unit had no allowed action in its region, or the hidden part ended the game:
    the seed is skipped."""


def check_pair(a: Script, b: Script) -> None:
    """The two games of a pair send the same shared steps.

    Raises:
        Stuck: they do not (the hidden part changed what player 1 could see, e.g. the
            opponent's last hidden factory died): the seed is not a valid pair.
    """
    if a.shared() != b.shared():
        raise Stuck("the shared steps of the pair differ")


# =========================================================================== CellWar

WIDTH = HEIGHT = 8
#: Player 1's units and player 2's shared units stay at x <= NEAR_X (player 1's vision,
#: radius <= 2, reaches x <= NEAR_X + 2).
NEAR_X = 2
#: Player 2's hidden units stay at x >= FAR_X.
FAR_X = NEAR_X + 3


def _region_ok(unit: Any, kind: str, dx: int, far: bool) -> bool:
    """An action keeps its unit in its region, and a new factory has all its neighbours
    there (so it never produces across the border)."""
    x = unit.x + dx
    if far:
        return x >= FAR_X and (kind != "become_factory" or unit.x - 1 >= FAR_X)
    return x <= NEAR_X and (kind != "become_factory" or unit.x + 1 <= NEAR_X)


def _choose(state: Any, pid: int, unit: Any, rng: random.Random, far: bool) -> dict[str, int]:
    options = [
        a for a in engine.get_valid_actions(state, pid, unit.id) if _region_ok(unit, a["kind"], a["dx"], far)
    ]
    if not options:
        raise Stuck
    attacks = [a for a in options if a["kind"] == "attack"]
    pick = rng.choice(attacks if attacks and rng.random() < 0.7 else options)
    return {"dx": pick["dx"], "dy": pick["dy"]}


def _cellwar_turn(game: Script, pid: int, shared: random.Random, own: random.Random) -> None:
    """One turn of ``pid``: its near units act with choices drawn from ``shared`` (the
    same in both games), its far ones (hidden) with ``own``, interleaved at random
    places (``own``), combat units first, then factories."""
    units = sorted(game.state.units_of(pid), key=lambda u: (not u.combat, u.y, u.x))
    near = [(u.x, u.y) for u in units if u.x <= NEAR_X]
    far = [(u.x, u.y) for u in units if u.x >= FAR_X]
    near_choices = [shared.random() for _ in near]  # drawn up front: the same in both games
    order: list[tuple[str, tuple[int, int], float | None]] = []
    for combat in (True, False):
        n = [(c, r) for c, r in zip(near, near_choices, strict=True) if _at(game, c).combat == combat]
        f = [c for c in far if _at(game, c).combat == combat]
        slots = set(own.sample(range(len(n) + len(f)), len(f)))
        ni = fi = 0
        for i in range(len(n) + len(f)):
            if i in slots:
                order.append(("far", f[fi], None))
                fi += 1
            else:
                order.append(("near", *n[ni]))
                ni += 1
    ids = {c: _at(game, c).id for _, c, _ in order}  # the units as the turn begins
    for where, cell, choice in order:
        if game.finished or game.state.turn != pid:
            return
        unit = game.state.unit(ids[cell])
        if unit is None or unit.acted:
            continue  # destroyed meanwhile (a first hit on a fortification kills the attacker)
        rng = random.Random(choice) if where == "near" else own
        move = _choose(game.state, pid, unit, rng, far=where == "far")
        step = Step(pid, "action", move, at=(unit.x, unit.y), hidden=where == "far")
        game.step(step, {"unit_id": unit.id, **move})
    if not game.finished and game.state.turn == pid:
        game.step(Step(pid, "end_turn"))


def _at(game: Script, cell: tuple[int, int]) -> Any:
    return next(u for u in game.state.units if (u.x, u.y) == cell)


def cellwar_pair(seed: int) -> tuple[Script, Script]:
    """Two CellWar games that differ only in player 2's hidden units (module docstring).

    Raises:
        Stuck: a unit had nothing to do in its region (take the next seed).
    """
    setup = random.Random(seed)
    cells = [(x, y) for x in range(NEAR_X + 1) for y in range(HEIGHT)]
    setup.shuffle(cells)
    factory = (min(cells[0][0], NEAR_X - 1), cells[0][1])
    near = [{"owner": 1, "type": "factory", "x": factory[0], "y": factory[1]}]
    taken = {factory}
    for owner, n in ((1, 1), (2, 1)):
        for x, y in (c for c in cells[1:] if c not in taken):
            kind = setup.choice(["infantry", "infantry", "fortification"])
            near.append({"owner": owner, "type": kind, "x": x, "y": y})
            taken.add((x, y))
            n -= 1
            if not n:
                break
    rounds = setup.choice([1, 1, 1, 2])
    far_cells = [(x, y) for x in range(FAR_X + 1, WIDTH) for y in range(HEIGHT)]
    games = []
    for variant in (0, 1):
        hidden = random.Random(seed * 7919 + variant)
        far = [
            {"owner": 2, "type": hidden.choice(["infantry", "infantry", "fortification", "factory"]), "x": x, "y": y}
            for x, y in hidden.sample(far_cells, hidden.randint(1, 3))
        ]
        game = Script("cellwar", {"width": WIDTH, "height": HEIGHT, "players": 2, "units": near + far}, 2)
        game.start()
        shared = random.Random(seed)
        for _ in range(rounds):
            for pid in (1, 2):
                if not game.finished:
                    _cellwar_turn(game, pid, shared, hidden)
        if game.finished:
            _mark_reveal(game)
        else:  # player 1 leaves at the start of its turn: the game ends, all is public
            game.step(Step(1, "leave", reveals=True))
        games.append(game)
    check_pair(*games)
    return games[0], games[1]


def _mark_reveal(game: Script) -> None:
    """The step that finished the game reveals everything."""
    last = game.steps[-1]
    if last.hidden:
        raise Stuck("a hidden step ended the game")
    game.steps[-1] = Step(last.actor, last.command, last.body, last.at, last.hidden, reveals=True)


def cellwar_rollback_pair(seed: int) -> tuple[Script, Script]:
    """Two 3-player CellWar games in which player 2 leaves during its own turn: in one it
    first moved hidden units (so the turn is rolled back), in the other it moved none;
    its shared unit acts first in both or in neither. Player 3 plays on, then player 1
    leaves (the end).

    Raises:
        Stuck: a unit had nothing to do in its region.
    """
    setup = random.Random(seed)
    cells = [(x, y) for x in range(NEAR_X + 1) for y in range(HEIGHT)]
    setup.shuffle(cells)
    near = []
    for owner, n in ((1, setup.randint(1, 2)), (2, 1), (3, setup.randint(1, 2))):
        for _ in range(n):
            x, y = cells.pop()
            near.append({"owner": owner, "type": setup.choice(["infantry", "fortification"]), "x": x, "y": y})
    far_cells = [(x, y) for x in range(FAR_X, WIDTH) for y in range(HEIGHT)]
    near_first = setup.random() < 0.5
    moving = setup.randrange(2)  # the game whose player 2 moves hidden units before leaving
    games = []
    for variant in (0, 1):
        hidden = random.Random(seed * 7919 + variant)
        far = [
            {"owner": 2, "type": hidden.choice(["infantry", "fortification"]), "x": x, "y": y}
            for x, y in hidden.sample(far_cells, hidden.randint(1, 3))
        ]
        game = Script("cellwar", {"width": WIDTH, "height": HEIGHT, "players": 3, "units": near + far}, 3)
        game.start()
        shared = random.Random(seed)
        _cellwar_turn(game, 1, shared, hidden)
        if game.finished:
            raise Stuck("the game ended before player 2's turn")
        choice = shared.random()
        if near_first:
            unit = next(u for u in game.state.units_of(2) if u.x <= NEAR_X)
            move = _choose(game.state, 2, unit, random.Random(choice), far=False)
            game.step(Step(2, "action", move, at=(unit.x, unit.y)), {"unit_id": unit.id, **move})
        if variant == moving:
            for unit in [u for u in game.state.units_of(2) if u.x >= FAR_X][: hidden.randint(1, 3)]:
                move = _choose(game.state, 2, unit, hidden, far=True)
                game.step(Step(2, "action", move, at=(unit.x, unit.y), hidden=True), {"unit_id": unit.id, **move})
        game.step(Step(2, "leave"))
        if not game.finished:
            _cellwar_turn(game, 3, shared, hidden)
        if game.finished:
            _mark_reveal(game)
        else:
            game.step(Step(1, "leave", reveals=True))
        games.append(game)
    check_pair(*games)
    return games[0], games[1]


def cellwar_pairs(count: int, pair=cellwar_pair) -> list[tuple[int, Script, Script]]:
    """``count`` pairs made by ``pair`` from seeds 1, 2, ... (seeds that get stuck are
    skipped)."""
    out = []
    seed = 0
    while len(out) < count:
        seed += 1
        try:
            out.append((seed, *pair(seed)))
        except Stuck:
            continue
    return out


# =========================================================================== Life


def _sample(zone: tuple[int, int, int, int], rng: random.Random, n: int) -> list[list[int]]:
    x0, y0, x1, y1 = zone
    return rng.sample([[x, y] for y in range(y0, y1) for x in range(x0, x1)], n)


def _draw(game: Script, pid: int, target: list[list[int]], spare: list[list[int]], style: int,
          rng: random.Random, hidden: bool) -> None:
    """Player ``pid`` reaches exactly ``target`` by the drawing ``style``."""

    def act(body: dict[str, Any]) -> None:
        if body.get("cells") == []:
            return  # nothing to draw (the rules refuse an empty place as NO_CHANGE)
        game.step(Step(pid, "action", body, hidden=hidden))

    if style == 0:
        act({"type": "place", "cells": target})
    elif style == 1:  # one cell at a time, in random order
        for cell in rng.sample(target, len(target)):
            act({"type": "place", "cells": [cell]})
    elif style == 2:  # extra cells placed and erased again
        act({"type": "place", "cells": target[: len(target) // 2] + spare})
        act({"type": "erase", "cells": spare})
        act({"type": "place", "cells": target[len(target) // 2 :]})
    elif spare:  # drawn, reset, drawn again
        act({"type": "place", "cells": spare})
        act({"type": "reset_turn"})
        for chunk in (target[:2], target[2:]):
            act({"type": "place", "cells": chunk})
    else:
        act({"type": "place", "cells": target})


def _stamps(game: Script, pid: int, zone: tuple[int, int, int, int], rng: random.Random) -> None:
    """A few stamps somewhere in the zone (those the rules refuse are left out)."""
    x0, y0, x1, y1 = zone
    for _ in range(rng.randint(1, 2)):
        body = {
            "type": "stamp",
            "pattern": rng.choice(["block", "blinker", "glider", "boat"]),
            "x": rng.randrange(x0, x1),
            "y": rng.randrange(y0, y1),
            "rotation": rng.randrange(4),
        }
        try:
            game.step(Step(pid, "action", body, hidden=True))
        except engine.GameError:
            continue


def life_pair(seed: int) -> tuple[Script, Script]:
    """Two Life games whose opponents' blind placements differ (module docstring)."""
    setup = random.Random(seed)
    players = setup.choice([2, 2, 2, 4])
    width, height = setup.choice([8, 10, 12, 16]), setup.choice([8, 10, 12, 16])
    same_cells = seed % 2 == 0
    config = {"width": width, "height": height, "players": players, "budget": 20}
    zones = zones_for(width, height, players)
    n = 3
    targets = {p: _sample(zones[p], setup, n) for p in zones}
    spares = {p: [c for c in _sample(zones[p], setup, n + 2) if c not in targets[p]][:2] for p in zones}
    p1_style = setup.randrange(4)
    speed_by = setup.choice([None, *range(2, players + 1)])
    games = []
    for variant in (0, 1):
        hidden = random.Random(seed * 104729 + variant)
        game = Script("life", config, players)
        game.start()
        _draw(game, 1, targets[1], spares[1], p1_style, random.Random(seed), hidden=False)
        game.step(Step(1, "end_turn"))
        for p in range(2, players + 1):
            if same_cells:
                _draw(game, p, targets[p], spares[p], hidden.randrange(4), hidden, hidden=True)
            else:
                cells = _sample(zones[p], hidden, hidden.randint(1, n))
                _draw(game, p, cells, [c for c in spares[p] if c not in cells], hidden.randrange(4), hidden, True)
                if hidden.random() < 0.5:
                    _stamps(game, p, zones[p], hidden)
            if p == speed_by:  # a public control during placement
                game.step(Step(p, "action", {"type": "speed", "multiplier": 2}))
            game.step(Step(p, "end_turn", reveals=not same_cells and p == players))
        # Running (the test's session does not tick): public controls, then the players
        # resign one by one until one is left.
        if same_cells and seed % 4 == 0:
            game.step(Step(1, "action", {"type": "pause"}))
            game.step(Step(players, "action", {"type": "resume"}))
        for p in range(1, players):
            game.step(Step(p, "action", {"type": "resign"}, reveals=same_cells and p == players - 1))
        assert game.finished
        games.append(game)
    check_pair(*games)
    return games[0], games[1]


def life_pairs(count: int) -> list[tuple[int, Script, Script]]:
    """``count`` pairs from seeds 0, 1, ..."""
    return [(seed, *life_pair(seed)) for seed in range(count)]
