"""``cellwar show FILE --seq N`` (docs/replays.md "Log files"): the board of a golden log at
a known seq as text (header, cells, units) and as a PNG (size, colours of the web client's
palette)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from client.cli.render import FOG, PALETTE
from tests.cli.conftest import LOGS, read

LIFE = LOGS / "v2" / "life-2p-redraw.jsonl"
CELLWAR = LOGS / "v2" / "cellwar-2p-two-hit-production.jsonl"
CAMPAIGN = LOGS / "v2" / "campaign-win.jsonl"
#: Player 1's cells after seq 7 of LIFE, from the payloads: place (3..5, 3), the library
#: block stamped at (8, 10), place (1, 15) and (2, 15), erase (1, 15).
RED_AT_7 = {(3, 3), (4, 3), (5, 3), (8, 10), (9, 10), (8, 11), (9, 11), (2, 15)}


def board(out: str, height: int) -> list[list[str]]:
    """The last ``height`` board rows of a text picture (before a unit list), as tokens."""
    block = out.split("\n\n")[1]
    rows = [line.split() for line in block.splitlines()]
    assert len(rows) == height
    return rows


def cells_of(rows: list[list[str]], token: str) -> set[tuple[int, int]]:
    return {(x, y) for y, row in enumerate(rows) for x, t in enumerate(row) if t == token}


def test_life_board_at_a_seq_shows_the_placed_cells(cellwar):
    run = cellwar("show", LIFE, "--seq", 7, "--color", "never")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "life-2p-redraw.jsonl · seq 7 of 32 (ActionApplied) · life 30×20"
    assert lines[1].startswith("phase placement · generation 0 · turn: player 1")
    assert lines[2].split() == ["A", "red", "alice", "cells", "8", "budget", "32"]
    assert lines[3].split() == ["B", "green", "bob", "cells", "0", "budget", "40"]
    rows = board(run.out, 20)
    assert all(len(r) == 30 for r in rows)
    assert cells_of(rows, "A") == RED_AT_7
    assert cells_of(rows, "B") == set()
    assert sum(row.count(".") for row in rows) == 30 * 20 - 8


def test_life_board_after_generations_has_moved(cellwar):
    """The blinker placed at (3..5, 3) is vertical after an odd number of generations."""
    events = read(LIFE)
    first_tick = next(e for e in events if e["type"] == "GenerationsTicked")
    gens = first_tick["payload"]["count"]
    run = cellwar("show", LIFE, "--seq", first_tick["seq"], "--color", "never")
    assert run.code == 0
    assert f"generation {gens}" in run.out.splitlines()[1]
    rows = board(run.out, 20)
    blinker = {(4, 2), (4, 3), (4, 4)} if gens % 2 else {(3, 3), (4, 3), (5, 3)}
    assert blinker <= cells_of(rows, "A")


def test_a_player_view_in_blind_placement_hides_the_others(cellwar):
    seq = next(e["seq"] for e in read(LIFE) if e["actor"] == 2 and e["type"] == "ActionApplied")
    whole = board(cellwar("show", LIFE, "--seq", seq, "--color", "never").out, 20)
    seen_by_1 = board(cellwar("show", LIFE, "--seq", seq, "--player", 1, "--color", "never").out, 20)
    assert cells_of(whole, "B") and not cells_of(seen_by_1, "B")
    assert cells_of(seen_by_1, "A") == cells_of(whole, "A")


def test_cellwar_board_shows_units_by_type_and_owner(cellwar):
    start = read(CELLWAR)[0]["payload"]["config"]["units"]
    run = cellwar("show", CELLWAR, "--seq", 3, "--color", "never")
    assert run.code == 0
    assert "phase playing · round 1 · turn: player 1" in run.out
    rows = board(run.out, 8)
    letter = {"infantry": "I", "fortification": "F", "factory": "P"}
    expected = {(u["x"], u["y"]): f"{letter[u['type']]}{u['owner']}" for u in start}
    shown = {(x, y): t for y, row in enumerate(rows) for x, t in enumerate(row) if t != "."}
    assert shown == expected
    for u in start:
        if u["type"] == "fortification":
            assert f"at ({u['x']}, {u['y']}) standing {u.get('standing', 1)}" in run.out


def test_cellwar_player_view_fogs_what_its_units_do_not_see(cellwar):
    start = read(CELLWAR)[0]["payload"]["config"]["units"]
    run = cellwar("show", CELLWAR, "--seq", 3, "--player", 1, "--color", "never")
    rows = board(run.out, 8)
    vision = {"infantry": 1, "fortification": 2, "factory": 1}  # Chebyshev radius (seed "Юниты")
    seen = {
        (x, y)
        for u in start
        if u["owner"] == 1
        for x in range(8)
        for y in range(8)
        if max(abs(x - u["x"]), abs(y - u["y"])) <= vision[u["type"]]
    }
    assert {(x, y) for y, row in enumerate(rows) for x, t in enumerate(row) if t != "#"} == seen
    assert "units hidden" in run.out  # the enemy's count is not told


def test_colour_output_uses_ansi_colours_of_the_palette(cellwar):
    run = cellwar("show", CAMPAIGN, "--seq", 6, "--color", "always")
    r, g, b = PALETTE[2]
    assert f"\x1b[38;2;{r};{g};{b}m████\x1b[0m" in run.out  # the green enemy block, two cells wide
    assert "level 1 Warm-up" in run.out and "B enemy   cells 4" in run.out


def test_png_has_one_block_per_cell_in_the_web_palette(cellwar, tmp_path: Path):
    out = tmp_path / "life.png"
    run = cellwar("show", LIFE, "--seq", 7, "--png", out, "--scale", 5)
    assert run.code == 0, run.err
    assert "wrote" in run.err
    image = Image.open(out).convert("RGB")
    assert image.size == (30 * 5, 20 * 5)
    for x in range(30):
        for y in range(20):
            colour = PALETTE[1] if (x, y) in RED_AT_7 else PALETTE[0]
            for px, py in ((x * 5, y * 5), (x * 5 + 4, y * 5 + 4)):
                assert image.getpixel((px, py)) == colour, (x, y)


def test_cellwar_png_draws_units_in_owner_colours_and_the_fog(cellwar, tmp_path: Path):
    out = tmp_path / "cw.png"
    assert cellwar("show", CELLWAR, "--seq", 3, "--player", 1, "--png", out, "--scale", 12).code == 0
    image = Image.open(out).convert("RGB")
    assert image.size == (96, 96)
    centre = lambda x, y: image.getpixel((x * 12 + 6, y * 12 + 6))  # noqa: E731
    assert centre(1, 1) == PALETTE[1]  # red infantry
    assert centre(2, 1) == PALETTE[2]  # a green fortification red can see
    assert centre(0, 0) == PALETTE[0]  # empty, visible
    assert centre(6, 6) == FOG  # a green infantry in the fog
    assert image.getpixel((0, 0)) == PALETTE[0]

    default = tmp_path / "default.png"
    assert cellwar("show", CELLWAR, "--png", default).code == 0
    assert Image.open(default).size == (8 * 32, 8 * 32)  # at most 32 px per cell by default


def test_show_refuses_a_seq_beyond_the_log_and_a_log_that_does_not_fold(cellwar, tmp_path: Path):
    run = cellwar("show", LIFE, "--seq", 33)
    assert run.code == 2 and "no event with seq 33 (its seqs run 1..32)" in run.err
    events = read(LIFE)
    events[3]["payload"]["action"]["cells"] = [[29, 0]]  # out of player 1's zone
    from tests.cli.conftest import write

    bad = write(tmp_path / "bad.jsonl", events)
    run = cellwar("show", bad, "--seq", 10)
    assert run.code == 1 and "does not fold to seq 10: OUT_OF_ZONE" in run.err
    assert cellwar("show", tmp_path / "missing.jsonl").code == 2
    run = cellwar("show", LIFE, "--player", 3)
    assert run.code == 2 and "the game has seats 1..2" in run.err


def test_player_0_is_the_live_spectator_who_sees_nothing_during_blind_placement(cellwar):
    rows = board(cellwar("show", LIFE, "--seq", 7, "--player", 0, "--color", "never").out, 20)
    assert cells_of(rows, "A") == set()


def test_a_png_scale_past_the_largest_picture_is_refused_with_the_scale_that_fits(cellwar, tmp_path: Path):
    out = tmp_path / "huge.png"
    run = cellwar("show", LIFE, "--png", out, "--scale", 100000)
    assert run.code == 2
    width = read(LIFE)[0]["payload"]["config"]["width"]
    assert f"--scale 100000 makes a {width * 100000}×" in run.err
    assert f"at most 16,384 px a side (--scale {16384 // width} or less)" in run.err
    assert not out.exists()


def test_show_refuses_a_log_not_numbered_1_2_3(cellwar, tmp_path: Path):
    from tests.cli.conftest import write

    events = read(LIFE)
    events[2]["seq"] = 10**30
    run = cellwar("show", write(tmp_path / "renumbered.jsonl", events))
    assert run.code == 1
    assert f"event #3 has seq {10**30}, not 3: a log is numbered 1, 2, … (run cellwar verify)" in run.err
