"""The lobby's pages (services/session/adapters/directory.py): oldest first, a cursor per page,
finished games left out."""

from __future__ import annotations

import pytest

from services.common.errors import ServiceError
from services.session.adapters.directory import Directory


def directory(n: int) -> Directory:
    d = Directory(kv=None)  # the mirror is not started: entries are filled by hand
    for i in range(n):
        d._on_change(f"g{i:02d}", b'{"created_at": "2026-01-01T00:00:%02d", "phase": "waiting"}' % (59 - i), 1)
    return d


def test_pages_walk_every_open_game_once_oldest_first():
    d = directory(7)
    seen, cursor = [], ""
    while True:
        items, cursor = d.page(3, cursor)
        assert len(items) <= 3
        seen += [gid for gid, _ in items]
        if not cursor:
            break
    assert seen == [f"g{i:02d}" for i in reversed(range(7))]
    items, cursor = d.page()
    assert len(items) == 7 and cursor == ""


def test_a_finished_game_leaves_the_lobby():
    d = directory(3)
    d._on_change("g01", b'{"created_at": "x", "phase": "finished"}', 2)
    d._on_change("g02", None, 3)
    assert [gid for gid, _ in d.page()[0]] == ["g00"]


def test_a_cursor_no_page_gave_is_malformed():
    with pytest.raises(ServiceError) as err:
        directory(2).page(1, "%%%")
    assert err.value.code == "MALFORMED"
