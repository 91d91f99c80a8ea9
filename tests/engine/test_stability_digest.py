"""Stability digests of engine version 3 (engine/life/stability.py, engine/versions.py):
every path that digests a board — the uint8 board, the plain tick's Python-int planes, the
packed tick path's uint64 planes — gives the same digest for the same board, whatever
colour set it keeps; different boards (colours included) give different digests;
versions 1 and 2 keep the uint8 digest; upgrading a running Life game to 3 empties its
history and stability is still found afterwards."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.life import game as life
from engine.life import stability
from engine.life.bitboard import bitboard, colours_of
from engine.life.packed_runs import _digests, _shape_of
from engine.life.state import LifeState

COLOUR_SETS = [(1,), (2,), (3,), (4,), (1, 2), (2, 3), (1, 4), (3, 4), (1, 2, 3), (1, 2, 3, 4)]


@st.composite
def boards(draw) -> np.ndarray:
    """(H, W) uint8 boards of one colour set, widths around word boundaries."""
    h = draw(st.integers(1, 12))
    w = draw(st.sampled_from([1, 7, 63, 64, 65, 100, 128, 130]))
    colours = draw(st.sampled_from(COLOUR_SETS))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    values = rng.choice(np.array((0, *colours), dtype=np.uint8), size=(h, w))
    return values


@settings(max_examples=150, deadline=None)
@given(boards())
def test_every_path_gives_the_same_version_3_digest(board):
    digest = stability.board_planes_digest(board)
    assert stability.life_digest(board, "3") == digest
    bb = bitboard(board.shape[0], board.shape[1], False, colours_of(board))
    planes = bb.load(board)
    assert np.array_equal(bb.board(planes), board)
    assert bb.digest(planes, "3") == digest
    # the bitboard of the four-colour set keeps other planes for the same board
    wide = bitboard(board.shape[0], board.shape[1], False, (1, 2, 3, 4))
    assert wide.digest(wide.load(board), "3") == digest


def packed_digest(board: np.ndarray, players: int) -> bytes:
    """The packed tick path's version 3 digest of ``board`` in a game of ``players``."""
    h, w = board.shape
    config = engine.config_from_dict("life", {"width": w, "height": h, "players": players, "budget": w * h})
    state = LifeState(config=config, board=board.tobytes(), phase="running")
    shape = _shape_of(state)
    region = shape.region(board)
    masked = np.bitwise_and(region.reshape(region.shape[0], -1), shape.region_mask)
    return _digests(shape, masked[None], "3")[0]


@settings(max_examples=60, deadline=None)
@given(boards(), st.sampled_from([2, 4]))
def test_the_packed_path_gives_the_same_version_3_digest(board, players):
    allowed = (1, 2) if players == 2 else (1, 2, 3, 4)
    board = np.where(np.isin(board, allowed), board, 0).astype(np.uint8)
    if min(board.shape) < 8:  # the smallest Life board is 8 x 8
        board = np.pad(board, ((0, max(0, 8 - board.shape[0])), (0, max(0, 8 - board.shape[1]))))
    assert packed_digest(board, players) == stability.board_planes_digest(board)


def test_a_changed_cell_or_colour_changes_the_digest():
    rng = np.random.default_rng(7)
    board = rng.choice(np.array([0, 1, 2, 3, 4], dtype=np.uint8), size=(40, 70))
    seen = {stability.board_planes_digest(board)}
    for value in range(5):  # each value at one cell
        other = board.copy()
        other[13, 66] = value
        if value != board[13, 66]:
            digest = stability.board_planes_digest(other)
            assert digest not in seen
            seen.add(digest)
    # a board of colours 1-2 and the same live cells with colour 3 where 1 was
    two = rng.choice(np.array([0, 1, 2], dtype=np.uint8), size=(20, 20))
    three = np.where(two == 1, 3, two).astype(np.uint8)
    assert stability.board_planes_digest(two) != stability.board_planes_digest(three)
    assert len(stability.board_planes_digest(two)) == stability.DIGEST_SIZE


def test_versions_1_and_2_keep_the_uint8_digest():
    board = np.random.default_rng(3).choice(np.array([0, 1, 2], dtype=np.uint8), size=(30, 50))
    expected = hashlib.sha256(board.tobytes()).digest()[:16]
    for rules in ("1", "2"):
        assert stability.life_digest(board, rules) == expected
        bb = bitboard(30, 50, False, colours_of(board))
        assert bb.digest(bb.load(board), rules) == expected
    assert stability.life_digest(board, "3") != expected


BLINKERS = [[1, 1], [2, 1], [3, 1]], [[12, 5], [12, 6], [12, 7]]


def running_blinkers(rules: str):
    """A 2-player Life game of two blinkers (period 2), running, under ``rules``."""
    cfg = {"kind": "life", "config": {"width": 16, "height": 12, "players": 2}}
    state = engine.apply_event(None, "GameCreated", 0, cfg, engine_version=rules)
    for name in ("a", "b"):
        state = engine.apply_event(state, "PlayerJoined", 0, {"name": name}, engine_version=rules)
    for pid, cells in enumerate(BLINKERS, start=1):
        state = engine.apply_event(
            state, "ActionApplied", pid, {"action": {"type": "place", "cells": cells}}, engine_version=rules
        )
        state = engine.apply_event(state, "TurnEnded", pid, {}, engine_version=rules)
    assert state.phase == "running"
    return state


def test_version_3_finds_the_period_of_two_blinkers():
    state = running_blinkers("3")
    after = life.tick(state, 1)
    assert after.phase == "running" and len(after.history) == 1
    assert life.tick(after, 1).phase == "redraw"  # the board of 2 generations ago again
    assert life.tick(state, 10).generation == 2


def test_upgrading_a_running_game_to_3_empties_its_history_and_finds_stability_again():
    old = life.tick(running_blinkers("2"), 1)
    assert old.phase == "running" and len(old.history) == 1 and old.rules == "2"
    upgraded = engine.api.upgrade(old, "3")
    assert upgraded.rules == "3" and upgraded.history == ()
    assert upgraded.board == old.board and upgraded.generation == old.generation
    # the fold of a version 3 tick after version 2 events is what decide gives
    drafts, decided = engine.decide_tick(old, 5)
    folded = old
    for d in drafts:
        folded = engine.apply_event(folded, d.type, d.actor, d.payload, engine_version=engine.ENGINE_VERSION)
        assert engine.state_hash(folded) == d.state_hash
    # without the old history the repeat is found one period later: generation 3, not 2
    assert decided.phase == "redraw" and decided.generation == 3
    assert life.tick(old, 5).generation == 2  # under version 2 it stops at 2
