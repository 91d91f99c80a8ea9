"""The chaos run's checks (deploy/chaos.py) can fail: a clean log passes, a gap, a
command applied twice, a hash that is not the fold's and an answered command missing
from the log are each caught. And its bots' transport retries a 503 with the same
request (same Idempotency-Key) against a real HTTP server."""

from __future__ import annotations

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
