"""The ``capacity`` bench's figure of what a record's SHA-256 costs
(:func:`bench.capacity.record_sha_floor`) hashes what the engine hashes for a record:
the same bytes per stability digest, and as many digests as the slot pool makes for one
record of a running 300x300 game."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import engine
from bench.capacity import CHECKPOINT_TICKS, GPS, digest_input, record_sha_floor, running_state
from cellwar.v1 import engine_pb2
from engine.life import slots, stability
from services.engine.server import new_run_cache, to_proto


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[: stability.DIGEST_SIZE]


def test_the_digest_input_is_what_a_stability_digest_hashes():
    board = running_state(0).grid
    assert _digest(digest_input(board)) == stability.board_planes_digest(board)
    # four colours: the third canonical plane counts too
    rng = np.random.default_rng(7)
    four = rng.integers(0, 5, size=(40, 70), dtype=np.uint8)
    assert _digest(digest_input(four)) == stability.board_planes_digest(four)
    assert len(digest_input(four)) == 3 * 40 * 2 * 8  # 3 planes x 40 rows x 2 words


def test_a_record_of_a_running_game_makes_as_many_digests_as_the_floor_counts(monkeypatch):
    digested = []
    generation = slots._generation

    def counted(pool, active):
        generation(pool, active)
        digested.append(sum(len(v) for v in pool.program.digest_slots.values()))

    monkeypatch.setattr(slots, "_generation", counted)
    made = []
    pool_digests = slots.SlotPool.digests
    monkeypatch.setattr(
        slots.SlotPool, "digests", lambda self, s: made.append(len(s)) or pool_digests(self, s)
    )
    base = to_proto(running_state(0))
    item = engine_pb2.RunItem(
        game_id="g",
        base_hash=base.state_hash,
        generations=CHECKPOINT_TICKS,
        checkpoint=CHECKPOINT_TICKS,
        base=base,
    )
    result = new_run_cache().run(engine_pb2.RunRequest(items=[item])).results[0]
    assert result.status == engine_pb2.RunResult.OK and len(result.events) == 1
    assert len(digested) == CHECKPOINT_TICKS
    assert sum(digested) + sum(made) == stability.HISTORY + 1
    recorded = engine.decode_state(result.state.state)
    assert len(recorded.history) == stability.HISTORY
    assert len(result.state.state) == record_sha_floor(1)["state_bytes"]


def test_the_floor_adds_up():
    floor = record_sha_floor(1)
    assert floor["digests"] == stability.HISTORY + 1
    assert floor["digest_bytes"] == 2 * 300 * 5 * 8  # alive and colour 2: 300 rows x 5 words
    _, recorded = engine.decide_tick(running_state(0), CHECKPOINT_TICKS)
    assert len(recorded.history) == stability.HISTORY
    assert floor["state_bytes"] == len(engine.encode_state(recorded))
    assert floor["record_us"] == pytest.approx(floor["state_hash_us"] + 16 * floor["digest_us"])
    per_gen = floor["record_us"] / CHECKPOINT_TICKS
    assert floor["us_per_game_generation"] == pytest.approx(per_gen)
    assert floor["games_per_core"] == pytest.approx(1e6 / (GPS * per_gen))
    assert floor["state_hash_us"] > floor["digest_us"] > 0
