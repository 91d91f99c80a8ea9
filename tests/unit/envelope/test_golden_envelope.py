"""The engine service's Fold (with its envelope) on every golden log (tests/fixtures/logs):
every recorded hash is reached, the envelope is the same folded at once or event by event
(the session folds followed events in small batches), and each seat's view version equals
the length of its filtered log (a player observes an event ⇔ the event is in its log)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine
from cellwar.v1 import engine_pb2, events_pb2
from services.engine import server as engine_service

LOGS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "logs").glob("v*/*.jsonl"))


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def proto(event: dict) -> events_pb2.Event:
    return events_pb2.Event(
        seq=event["seq"],
        type=event["type"],
        actor=event["actor"],
        payload=json.dumps(event["payload"]).encode(),
        state_hash=event.get("state_hash", ""),
        engine_version=event.get("engine_version", ""),
    )


def fold(state: engine_pb2.GameState | None, events: list[events_pb2.Event]) -> engine_pb2.GameState:
    request = engine_pb2.FoldRequest(events=events)
    if state is not None:
        request.state.CopyFrom(state)
    return engine_service.fold(request)


def test_there_are_golden_logs():
    assert len(LOGS) >= 10


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_envelope_of_a_golden_log(path: Path):
    events = load(path)
    protos = [proto(e) for e in events]
    whole = fold(None, protos)
    assert whole.state_hash == events[-1]["state_hash"] and whole.seq == events[-1]["seq"]
    state = None
    for event in protos:  # one at a time, as followed events may come
        state = fold(state, [event])
        assert state.state_hash == event.state_hash
    assert list(state.versions) == list(whole.versions)
    assert state.anchor == whole.anchor
    assert len(whole.versions) == whole.max_players + 1
    for seat in range(1, whole.players_joined + 1):
        assert whole.versions[seat] == len(engine.player_log(events, seat)), seat
