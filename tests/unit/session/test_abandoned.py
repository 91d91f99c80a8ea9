"""Which games the lobby leaves out as abandoned (services/session/adapters/directory.py,
docs/abandoned-games.md): started, unfinished, no event for ``idle_after_s``."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from services.session.adapters.directory import Directory, idle_s, is_abandoned, last_event_at

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC).timestamp()


def entry(**kw) -> dict:
    base = {"created_at": "2026-01-01T10:00:00+00:00", "phase": "playing", "expirable": False}
    return {**base, **kw}


def test_last_event_at_is_rounded_down_to_the_minute():
    assert last_event_at(NOW + 59.9) == "2026-01-01T12:00:00+00:00"
    assert last_event_at(NOW + 60) == "2026-01-01T12:01:00+00:00"


def test_idle_counts_from_the_last_event_else_from_the_creation():
    assert idle_s(entry(last_event_at="2026-01-01T11:50:00+00:00"), NOW) == 600
    assert idle_s(entry(), NOW) == 7200
    assert idle_s(entry(created_at="", last_event_at=None), NOW) is None


def test_only_a_started_unfinished_game_idle_long_enough_is_abandoned():
    old = "2026-01-01T11:40:00+00:00"  # 20 minutes ago
    assert is_abandoned(entry(last_event_at=old), 900, NOW)
    assert not is_abandoned(entry(last_event_at=old), 1500, NOW)
    assert not is_abandoned(entry(last_event_at=old, expirable=True), 900, NOW)  # waiting
    assert not is_abandoned(entry(last_event_at=old, phase="finished"), 900, NOW)


def test_pages_leave_out_abandoned_games_and_list_them_again_after_an_event():
    d = Directory(kv=None, idle_after_s=900)
    d._on_change("live", json.dumps(entry(last_event_at="2026-01-01T11:58:00+00:00")).encode(), 1)
    d._on_change("gone", json.dumps(entry(last_event_at="2026-01-01T11:00:00+00:00")).encode(), 2)
    d._on_change("open", json.dumps(entry(expirable=True, phase="waiting")).encode(), 3)
    assert sorted(gid for gid, _ in d.page(now=NOW)[0]) == ["live", "open"]
    d._on_change("gone", json.dumps(entry(last_event_at="2026-01-01T11:59:00+00:00")).encode(), 4)
    assert sorted(gid for gid, _ in d.page(now=NOW)[0]) == ["gone", "live", "open"]
    assert len(Directory(kv=None).page()[0]) == 0
