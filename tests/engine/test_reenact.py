"""Re-deciding a recorded log (engine/reenact.py), the engine's half of `cellwar import`
(docs/architecture/replay-tools.md "Imports"): every golden log is reproduced by the rules
under the version that wrote it; any tampering is refused at the first event that
differs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import engine
from cellwar.v1.codes import ErrorCode
from engine.reenact import LogMismatch, recorded, reenact

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
FILES = sorted(LOGS.glob("v*/*.jsonl"))


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def refused(events: list[dict]) -> LogMismatch:
    with pytest.raises(LogMismatch) as info:
        reenact(recorded(events))
    return info.value


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_every_golden_log_is_decided_again_to_its_recorded_events(path):
    events = read(path)
    done = reenact(recorded(events))
    assert done.finished
    assert engine.state_hash(done.state) == events[-1]["state_hash"]
    assert done.envelope.seq == len(events)


def test_a_flipped_cell_in_a_placement_is_refused_at_its_seq():
    events = read(LOGS / "v2" / "life-torus.jsonl")
    seq = next(
        e["seq"]
        for e in events
        if e["type"] == "ActionApplied" and e["payload"]["action"].get("type") == "place"
    )
    tampered = copy.deepcopy(events)
    cells = tampered[seq - 1]["payload"]["action"]["cells"]
    cells[0] = [cells[0][0], cells[0][1] + 1]
    err = refused(tampered)
    assert (err.code, err.seq) == (ErrorCode.LOG_MISMATCH, seq)
    assert f"seq {seq}" in err.message


def test_a_forged_hash_is_refused_at_its_seq():
    events = read(LOGS / "v2" / "cellwar-2p-two-hit-production.jsonl")
    tampered = copy.deepcopy(events)
    tampered[99]["state_hash"] = "0" * 64
    err = refused(tampered)
    assert (err.code, err.seq) == (ErrorCode.LOG_MISMATCH, 100)
    assert "state_hash" in err.message


def test_a_move_the_rules_refuse_is_named_with_the_engine_code():
    events = read(LOGS / "v2" / "cellwar-2p-two-hit-production.jsonl")
    tampered = copy.deepcopy(events)
    first = next(e for e in tampered if e["type"] == "ActionApplied")
    first["actor"] = 2 if first["actor"] == 1 else 1  # the other player acts out of turn
    err = refused(tampered)
    assert (err.code, err.seq) == (ErrorCode.LOG_MISMATCH, first["seq"])
    assert "NOT_YOUR_TURN" in err.message


def test_a_wrong_winner_in_game_finished_is_refused():
    events = read(LOGS / "v2" / "life-resign.jsonl")
    tampered = copy.deepcopy(events)
    tampered[-1]["payload"]["winner"] = 3 - (tampered[-1]["payload"]["winner"] or 1)
    err = refused(tampered)
    assert err.seq == len(events)


def test_a_log_cut_inside_a_rollback_is_refused_one_past_its_end():
    events = read(LOGS / "v2" / "cellwar-3p-rollback.jsonl")
    back = next(e["seq"] for e in events if e["type"] == "RolledBack")
    err = refused(events[:back])  # the RolledBack kept, its PlayerRemoved cut off
    assert err.code == ErrorCode.LOG_MISMATCH
    assert err.seq == back


def test_a_filtered_log_without_hashes_cannot_be_imported():
    events = read(LOGS / "v2" / "life-4p.jsonl")
    for e in events:
        del e["state_hash"]
    err = refused(events)
    assert (err.code, err.seq) == (ErrorCode.MALFORMED, 1)


def test_an_unknown_engine_version_is_refused_with_its_code_and_seq():
    events = read(LOGS / "v2" / "life-4p.jsonl")
    events[5]["engine_version"] = "99"
    err = refused(events)
    assert (err.code, err.seq) == (ErrorCode.UNKNOWN_ENGINE_VERSION, 6)


def test_a_gap_in_the_seqs_is_malformed():
    events = read(LOGS / "v2" / "life-4p.jsonl")
    del events[3]
    err = refused(events)
    assert (err.code, err.seq) == (ErrorCode.MALFORMED, 4)


def test_an_unfinished_log_is_reenacted_to_its_last_state():
    events = read(LOGS / "v2" / "cellwar-3p-rollback-continues.jsonl")[:200]
    done = reenact(recorded(events))
    assert not done.finished
    assert engine.state_hash(done.state) == events[-1]["state_hash"]
