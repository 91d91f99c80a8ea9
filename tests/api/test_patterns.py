"""The stamp library through the public API: ``GET /patterns`` (engine → session →
gateway) and a rotated stamp placing exactly the catalogue's cells turned clockwise."""

from __future__ import annotations

import httpx
import pytest

from client.sdk import AsyncCellWarClient
from engine.life.rle import rle_body_to_board

pytestmark = pytest.mark.integration

CATEGORY_ORDER = ["still_lifes", "oscillators", "spaceships", "methuselahs", "guns"]


def turned_clockwise(cells: list[list[int]], height: int) -> set[tuple[int, int]]:
    """Cells [x, y] of a box ``height`` rows high after one quarter turn clockwise (y
    down): (x, y) goes to (height - 1 - y, x)."""
    return {(height - 1 - y, x) for x, y in cells}


async def test_patterns_catalogue(gateway: str):
    async with httpx.AsyncClient(base_url=gateway) as http:
        response = await http.get("/patterns")
    assert response.status_code == 200
    data = response.json()
    assert list(data["categories"]) == CATEGORY_ORDER
    assert data["categories"]["spaceships"] == ["glider", "lwss", "mwss", "hwss", "loafer"]
    patterns = data["patterns"]
    assert len(patterns) == 29
    assert sum(len(ids) for ids in data["categories"].values()) == 29
    assert [p["id"] for p in patterns] == [pid for ids in data["categories"].values() for pid in ids]
    by_id = {p["id"]: p for p in patterns}
    glider = by_id["glider"]
    assert (glider["name"], glider["category"], glider["width"], glider["height"]) == ("Glider", "spaceships", 3, 3)
    assert len(glider["cells"]) == 5
    assert sorted(map(tuple, by_id["block"]["cells"])) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert by_id["gosper_glider_gun"]["category"] == "guns"
    assert len(by_id["gosper_glider_gun"]["cells"]) == 36
    for p in patterns:
        assert set(p) >= {"id", "name", "category", "width", "height", "cells"}
        assert all(0 <= x < p["width"] and 0 <= y < p["height"] for x, y in p["cells"])


async def test_stamp_with_rotation_places_the_turned_cells(api: AsyncCellWarClient):
    catalogue = await api.patterns()
    glider = next(p for p in catalogue["patterns"] if p["id"] == "glider")
    game_id = await api.create_game("life", {"width": 40, "height": 40, "players": 2, "budget": 100})
    red = await api.join(game_id, "red")
    await api.join(game_id, "green")

    reply = await api.stamp(game_id, red.token, 5, 7, "glider", rotation=1)

    view = reply["view"]
    board = rle_body_to_board(view["board"], view["width"], view["height"])
    ys, xs = (board == 1).nonzero()
    placed = {(int(x), int(y)) for x, y in zip(xs, ys, strict=True)}
    expected = {(x + 5, y + 7) for x, y in turned_clockwise(glider["cells"], glider["height"])}
    assert placed == expected
    # A glider turned once is not the glider itself (the test would prove nothing).
    assert expected != {(x + 5, y + 7) for x, y in glider["cells"]}
    assert view["players"][0]["budget_left"] == 95
    assert int((board == 2).sum()) == 0
