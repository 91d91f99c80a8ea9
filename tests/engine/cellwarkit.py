"""Helpers of the CellWar engine tests: started games from explicit units, moves."""

from __future__ import annotations

import engine
from engine.cellwar.ids import start_ids


def start(units, width=8, height=8, players=2):
    """A started game (all seats joined) from explicit start units
    ``(owner, type, x, y[, standing])``; the k-th has id ``uid(state, k)``: ids are drawn
    per owner (player p's n-th unit is ``n * players + p``)."""
    spec = []
    for u in units:
        d = {"owner": u[0], "type": u[1], "x": u[2], "y": u[3]}
        if len(u) > 4:
            d["standing"] = u[4]
        spec.append(d)
    state = engine.new_game(
        engine.config_from_dict(
            "cellwar", {"width": width, "height": height, "players": players, "units": spec}
        )
    )
    for i in range(players):
        state = engine.add_player(state, f"p{i + 1}")
    return state


def uid(state, ref):
    """The unit id of the ``ref``-th start unit (1-based, in the order given to
    :func:`start`); ids are drawn per owner (engine/cellwar/ids.py)."""
    ids, _ = start_ids(state.config, state.rules)
    return ids[ref - 1]


def unit_at(state, x, y):
    """The id of the unit on (x, y)."""
    return next(u.id for u in state.units if (u.x, u.y) == (x, y))


def act(state, pid, unit_id, dx, dy):
    """Player ``pid`` acts with unit ``unit_id``."""
    return engine.apply_action(state, pid, {"unit_id": unit_id, "dx": dx, "dy": dy})
