"""Folding runs at once changes nothing (docs/architecture/ticking.md "Replay from
snapshots": runs of placements applied together, runs of ticks as one tick): a Life log
whose players draw cell by cell folds to the same state, hash and envelope (every seat's
version) at once as event by event, and a run that breaks a rule is refused as the first bad
action would be."""

from __future__ import annotations

import random

import pytest

import engine
from engine import envelope
from engine.envelope import Envelope
from engine.errors import GameError
from engine.life import game as life


def drawn_cell_by_cell(seed: int, players: int = 2) -> list[tuple]:
    """A Life log: each player places ~60 single cells (some twice: skipped alive ones,
    a few erasures), then the game runs and is redrawn."""
    rnd = random.Random(seed)
    log: list[tuple] = []
    state = None

    def do(result):
        nonlocal state
        drafts, state = result
        log.extend((d.type, d.actor, d.payload, engine.ENGINE_VERSION) for d in drafts)

    config = {"width": 24, "height": 24, "players": players, "budget": 50}
    do(engine.decide(None, "create", 0, {"kind": "life", "config": config}))
    for i in range(players):
        do(engine.decide(state, "join", 0, {"name": f"p{i}"}))
    for _ in range(3):
        s = engine.summary(state)
        if s.finished:
            break
        if s.phase == "running":
            do(engine.decide_tick(state, rnd.randint(1, 30)))
            continue
        drawing = [s.turn] if s.phase == "placement" else list(range(1, players + 1))
        for pid in drawing:
            x0, y0, x1, y1 = engine.get_visible_state(state, pid)["zone"]
            for k in range(70):
                cells = [[rnd.randrange(x0, x1), rnd.randrange(y0, y1)] for _ in range(rnd.choice([1, 1, 2]))]
                kind = "erase" if k % 17 == 16 else "place"
                try:
                    do(engine.decide(state, "action", pid, {"type": kind, "cells": cells}))
                except GameError:
                    continue
            do(engine.decide(state, "end_turn", pid, {}))
    return log


@pytest.mark.parametrize("seed,players", [(1, 2), (2, 2), (3, 4), (4, 4)])
def test_runs_fold_at_once_as_event_by_event(seed, players):
    log = drawn_cell_by_cell(seed, players)
    assert sum(1 for t, *_ in log if t == "ActionApplied") > 60
    one_by_one, env1 = None, Envelope()
    for seq, (etype, actor, payload, version) in enumerate(log, start=1):
        one_by_one, env1 = envelope.fold(one_by_one, env1, [(seq, etype, actor, payload, version)])
    at_once, env2 = envelope.fold(
        None, Envelope(), [(seq, *e) for seq, e in enumerate(log, start=1)]
    )
    assert engine.encode_state(at_once) == engine.encode_state(one_by_one)
    assert env2 == env1
    assert engine.state_hash(engine.fold(None, log)) == engine.state_hash(one_by_one)


def test_a_run_is_refused_as_its_first_bad_action():
    state = None
    for command, payload in (
        ("create", {"kind": "life", "config": {"width": 16, "height": 16, "budget": 3}}),
        ("join", {"name": "a"}),
        ("join", {"name": "b"}),
    ):
        _, state = engine.decide(state, command, 0, payload)
    actions = [
        {"type": "place", "cells": [[1, 1], [2, 2]]},
        {"type": "place", "cells": [[2, 2]]},  # alive already: NO_CHANGE
    ]
    with pytest.raises(GameError) as run_error:
        life.apply_action_run(state, 1, actions)
    one = engine.apply_action(state, 1, actions[0])
    with pytest.raises(GameError) as single_error:
        engine.apply_action(one, 1, actions[1])
    assert run_error.value.code == single_error.value.code == "NO_CHANGE"
    over = [{"type": "place", "cells": [[1, 1], [2, 2]]}, {"type": "place", "cells": [[3, 3], [4, 4]]}]
    with pytest.raises(GameError) as run_error:
        life.apply_action_run(state, 1, over)
    assert run_error.value.code == "BUDGET_EXCEEDED"
    with pytest.raises(GameError) as run_error:
        life.apply_action_run(state, 2, actions)
    assert run_error.value.code == "NOT_YOUR_TURN"
    # only placements during placement are folded at once
    assert life.apply_action_run(state, 1, [actions[0], {"type": "erase", "cells": [[1, 1]]}]) is None
