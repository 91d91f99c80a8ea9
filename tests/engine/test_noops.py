"""Commands that change nothing are refused with one code, ``NO_CHANGE``
(docs/architecture/contracts.md "No-op commands"; engine version 2), and nothing is
recorded; engine version 1 accepted them as events that changed nothing, and those still
fold."""

from __future__ import annotations

import pytest

import engine
from engine.errors import NO_CHANGE, GameError

BLOCK = [[1, 1], [2, 1], [1, 2], [2, 2]]


def life(version=None, **config):
    state = engine.new_game(
        engine.config_from_dict("life", {"width": 16, "height": 16, "budget": 20, **config}),
        engine_version=version,
    )
    for name in ("a", "b"):
        state = engine.add_player(state, name)
    return state


def redraw(version=None):
    """Both players placed a block; the board is stable: redraw, player 1 has drawn once."""
    state = engine.apply_action(life(version), 1, {"type": "place", "cells": BLOCK})
    state = engine.end_player_turn(state, 1)
    state = engine.apply_action(state, 2, {"type": "place", "cells": [[x + 10, y] for x, y in BLOCK]})
    state = engine.tick(engine.end_player_turn(state, 2), 5)
    assert state.phase == "redraw"
    return state


def campaign(version=None):
    state = engine.new_game(engine.config_from_dict("campaign", {"level": 1}), engine_version=version)
    return engine.add_player(state, "solo")


#: (name, state factory, command type, actor, payload)
NOOPS = [
    ("place on own live cells", lambda v: engine.apply_action(life(v), 1, {"type": "place", "cells": BLOCK}),
     "action", 1, {"type": "place", "cells": BLOCK}),
    ("place no cell", life, "action", 1, {"type": "place", "cells": []}),
    ("place on another colour's live cells (redraw)", redraw,
     "action", 2, {"type": "place", "cells": [[x + 10, y] for x, y in BLOCK][:2]}),
    ("erase an empty cell", life, "action", 1, {"type": "erase", "cells": [[3, 3]]}),
    ("stamp on live cells only", lambda v: engine.apply_action(life(v), 1, {"type": "place", "cells": BLOCK}),
     "action", 1, {"type": "stamp", "pattern": "block", "x": 1, "y": 1, "rotation": 0}),
    ("stamp a pattern without a live cell", life, "action", 1, {"type": "stamp", "rle": "x = 3, y = 1\n3b!", "x": 0, "y": 0}),
    ("reset_turn with nothing drawn", life, "action", 1, {"type": "reset_turn"}),
    ("speed to the speed it has", life, "action", 2, {"type": "speed", "multiplier": 1}),
    ("propose_finish twice", lambda v: engine.apply_action(life(v), 1, {"type": "propose_finish"}),
     "action", 1, {"type": "propose_finish"}),
    ("end_turn when ready already", lambda v: engine.end_player_turn(redraw(v), 1), "end_turn", 1, {}),
    ("campaign restart right after joining", campaign, "action", 1, {"type": "restart"}),
    ("campaign place on enemy cells", campaign, "action", 1, {"type": "place", "cells": [[9, 9], [10, 10]]}),
    ("campaign erase enemy cells", campaign, "action", 1, {"type": "erase", "cells": [[9, 9]]}),
]


@pytest.mark.parametrize("name, make, ctype, actor, payload", NOOPS, ids=[n[0] for n in NOOPS])
def test_a_no_op_is_refused_with_no_change_and_recorded_nowhere(name, make, ctype, actor, payload):
    state = make(None)
    before = engine.encode_state(state)
    with pytest.raises(GameError) as err:
        engine.decide(state, ctype, actor, payload)
    assert err.value.code == NO_CHANGE, err.value
    assert engine.encode_state(state) == before


#: Version 1 refused these already (``INVALID_ACTION``), so no log holds them.
REFUSED_BY_V1 = {"stamp on live cells only", "stamp a pattern without a live cell"}
RECORDED_BY_V1 = [n for n in NOOPS if n[0] not in REFUSED_BY_V1]


@pytest.mark.parametrize("name, make, ctype, actor, payload", RECORDED_BY_V1, ids=[n[0] for n in RECORDED_BY_V1])
def test_a_version_1_no_op_event_still_folds_to_the_same_state(name, make, ctype, actor, payload):
    """What engine version 1 recorded: the event folds under version 1 and changes nothing."""
    state = make("1")
    etype = {"action": "ControlChanged" if payload.get("type") == "speed" else "ActionApplied",
             "end_turn": "TurnEnded"}[ctype]
    event_payload = {"action": payload} if ctype == "action" else {}
    after = engine.apply_event(state, etype, actor, event_payload, engine_version="1")
    assert engine.state_hash(after) == engine.state_hash(state)


def test_removing_a_player_already_out_is_no_change():
    state = life()
    drafts, state = engine.decide(state, "remove_player", 0, {"player_id": 2, "reason": "left"})
    assert [d.type for d in drafts] == ["PlayerRemoved", "GameFinished"]
    cw = engine.new_game(engine.config_from_dict("cellwar", {"players": 3}))
    for name in "abc":
        cw = engine.add_player(cw, name)
    _, cw = engine.decide(cw, "remove_player", 0, {"player_id": 3, "reason": "left"})
    with pytest.raises(GameError) as err:
        engine.decide(cw, "remove_player", 0, {"player_id": 3, "reason": "left"})
    assert err.value.code == NO_CHANGE


def test_a_command_that_changes_something_is_still_applied():
    state = engine.apply_action(life(), 1, {"type": "place", "cells": BLOCK})
    more = engine.apply_action(state, 1, {"type": "place", "cells": [*BLOCK, [5, 5]]})  # one new cell
    assert more.grid[5, 5] == 1 and more.player(1).budget_left == state.player(1).budget_left - 1
    assert engine.apply_action(more, 1, {"type": "erase", "cells": [[5, 5], [6, 6]]}).grid[5, 5] == 0
