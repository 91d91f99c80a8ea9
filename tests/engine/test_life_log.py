"""A player's log of a Life game during blind placement (engine/life/log.py; blind
placement: nothing else leaks through ``GET /game/{id}/events``), and the
per-kind dispatch of ``engine.player_log``."""

from __future__ import annotations

import json

import pytest

import engine
from engine.life.log import player_log

BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]


def shift(cells, dx, dy):
    return [[x + dx, y + dy] for x, y in cells]


class Log:
    """Runs commands and ticks through the engine; keeps the log as JSON-clean dicts."""

    def __init__(self, kind="life", config=None):
        self.events: list[dict] = []
        self.state = None
        self.cmd("create", 0, kind=kind, config=config or {})

    def _record(self, drafts):
        for d in drafts:
            self.events.append(
                json.loads(
                    json.dumps(
                        {
                            "seq": len(self.events) + 1,
                            "type": d.type,
                            "actor": d.actor,
                            "payload": d.payload,
                            "state_hash": d.state_hash,
                        }
                    )
                )
            )
        return self.events[-1]["seq"] if drafts else None

    def cmd(self, ctype, actor, **payload):
        drafts, self.state = engine.decide(self.state, ctype, actor, payload)
        return self._record(drafts)

    def act(self, actor, type_, **fields):
        return self.cmd("action", actor, type=type_, **fields)

    def tick(self, n):
        drafts, self.state = engine.decide_tick(self.state, n)
        return self._record(drafts)


def seqs(log):
    """The real seqs of the events in a filtered log (its items are numbered 1..k)."""
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    return [e["log_seq"] for e in log]


@pytest.fixture
def two():
    """16x16, 2 players (zones x < 8, x >= 8). seq 1 GameCreated, 2-3 PlayerJoined;
    p1: 4 place, 5 stamp, 6 erase, 7 speed (ControlChanged), 8 TurnEnded; p2: 9 place,
    10 reset_turn, 11 place, 12 TurnEnded (placement over: running); 13 GenerationsTicked
    (both blocks are still lifes: the board is stable, redraw opens); 14 p1 places in redraw."""
    g = Log(config={"width": 16, "height": 16, "budget": 20})
    g.cmd("join", 0, name="a")
    g.cmd("join", 0, name="b")
    assert g.state.phase == "placement"
    g.act(1, "place", cells=shift(BLOCK, 1, 1))
    g.act(1, "stamp", rle="bo$2bo$3o!", x=3, y=8)
    g.act(1, "erase", cells=[[4, 8]])
    g.act(1, "speed", multiplier=2)
    g.cmd("end_turn", 1)
    g.act(2, "place", cells=[[12, 12]])
    g.act(2, "reset_turn")
    g.act(2, "place", cells=shift(BLOCK, 11, 11))
    g.cmd("end_turn", 2)
    assert g.state.phase == "running"
    g.tick(8)
    assert g.state.phase == "redraw", g.state.phase
    g.act(1, "place", cells=[[0, 15]])
    assert [e["type"] for e in g.events] == [
        "GameCreated",
        "PlayerJoined",
        "PlayerJoined",
        *["ActionApplied"] * 3,
        "ControlChanged",
        "TurnEnded",
        *["ActionApplied"] * 3,
        "TurnEnded",
        "GenerationsTicked",
        "ActionApplied",
    ]
    return g


def test_other_players_placement_drawing_is_left_out(two):
    assert seqs(player_log(two.events, 2)) == [1, 2, 3, 7, 8, 9, 10, 11, 12, 13, 14]
    assert seqs(player_log(two.events, 1)) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14]


def test_kept_events_are_as_recorded_but_carry_no_hash(two):
    by_seq = {e["seq"]: e for e in two.events}
    for pid in (1, 2):
        for n, entry in enumerate(player_log(two.events, pid), start=1):
            recorded = by_seq[entry["log_seq"]]
            assert entry == {"seq": n, "log_seq": recorded["seq"],
                             **{k: recorded[k] for k in ("type", "actor", "payload")}}
    p2 = {e["log_seq"]: e for e in player_log(two.events, 2)}
    assert p2[7]["payload"] == {"action": {"type": "speed", "multiplier": 2}}
    assert p2[11]["payload"] == {"action": {"type": "place", "cells": shift(BLOCK, 11, 11)}}
    # after placement everything is public: p1's redraw drawing is told to p2
    assert p2[14] == {"seq": 11, "log_seq": 14, "type": "ActionApplied", "actor": 1,
                      "payload": {"action": {"type": "place", "cells": [[0, 15]]}}}


def test_a_log_cut_during_placement_hides_the_same_events(two):
    cut = two.events[:10]  # up to p2's reset_turn
    assert seqs(player_log(cut, 2)) == [1, 2, 3, 7, 8, 9, 10]
    assert seqs(player_log(cut, 1)) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert seqs(player_log(cut, 5)) == [1, 2, 3, 7, 8]  # no seat: nobody's drawing


def test_no_told_event_reveals_a_cell_the_readers_view_hid():
    """4 players: of the placement drawing, each reader is told only its own (every other
    player's is hidden), and the public events stay (a resign names no cell)."""
    g = Log(config={"width": 20, "height": 20, "players": 4, "budget": 10})
    for name in "abcd":
        g.cmd("join", 0, name=name)
    g.act(1, "place", cells=[[1, 1], [2, 1]])
    g.cmd("end_turn", 1)
    g.act(2, "stamp", pattern="glider", x=12, y=2)
    g.cmd("end_turn", 2)
    g.act(3, "place", cells=[[3, 14]])
    g.act(4, "resign")  # not a drawing: public (it names no cell)
    g.cmd("end_turn", 3)
    assert g.state.phase == "running"
    states = [None]
    for e in g.events:
        states.append(engine.apply_event(states[-1], e["type"], e["actor"], e["payload"]))
    for pid in (1, 2, 3):
        told = {e["log_seq"]: e for e in player_log(g.events, pid)}
        for e in g.events:
            cells = (e["payload"].get("action") or {}).get("cells") or []
            if e["seq"] not in told or not cells or states[e["seq"] - 1].phase != "placement":
                continue
            assert e["actor"] == pid  # a placement drawing told is the reader's own
        hidden = [e["seq"] for e in g.events if e["seq"] not in told]
        drawers = {e["actor"] for e in g.events if e["seq"] in hidden}
        assert drawers == {1, 2, 3} - {pid}
    p2 = {e["log_seq"]: e for e in player_log(g.events, 2)}
    resign = next(e for e in g.events if e["payload"].get("action", {}).get("type") == "resign")
    assert p2[resign["seq"]]["payload"] == {"action": {"type": "resign"}}
    assert all("state_hash" not in e for e in p2.values())


def test_a_log_must_start_with_game_created(two):
    with pytest.raises(engine.GameError) as err:
        player_log(two.events[1:], 1)
    assert err.value.code == "MALFORMED"
    assert player_log([], 1) == []


def test_engine_player_log_dispatches_by_kind(two):
    assert engine.player_log(two.events, 2) == player_log(two.events, 2)
    camp = Log(kind="campaign", config={"level": 1})
    camp.cmd("join", 0, name="solo")
    camp.act(1, "place", cells=[[0, 0]])
    # one player: all, with hashes, its own numbering is the real one
    assert engine.player_log(camp.events, 1) == [{**e, "log_seq": e["seq"]} for e in camp.events]
    with pytest.raises(engine.GameError) as err:
        engine.player_log([{**two.events[0], "payload": {"kind": "chess", "config": {}}}], 1)
    assert err.value.code == "MALFORMED"
    with pytest.raises(engine.GameError) as err:
        engine.player_log(two.events[1:], 1)
    assert err.value.code == "MALFORMED"
