"""``Engine.Run`` calls stay under gRPC's message limit: a session's first tick after a
restart sends every running game's base state, so the items are cut into calls by count
and by request bytes (services/session/adapters/engine_client.py)."""

from __future__ import annotations

from cellwar.v1 import engine_pb2
from services.session.adapters import engine_client
from services.session.adapters.engine_client import _run_chunks


def _item(game: int, base_bytes: int = 0) -> engine_pb2.RunItem:
    item = engine_pb2.RunItem(game_id=f"g{game}", generations=1)
    if base_bytes:
        item.base.state = b"\x01" * base_bytes
    return item


def test_small_items_are_cut_by_count_only():
    items = [_item(i) for i in range(450)]
    chunks = _run_chunks(items, list(range(450)))
    assert [len(c) for c in chunks] == [200, 200, 50]
    assert [i for c in chunks for i in c] == list(range(450))


def test_items_with_base_states_are_cut_by_bytes(monkeypatch):
    monkeypatch.setattr(engine_client, "RUN_CHUNK_BYTES", 1_000_000)
    items = [_item(i, 300_000) for i in range(7)]  # ~300 kB each: three per call
    chunks = _run_chunks(items, [6, 0, 3, 1, 5, 2, 4])
    assert chunks == [[6, 0, 3], [1, 5, 2], [4]]
    assert all(sum(items[i].ByteSize() for i in c) <= 1_000_000 for c in chunks)


def test_an_item_bigger_than_the_limit_goes_alone(monkeypatch):
    monkeypatch.setattr(engine_client, "RUN_CHUNK_BYTES", 1_000)
    items = [_item(0), _item(1, 5_000), _item(2)]
    assert _run_chunks(items, [0, 1, 2]) == [[0], [1], [2]]
