"""``cellwar verify`` (docs/replays.md "Log files"): every golden log folds to every
recorded hash; a tampered copy is named by its first bad seq and exits 1; a log that cannot
be read exits 2."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

import engine
from bench.loggen import write_sample_logs
from client.cli.verify import FailReason, Status, verify_events
from tests.cli.conftest import GOLDEN, LOGS, read, write

LIFE = LOGS / "v2" / "life-2p-redraw.jsonl"
LIFE_4P = LOGS / "v2" / "life-4p.jsonl"
CELLWAR = LOGS / "v2" / "cellwar-2p-two-hit-production.jsonl"
TOTAL = re.compile(
    r"^total: (\d+) logs?, ([\d,]+) events, ([\d,]+) hashes checked in [\d.]+ s: ([\d,]+) events/s; "
    r"(\d+) OK, (\d+) FAIL, (\d+) ERROR$",
    re.M,
)


def total(out: str) -> tuple[int, ...]:
    m = TOTAL.search(out)
    assert m, out
    logs, events, checked, rate, ok, fail, err = (int(g.replace(",", "")) for g in m.groups())
    assert rate > 0
    return logs, events, checked, ok, fail, err


def test_every_golden_log_is_ok_with_every_hash_checked(cellwar):
    run = cellwar("verify", *GOLDEN)
    assert run.code == 0, run.out
    for path in GOLDEN:
        n = len(read(path))
        assert f"{path}: OK ({n} events, all hashes checked)" in run.out
    n_all = sum(len(read(p)) for p in GOLDEN)
    assert total(run.out) == (len(GOLDEN), n_all, n_all, len(GOLDEN), 0, 0)


def test_the_events_document_is_verified_like_json_lines(cellwar, tmp_path: Path):
    doc = tmp_path / "events.json"
    doc.write_text(json.dumps({"events": read(CELLWAR)}, indent=1), "utf-8")
    run = cellwar("verify", doc)
    assert run.code == 0
    assert f"{doc}: OK (381 events, all hashes checked)" in run.out


def first_action_with_cells(events: list[dict]) -> dict:
    return next(e for e in events if e["type"] == "ActionApplied" and "cells" in e["payload"]["action"])


def test_flipping_one_cell_of_a_placement_names_that_seq(cellwar, tmp_path: Path):
    events = read(LIFE)
    target = first_action_with_cells(events)
    x, y = target["payload"]["action"]["cells"][0]
    target["payload"]["action"]["cells"][0] = [x, y + 1]  # the same player's zone, another cell
    path = write(tmp_path / "flipped.jsonl", events)
    run = cellwar("verify", path)
    assert run.code == 1
    assert re.search(rf"^{re.escape(str(path))}: FAIL seq {target['seq']}: hash [0-9a-f]{{64}} != recorded "
                     rf"{target['state_hash']}$", run.out, re.M), run.out
    assert total(run.out)[3:] == (0, 1, 0)


def test_a_cellwar_move_changed_into_another_names_that_seq(tmp_path: Path):
    events = read(CELLWAR)
    target = next(e for e in events[40:] if e["type"] == "ActionApplied")
    action = target["payload"]["action"]
    action["dx"], action["dy"] = -action["dx"] or 1, -action["dy"]
    result = verify_events(events, "tampered")
    assert result.status is Status.FAIL and result.seq == target["seq"]
    assert result.reason in (FailReason.HASH_MISMATCH, FailReason.REFUSED)
    # hashes compared: every one before it matched, and its own when the engine folded it
    mismatch = result.reason is FailReason.HASH_MISMATCH
    assert result.checked == target["seq"] - 1 + mismatch


def test_a_changed_hash_names_that_seq(cellwar, tmp_path: Path):
    events = read(CELLWAR)
    events[99]["state_hash"] = "0" * 64
    run = cellwar("verify", write(tmp_path / "hash.jsonl", events))
    assert run.code == 1
    assert "FAIL seq 100: hash " in run.out and "!= recorded " + "0" * 64 in run.out


def test_a_game_finished_the_rules_do_not_record_is_named(cellwar, tmp_path: Path):
    """GameFinished's payload is not part of the state (its hash stays right): verify
    checks it against what the rules record, and that there is one."""
    events = read(CELLWAR)
    last = events[-1]
    assert last["type"] == "GameFinished" and last["payload"]["result"] == "win"
    loser = 3 - last["payload"]["winner"]
    for payload in ({"result": "win", "winner": loser}, {"result": "draw", "winner": None}):
        forged = copy.deepcopy(events)
        forged[-1]["payload"] = payload
        run = cellwar("verify", write(tmp_path / "finish.jsonl", forged))
        assert run.code == 1
        assert f"FAIL seq {last['seq']}: GameFinished records {payload}" in run.out, run.out
    twice = copy.deepcopy(events) + [{**copy.deepcopy(last), "seq": last["seq"] + 1}]
    result = verify_events(twice)
    assert (result.status, result.seq, result.reason) == (Status.FAIL, last["seq"] + 1, FailReason.PAYLOAD_MISMATCH)
    assert result.message == "a second GameFinished"


def test_a_dropped_line_names_the_missing_seq(cellwar, tmp_path: Path):
    events = read(LIFE)
    del events[9]  # seq 10
    run = cellwar("verify", write(tmp_path / "dropped.jsonl", events))
    assert run.code == 1
    assert "FAIL seq 10: missing or out of order: line 10 holds seq 11" in run.out


def test_swapped_lines_name_the_first_seq_out_of_place(cellwar, tmp_path: Path):
    events = read(CELLWAR)
    events[20], events[21] = events[21], events[20]
    run = cellwar("verify", write(tmp_path / "swapped.jsonl", events))
    assert run.code == 1
    assert "FAIL seq 21: missing or out of order: line 21 holds seq 22" in run.out


def test_swapped_events_renumbered_fail_on_the_hash(tmp_path: Path):
    """Reordered and renumbered so the seqs run 1, 2, 3: the fold itself catches it."""
    events = read(LIFE)
    a, b = events[3], events[4]  # two different drawing actions of player 1
    events[3], events[4] = {**b, "seq": 4}, {**a, "seq": 5}
    result = verify_events(events)
    assert (result.status, result.seq, result.reason) == (Status.FAIL, 4, FailReason.HASH_MISMATCH)


def test_every_hash_inside_a_run_of_ticks_is_checked():
    """Counts 8, 8 changed to 7, 9: the run's sum and its last hash are unchanged, so a
    fold that sums the run (engine.fold) still ends on the recorded hash, but the first
    changed event no longer matches its own."""
    events = read(LIFE_4P)
    i = next(
        i for i in range(len(events) - 2)
        if all(e["type"] == "GenerationsTicked" for e in events[i : i + 3])
    )
    tampered = copy.deepcopy(events)
    tampered[i]["payload"]["count"] -= 1
    tampered[i + 1]["payload"]["count"] += 1
    folded = engine.fold(None, [(e["type"], e["actor"], e["payload"], e["engine_version"]) for e in tampered])
    assert engine.state_hash(folded) == events[-1]["state_hash"]  # the trap
    result = verify_events(tampered)
    assert (result.status, result.seq, result.reason) == (Status.FAIL, events[i]["seq"], FailReason.HASH_MISMATCH)


def test_an_event_the_rules_refuse_is_named(tmp_path: Path):
    events = read(LIFE)
    target = first_action_with_cells(events)
    target["payload"]["action"]["cells"] = [[29, 0]]  # player 2's half
    result = verify_events(events)
    assert (result.status, result.seq, result.reason) == (Status.FAIL, target["seq"], FailReason.REFUSED)
    assert "OUT_OF_ZONE" in result.message


def test_each_event_folds_under_its_own_engine_version():
    """A version-1 log read as version 2 breaks: the recorded version is what decides."""
    events = read(LOGS / "v1" / "cellwar-2p-two-hit-production.jsonl")
    assert verify_events(events).status is Status.OK
    relabelled = [{**e, "engine_version": "2"} for e in events]
    assert verify_events(relabelled).status is Status.FAIL


def test_a_player_filtered_log_cannot_be_verified(cellwar, tmp_path: Path):
    events = [{k: v for k, v in e.items() if k != "state_hash"} for e in read(LIFE)]
    run = cellwar("verify", write(tmp_path / "filtered.jsonl", events))
    assert run.code == 2
    assert "ERROR seq 1 records no state_hash: a player's filtered log cannot be verified" in run.out


def test_unreadable_files_exit_2_and_a_mismatch_wins(cellwar, tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(LIFE.read_text("utf-8").splitlines()[0] + "\n{not json\n", "utf-8")
    run = cellwar("verify", bad, tmp_path / "missing.jsonl")
    assert run.code == 2
    assert f"{bad}: ERROR NOT_JSON: line 2: not JSON" in run.out
    assert f"{tmp_path / 'missing.jsonl'}: ERROR UNREADABLE" in run.out
    events = read(LIFE)
    events[5]["state_hash"] = "f" * 64
    run = cellwar("verify", bad, write(tmp_path / "t.jsonl", events), LIFE)
    assert run.code == 1
    assert total(run.out)[3:] == (1, 1, 1)


def test_usage_errors_exit_2(cellwar):
    assert cellwar("verify").code == 2
    assert cellwar("verify", "--all").code == 2
    assert cellwar("verify", "--workers", "0", LIFE).code == 2
    with pytest.raises(SystemExit) as err:
        cellwar("verify", "--workers", "many")
    assert err.value.code == 2


def test_verify_reads_standard_input(cellwar, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LIFE.read_bytes())))
    run = cellwar("verify", "-")
    assert run.code == 0 and "-: OK (32 events, all hashes checked)" in run.out


def test_two_workers_verify_50_generated_logs_and_name_the_tampered_one(cellwar, tmp_path: Path):
    paths = write_sample_logs(tmp_path, 50)
    kinds = {read(p)[0]["payload"]["kind"] for p in paths}
    assert kinds == {"life", "cellwar"}
    n_events = sum(len(read(p)) for p in paths)
    run = cellwar("verify", "--workers", "2", "--quiet", *paths)
    assert run.code == 0, run.out
    assert run.out.count("\n") == 1  # --quiet: only the total
    assert total(run.out) == (50, n_events, n_events, 50, 0, 0)

    events = read(paths[17])
    events[len(events) // 2]["state_hash"] = "a" * 64
    write(paths[17], events)
    run = cellwar("verify", "--workers", "2", *paths)
    assert run.code == 1
    lines = run.out.splitlines()
    bad_seq = len(events) // 2 + 1
    assert re.fullmatch(
        rf"{re.escape(str(paths[17]))}: FAIL seq {bad_seq}: hash [0-9a-f]{{64}} != recorded a{{64}}", lines[17]
    )
    assert all(line.endswith("all hashes checked)") for i, line in enumerate(lines[:50]) if i != 17)
    assert total(run.out)[3:] == (49, 1, 0)
