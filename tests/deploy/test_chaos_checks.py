"""The chaos run's checks (deploy/chaos.py) can fail: a clean log passes, a gap, a
command applied twice, a hash that is not the fold's and an answered command missing
from the log are each caught. And its bots' transport retries a 503 with the same
request (same Idempotency-Key) against a real HTTP server."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from cellwar.v1 import events_pb2
from deploy.chaos import Answer, Recorder, Report, RetryingTransport, check_answers, check_log
from engine import api as engine
from tests.api.conftest import serve


def life_log() -> tuple[list[events_pb2.Event], dict[str, str]]:
    """A real little Life log (engine.decide) with a uuid command id per command;
    returns the events and the keys by name."""
    keys = {name: str(uuid.uuid4()) for name in ("create", "join1", "join2", "place", "end")}
    commands = [
        ("create", 0, {"kind": "life", "config": {"width": 16, "height": 16, "players": 2, "budget": 10}}, "create"),
        ("join", 0, {"name": "a"}, "join1"),
        ("join", 0, {"name": "b"}, "join2"),
        ("action", 1, {"type": "place", "cells": [[1, 1], [2, 1], [1, 2]]}, "place"),
        ("end_turn", 1, {}, "end"),
    ]
    state, events = None, []
    for command, actor, payload, key in commands:
        drafts, state = engine.decide(state, command, actor, payload)
        prefix = "" if command == "create" else f"p{actor}:"
        for d in drafts:
            events.append(
                events_pb2.Event(
                    game_id="g1", seq=len(events) + 1, type=d.type, actor=d.actor,
                    payload=json.dumps(d.payload).encode(), state_hash=d.state_hash,
                    command_id=f"{prefix}{keys[key]}#0123456789abcdef", engine_version=engine.ENGINE_VERSION,
                )
            )
    return events, keys


def renumber(events):
    out = []
    for i, e in enumerate(events, 1):
        c = events_pb2.Event()
        c.CopyFrom(e)
        c.seq = i
        out.append(c)
    return out


def test_a_clean_log_passes_every_check():
    events, keys = life_log()
    report = Report()
    check_log("g1", events, report)
    recorder = Recorder(answers=[Answer("g1", "action", keys["place"], 1, 1), Answer("g1", "join", keys["join2"], 0, 2)])
    check_answers(recorder, {"g1": events}, report)
    assert report.violations == {}


def test_a_gap_is_caught():
    events, _ = life_log()
    report = Report()
    check_log("g1", events[:2] + events[3:], report)
    assert "contiguous" in report.violations


def test_a_command_applied_twice_is_caught():
    events, _ = life_log()
    report = Report()
    check_log("g1", renumber(events + [events[3]]), report)  # the place, once more at the end
    assert "command_once" in report.violations


def test_a_hash_that_is_not_the_folds_is_caught():
    events, _ = life_log()
    events[3].state_hash = "0" * 64
    report = Report()
    check_log("g1", events, report)
    assert report.violations["fold"] == ["g1: hash of seq 4 (ActionApplied) differs from the fold"]


def test_an_answered_command_missing_from_the_log_is_caught():
    events, keys = life_log()
    lost = str(uuid.uuid4())
    recorder = Recorder(answers=[Answer("g1", "end_turn", lost, 1, 1), Answer("g1", "action", keys["place"], 2, 1)])
    report = Report()
    check_answers(recorder, {"g1": events}, report)
    assert report.violations["answered_in_log"] == [
        f"g1: end_turn by player 1 key {lost} not in the log",
        f"g1: action key {keys['place']} recorded for another actor",
    ]


async def test_the_bots_transport_retries_a_503_with_the_same_key_and_records_the_answer():
    seen: list[str] = []
    app = FastAPI()

    @app.post("/game/{game_id}/action")
    async def action(game_id: str, request: Request):
        seen.append(request.headers["Idempotency-Key"])
        if len(seen) < 3:
            return JSONResponse({"error": {"code": "UNAVAILABLE", "message": "down"}}, status_code=503)
        return {"seq": 7, "view": {}}

    recorder = Recorder(seats={"tok": ("g9", 2)})
    async with serve(app) as url:
        async with httpx.AsyncClient(base_url=url, transport=RetryingTransport(recorder, deadline_s=30)) as client:
            response = await client.post(
                "/game/g9/action", json={"type": "pause"}, headers={"Idempotency-Key": "k-1", "Authorization": "Bearer tok"}
            )
    assert response.status_code == 200 and response.json()["seq"] == 7
    assert seen == ["k-1", "k-1", "k-1"]
    assert recorder.retries == 2 and recorder.retried_statuses == {"503": 2}
    assert recorder.answers == [Answer("g9", "action", "k-1", 2, 3)]


# -- the fault scenarios' figures (deploy/chaos.py, docs/faults.md)


def test_the_longest_time_without_an_accepted_write_counts_the_edges():
    from deploy.chaos import longest_gap

    assert longest_gap([11.0, 12.0, 30.0, 31.0], 10.0, 40.0) == 18.0  # 12 -> 30
    assert longest_gap([1.0, 50.0], 10.0, 20.0) == 10.0  # nothing inside: the whole fault
    assert longest_gap([10.5, 19.0], 10.0, 30.0) == 11.0  # 19 -> the window's end


def test_the_p99_is_by_nearest_rank():
    from deploy.chaos import percentile

    values = [0.01 * i for i in range(1, 101)]  # 0.01 .. 1.00
    assert percentile(values, 0.99) == 0.99
    assert percentile(values, 0.5) == 0.5
    assert percentile([3.0], 0.99) == 3.0
    assert percentile([], 0.99) is None


def test_a_faults_figures_take_the_requests_sent_during_it():
    from deploy.chaos import FaultRun, fault_figures

    recorder = Recorder()
    # (sent, seconds, status): two before the fault, three during, one after
    recorder.attempts = [(1.0, 0.1, 200), (9.0, 0.2, 200), (10.0, 2.5, 503), (12.0, 0.3, 200),
                         (19.0, 0.4, 0), (25.0, 9.0, 200)]
    recorder.accepted = [1.1, 9.2, 12.3, 26.0, 27.0]
    fault = FaultRun("session-pause", "SIGSTOP session-1", ["session-1"], start=10.0, end=20.0)
    fault_figures(recorder, fault, games_over=100.0)
    assert fault.requests == 3 and fault.statuses == {"200": 1, "503": 1, "none": 1}
    assert (fault.p99_s, fault.max_s) == (2.5, 2.5)
    assert fault.longest_gap_s == 26.0 - 12.3  # the window runs on 20 s past the fault

    report = Report(faults=[fault])
    report.fail("answered_in_log", "g1: action by player 1 key k not in the log")
    text = "\n".join(report.fault_lines(fault))
    assert "acknowledged events lost: 1, duplicated: 0" in text
    assert "longest time without an accepted write: 13.7 s" in text
    assert "p99 2.50 s" in text


async def test_the_transport_records_each_try_and_a_conflict():
    seen: list[str] = []
    app = FastAPI()

    @app.post("/game/{game_id}/end_turn")
    async def end_turn(game_id: str, request: Request):
        seen.append(request.headers["Idempotency-Key"])
        if len(seen) == 1:
            return JSONResponse({"error": {"code": "UNAVAILABLE", "message": "in flight"}}, status_code=503)
        return JSONResponse({"error": {"code": "CONFLICT", "message": "changed"}}, status_code=409)

    recorder = Recorder()
    async with serve(app) as url:
        async with httpx.AsyncClient(base_url=url, transport=RetryingTransport(recorder, deadline_s=30)) as client:
            response = await client.post("/game/g9/end_turn", json={}, headers={"Idempotency-Key": "k-2"})
    assert response.status_code == 409
    assert [status for _, _, status in recorder.attempts] == [503, 409]
    assert recorder.conflicts == ["POST /game/g9/end_turn"] and recorder.accepted == []


def test_a_bots_socket_command_is_recorded_as_an_answer_and_an_exchange():
    from types import SimpleNamespace

    from client.bot_base import CommandTiming

    recorder = Recorder()
    bot = SimpleNamespace(game_id="g1", seat=SimpleNamespace(player_id=2))
    key = "0b0e5c1e-4f7a-4f43-9d7e-3a54c3f6f0a1"
    recorder.on_command(bot, CommandTiming("action", key, 5.0, 0.25, True, 200, None))
    recorder.on_command(bot, CommandTiming("end_turn", "k2", 6.0, 0.5, True, 409, "CONFLICT"))
    recorder.on_command(bot, CommandTiming("end_turn", "k3", 7.0, 1.5, False, 200, None))  # REST: the transport's
    assert recorder.answers == [Answer("g1", "action", key, 2, 1)]
    assert recorder.attempts == [(5.0, 0.25, 200), (6.0, 0.5, 409)]
    assert recorder.accepted == [5.25] and recorder.conflicts == ["WS end_turn"]


async def test_a_stuck_game_names_where_each_bot_waits_and_what_it_saw():
    from deploy.chaos import GameRun, stuck_bots

    release = asyncio.Event()

    async def wait_for_a_view():
        await release.wait()

    async def play():
        await wait_for_a_view()

    class Bot:
        name = "cw-1-1"
        last_view = {"seq": 7, "phase": "playing", "turn": 1, "you": 1}
        played_seq = 9

    task = asyncio.create_task(play())
    await asyncio.sleep(0)
    game = GameRun("cellwar", "g1", bots=[(Bot(), task)])
    try:
        said = stuck_bots(game)
    finally:
        release.set()
        await task
    assert said.startswith("cw-1-1: view seq 7 playing turn 1 you 1, played on seq 9, waits in play:")
    assert "> wait_for_a_view:" in said and "> wait:" in said and said.endswith("> future")
    assert stuck_bots(GameRun("cellwar")) == "no bot playing"
