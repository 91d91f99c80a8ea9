"""Who observes an event (``engine.api.observers``) and the player's own numbering of its
filtered log (a view's ``seq`` is the player's own version: docs/architecture/contracts.md).

Invariant, over random games of both kinds (Hypothesis): a seat observes an event ⇔ the
event is in that seat's filtered log ⇔ the seat's view (``get_visible_state`` JSON)
changed or the event is public. The filtered log is numbered 1..k, its ``seq`` is the
seat's version after the event, and a spectator of a running CellWar game observes only
public events.
"""

from __future__ import annotations

import base64
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.api import observers
from engine.cellwar.log import PUBLIC_TYPES
from engine.life.log import DRAWING_ACTIONS
from engine.life.zones import zones_for


class Recorder:
    """Commands through ``engine.decide``; every event with the states around it."""

    def __init__(self):
        self.state = None
        self.events: list[dict] = []
        self.befores: list = []
        self.afters: list = []

    def cmd(self, ctype, actor=0, **payload):
        try:
            drafts, new = engine.decide(self.state, ctype, actor, payload)
        except engine.GameError:
            return False
        self._keep(drafts, new)
        return True

    def tick(self, n):
        drafts, new = engine.decide_tick(self.state, n)
        self._keep(drafts, new)

    def _keep(self, drafts, new):
        before = self.state
        for d in drafts:
            self.events.append({
                "seq": len(self.events) + 1, "type": d.type, "actor": d.actor,
                "payload": json.loads(json.dumps(d.payload)), "engine_version": engine.ENGINE_VERSION,
            })
            self.befores.append(before)
            self.afters.append(new)
            before = new
        self.state = new


def view(state, pid):
    return None if state is None else json.dumps(engine.get_visible_state(state, pid), sort_keys=True)


def check_invariant(rec: Recorder, public) -> None:
    """For every seat and event: observes ⇔ in its filtered log ⇔ view changed or public."""
    seats = range(1, engine.summary(rec.state).max_players + 1)
    for pid in seats:
        log = engine.player_log(rec.events, pid)
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        logged = [e["log_seq"] for e in log]
        observed = []
        for event, before, after in zip(rec.events, rec.befores, rec.afters, strict=True):
            obs = observers(before, event["type"], event["actor"], event["payload"], after)
            changed = view(before, pid) != view(after, pid)
            assert (pid in obs) == (changed or public(event, before, after)), (pid, event)
            if pid in obs:
                observed.append(event["seq"])
        assert observed == logged


# =========================================================================== CellWar


def cellwar_public(event, before, after) -> bool:
    """Public CellWar events; an action is public only through what it changes in every
    view (a turn passing, a player out, the end), which the view comparison sees."""
    return event["type"] in PUBLIC_TYPES


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_cellwar_observers_are_the_seats_whose_view_changed(data):
    players = data.draw(st.integers(2, 3), label="players")
    size = data.draw(st.integers(6, 9), label="size")
    rec = Recorder()
    config = {"width": size, "height": size, "players": players, "turn_time_s": 60}
    rec.cmd("create", kind="cellwar", config=config)
    for p in range(1, players + 1):
        rec.cmd("join", p, name=f"p{p}")
    for _ in range(data.draw(st.integers(5, 60), label="steps")):
        if engine.summary(rec.state).finished:
            break
        turn = rec.state.turn
        roll = data.draw(st.integers(0, 40), label="roll")
        if roll == 0:  # someone leaves (in or out of its turn)
            rec.cmd("remove_player", 0, player_id=data.draw(st.integers(1, players)), reason="left")
            continue
        if roll == 1:  # the turn timer runs out
            rec.cmd("time_out")
            continue
        actions = engine.get_valid_actions(rec.state, turn)
        if not actions:
            rec.cmd("end_turn", turn)
            continue
        a = data.draw(st.sampled_from(actions), label="action")
        rec.cmd("action", turn, unit_id=a["unit_id"], dx=a["dx"], dy=a["dy"])
    check_invariant(rec, cellwar_public)
    # a spectator of the running game observes only public events
    for event, before, after in zip(rec.events, rec.befores, rec.afters, strict=True):
        obs = observers(before, event["type"], event["actor"], event["payload"], after)
        if 0 in obs:
            assert obs == frozenset(range(0, players + 1))


# =========================================================================== Life


def life_public(event, before, after) -> bool:
    """Everything but a drawing action during blind placement is public."""
    action = event["payload"].get("action") or {}
    return not (
        event["type"] == "ActionApplied" and before is not None and before.phase == "placement"
        and action.get("type") in DRAWING_ACTIONS
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_life_observers_are_everyone_but_for_blind_drawing(data):
    players = data.draw(st.sampled_from([2, 4]), label="players")
    rec = Recorder()
    rec.cmd("create", kind="life", config={"width": 12, "height": 12, "players": players, "budget": 12,
                                            "max_generations": 40, "turn_time_s": 90})
    for p in range(1, players + 1):
        rec.cmd("join", p, name=f"p{p}")
    zones = zones_for(12, 12, players)
    cell = st.tuples(st.integers(0, 5), st.integers(0, 5))
    for _ in range(data.draw(st.integers(5, 40), label="steps")):
        s = engine.summary(rec.state)
        if s.finished:
            break
        if s.phase in ("running", "paused"):
            choice = data.draw(st.sampled_from(["tick", "tick", "pause", "resume", "speed"]), label="run")
            if choice == "tick":
                rec.tick(data.draw(st.integers(1, 8), label="n"))
            elif choice == "speed":
                rec.cmd("action", 1, type="speed", multiplier=data.draw(st.sampled_from([1, 2, 4, 8])))
            else:
                rec.cmd("action", data.draw(st.integers(1, players)), type=choice)
            continue
        pid = s.turn or data.draw(st.integers(1, players), label="drawer")
        x0, y0, _, _ = zones[pid]
        kind = data.draw(st.sampled_from(["place", "place", "erase", "stamp", "reset_turn", "end_turn",
                                          "end_turn", "propose_finish", "speed", "resign", "time_out"]),
                         label="kind")
        if kind == "time_out":
            rec.cmd("time_out")
        elif kind in ("place", "erase"):
            cells = [[x0 + x, y0 + y] for x, y in data.draw(st.lists(cell, min_size=1, max_size=4))]
            rec.cmd("action", pid, type=kind, cells=cells)
        elif kind == "stamp":
            rec.cmd("action", pid, type="stamp", pattern=data.draw(st.sampled_from(["block", "glider", "blinker"])),
                    x=x0 + data.draw(st.integers(0, 3)), y=y0 + data.draw(st.integers(0, 3)), rotation=0)
        elif kind == "end_turn":
            rec.cmd("end_turn", pid)
        elif kind == "speed":
            rec.cmd("action", pid, type="speed", multiplier=data.draw(st.sampled_from([1, 2, 4, 8])))
        elif kind == "resign" and data.draw(st.booleans()):
            rec.cmd("action", pid, type="resign")
        else:
            rec.cmd("action", pid, type=kind)
    check_invariant(rec, life_public)
    for event, before, after in zip(rec.events, rec.befores, rec.afters, strict=True):
        obs = observers(before, event["type"], event["actor"], event["payload"], after)
        if not life_public(event, before, after):
            assert obs == {event["actor"]}
            assert view(before, None) == view(after, None)  # the spectator's blind board


# =========================================================================== numbering


def test_a_rollback_names_the_readers_own_version():
    """``RolledBack.to_seq`` in a filtered log is the reader's version at that seq."""
    rec = Recorder()
    units = [{"owner": 1, "type": "infantry", "x": 0, "y": 0}, {"owner": 2, "type": "infantry", "x": 7, "y": 7},
             {"owner": 2, "type": "infantry", "x": 7, "y": 0}, {"owner": 3, "type": "infantry", "x": 0, "y": 7}]
    rec.cmd("create", kind="cellwar", config={"width": 8, "height": 8, "players": 3, "units": units})
    for p in (1, 2, 3):
        rec.cmd("join", p, name=f"p{p}")
    rec.cmd("action", 1, unit_id=1, dx=1, dy=0)
    rec.cmd("end_turn", 1)
    start = rec.state
    to_seq = len(rec.events)
    rec.cmd("action", 2, unit_id=2, dx=-1, dy=0)  # in everyone else's fog
    rec.cmd("action", 2, unit_id=5, dx=-1, dy=0)
    rec.events.append({"seq": to_seq + 3, "type": "RolledBack", "actor": 0, "engine_version": engine.ENGINE_VERSION,
                       "payload": {"to_seq": to_seq, "state": base64.b64encode(engine.encode_state(start)).decode()}})
    rec.befores.append(rec.state)
    rec.afters.append(start)
    rec.state = start
    rec.cmd("remove_player", 0, player_id=2, reason="disconnected")
    # The rollback undid only moves in p1's and p3's fog: they do not observe it (it
    # would tell them p2 had acted). p2 does; its to_seq is p2's own version at
    # seq 6, 5 (p1's move at seq 5 was in its fog).
    for pid in (1, 3):
        assert "RolledBack" not in [e["type"] for e in engine.player_log(rec.events, pid)]
    back = next(e for e in engine.player_log(rec.events, 2) if e["type"] == "RolledBack")
    assert back["payload"] == {"to_seq": 5}
    p3 = engine.player_log(rec.events, 3)
    assert [e["log_seq"] for e in p3] == [1, 2, 3, 4, 6, 10]  # the moves and the rollback left out
    assert [e["seq"] for e in p3] == list(range(1, 7))
