"""Helpers of the CellWar engine tests: started games from explicit units, moves."""

from __future__ import annotations

import engine


def start(units, width=8, height=8, players=2):
    """A started game (all seats joined) from explicit start units
    ``(owner, type, x, y[, standing])``; ids 1.. in that order."""
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


def act(state, pid, unit_id, dx, dy):
    return engine.apply_action(state, pid, {"unit_id": unit_id, "dx": dx, "dy": dy})
