"""The statistics chart against the real stack: each colour's cell count over generations,
drawn live while the simulation runs, kept on the result screen and in the replay. At a
few generations (the simulation paused there) the chart's counts must equal what
``GET /game/{id}/state`` reports.

The game is a 60×60 torus: a pulsar (48, 56 or 72 cells: the counts move) and a glider
whose trip round the torus takes 240 generations, so the board never repeats within 15
generations: it never settles, and each pause of the test lands while it runs, however
slow the machine."""

from __future__ import annotations

import pytest

from tests.browser.conftest import doc_shot
from tests.browser.lifekit import rotated_pattern, wait_snapshot
from tests.browser.restkit import BLOCK, GLIDER, LifeGame, at, open_saved

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def chart(page, name: str) -> dict:
    return page.evaluate(f"window.cellwarCharts['{name}']()")


def wait_point(page, name: str, generation: int, counts: dict[str, int]) -> None:
    """Wait until chart `name` holds `counts` at `generation`."""
    page.wait_for_function(
        """([name, g, want]) => {
            const s = window.cellwarCharts[name]();
            const i = s.generations.indexOf(g);
            return i >= 0 && Object.entries(want).every(([pid, n]) => s.counts[pid] && s.counts[pid][i] === n);
        }""",
        arg=[name, generation, counts],
    )


def state_counts(game: LifeGame) -> tuple[int, dict[str, int]]:
    view = game.state()
    return view["generation"], {str(p["id"]): p["cells"] for p in view["players"]}


@pytest.mark.screenshots
def test_chart_counts_equal_the_server_live_result_and_replay(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    game = LifeGame(live_url, {"width": 60, "height": 60, "budget": 60, "torus": True})
    pulsar = sorted(rotated_pattern("pulsar", 0))
    game.place(1, at(pulsar, 8, 30) + at(GLIDER, 20, 12))  # clear of each other for ever
    game.end_turn(1)
    game.place(2, at(BLOCK, 45, 28) + at(BLOCK, 50, 10))
    game.end_turn(2)
    game.act(1, {"type": "pause"})  # each stretch of the simulation is started by the test
    try:
        open_saved(page, live_url, game)
        wait_snapshot(page, f"s.gameId === '{game.id}' && s.phase === 'paused'")
        expect(page.get_by_test_id("stats-game")).to_be_visible()
        seen: dict[int, dict[str, int]] = {}
        for _ in range(3):
            last = page.evaluate("window.cellwar.snapshot().generation")
            page.get_by_test_id("btn-pause").click()  # resume
            wait_snapshot(page, f"s.phase === 'running' && s.generation > {last + 5}")
            page.get_by_test_id("btn-pause").click()
            wait_snapshot(page, "s.phase === 'paused'")
            generation, counts = state_counts(game)
            wait_point(page, "game", generation, counts)  # live, and equal to GET /state
            seen[generation] = counts
            if len(seen) == 2:
                doc_shot(page, "life-running")
        assert len(seen) == 3, seen
        series = chart(page, "game")
        assert series["gameId"] == game.id
        assert series["generations"] == sorted(series["generations"])
        assert len(series["generations"]) >= 3
        assert int(page.get_by_test_id("chart-game").get_attribute("data-points")) >= 3

        # The result screen keeps the chart, with the final counts.
        page.get_by_test_id("btn-finish").click()
        page.get_by_test_id("confirm-yes").click()
        expect(page.get_by_test_id("winner")).to_be_visible()
        generation, counts = state_counts(game)
        wait_point(page, "game", generation, counts)
        expect(page.get_by_test_id("chart-winner").locator("canvas")).to_have_count(1)
        assert page.get_by_test_id("chart-winner").get_attribute("data-points") == str(
            len(chart(page, "game")["generations"])
        )

        # The replay draws the same counts (sampled replays of the log).
        page.get_by_test_id("winner-replay").click()
        expect(page.get_by_test_id("screen-replay")).to_be_visible()
        for g, want in {**seen, generation: counts}.items():
            wait_point(page, "replay", g, want)
        expect(page.get_by_test_id("chart-replay").locator("canvas")).to_have_count(1)
    finally:
        game.close()
    assert problems.all() == []
