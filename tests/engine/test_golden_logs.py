"""Golden event logs (docs/architecture/engine-versions.md): every log in
``tests/fixtures/logs/v<version>/`` folds to EVERY recorded ``state_hash``, under the engine
version that wrote it, forever. A rules change that changes a hash without bumping
``engine.ENGINE_VERSION`` fails here; so does any change of what the current engine
decides for the scripted games (the current version's files are regenerated and compared
byte for byte). How to bump: docs/architecture/engine-versions.md."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "logs"
FILES = sorted(LOGS.glob("v*/*.jsonl"))
KEYS = ["seq", "type", "actor", "payload", "time", "state_hash", "engine_version"]
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _tool():
    spec = importlib.util.spec_from_file_location("gen_golden_logs", ROOT / "tools" / "gen_golden_logs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_there_are_golden_logs_of_every_kind_for_the_first_version():
    names = {p.name for p in (LOGS / "v1").glob("*.jsonl")}
    assert {n.split("-")[0] for n in names} == {"life", "campaign", "cellwar"}
    assert len(names) >= 10


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_log_has_the_rest_shape(path):
    version = path.parent.name[1:]
    events = read(path)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for e in events:
        assert list(e) == KEYS
        assert isinstance(e["payload"], dict) and isinstance(e["actor"], int)
        assert RFC3339.match(e["time"]), e["time"]
        assert re.fullmatch(r"[0-9a-f]{64}", e["state_hash"])
        assert e["engine_version"] == version
    assert events[0]["type"] == "GameCreated"
    assert events[-1]["type"] == "GameFinished"


def first_mismatch(events: list[dict]) -> int | None:
    """Seq of the first event whose fold does not give its recorded hash (None: all match)."""
    state = None
    for e in events:
        state = engine.apply_event(
            state, e["type"], e["actor"], e["payload"], engine_version=e["engine_version"]
        )
        if engine.state_hash(state) != e["state_hash"]:
            return e["seq"]
    return None


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_log_folds_to_every_recorded_hash(path):
    assert first_mismatch(read(path)) is None


def test_a_rule_change_without_a_version_bump_breaks_the_golden_logs(monkeypatch):
    """The check has teeth: Life cells that never die (B3/S012345678), or CellWar
    fortifications that fall at the first hit, no longer fold to the recorded hashes."""
    import numpy as np

    from engine.cellwar import actions

    real_step = engine.life.step

    def immortal(grid, *, torus=False, generations=1):
        return np.where(grid != 0, grid, real_step(grid, torus=torus, generations=generations))

    monkeypatch.setattr(engine.life, "step", immortal)
    # the plain tick steps one board as Python-int planes (engine/life/bitboard.py)
    from engine.life.bitboard import Bitboard

    real_planes = Bitboard.step

    def immortal_planes(self, planes):
        new = real_planes(self, planes)
        kept = [planes[0] | new[0]] + [old | (n & ~planes[0]) for old, n in zip(planes[1:], new[1:], strict=True)]
        return tuple(kept)

    monkeypatch.setattr(Bitboard, "step", immortal_planes)
    assert first_mismatch(read(LOGS / "v1" / "life-2p-redraw.jsonl")) is not None
    monkeypatch.undo()

    real_execute = actions._execute

    def one_hit(state, unit, dx, dy, kind):
        target = state.occupancy().get((unit.x + dx, unit.y + dy))
        if kind == "attack" and target.type == "fortification":
            weak = replace(target, type="infantry", standing=0)
            state = replace(state, units=tuple(weak if u.id == target.id else u for u in state.units))
        return real_execute(state, unit, dx, dy, kind)

    monkeypatch.setattr(actions, "_execute", one_hit)
    assert first_mismatch(read(LOGS / "v1" / "cellwar-2p-two-hit-production.jsonl")) is not None


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_log_folds_in_one_run_to_the_last_hash(path):
    events = read(path)
    state = engine.fold(None, [(e["type"], e["actor"], e["payload"], e["engine_version"]) for e in events])
    assert engine.state_hash(state) == events[-1]["state_hash"]


def test_current_version_logs_are_what_the_engine_decides_today():
    """The scripted games, replayed through ``engine.decide`` now, write the same files:
    a change of what the rules decide needs a version bump (and new golden logs)."""
    tool = _tool()
    folder = LOGS / f"v{engine.ENGINE_VERSION}"
    fresh = tool.render_all()
    assert sorted(fresh) == sorted(p.name for p in folder.glob("*.jsonl"))
    for name, text in fresh.items():
        assert (folder / name).read_text("utf-8") == text, (
            f"{name}: run python tools/gen_golden_logs.py after a version bump"
        )


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_every_seat_reads_its_filtered_log_of_a_golden_log(path):
    """Each seat's filtered log folds under the recorded versions and is numbered 1..k."""
    events = read(path)
    seats = events[0]["payload"]["config"].get("players", 1)
    for pid in range(1, seats + 1):
        log = engine.player_log(events, pid)
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        assert [e["log_seq"] for e in log] == sorted({e["log_seq"] for e in log})
        assert log[0]["log_seq"] == 1 and log[-1]["log_seq"] <= len(events)
