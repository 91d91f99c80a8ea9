"""The campaign in the browser client against the real stack.

Open the campaign (a profile is created on the first visit and kept in localStorage),
play level 1 with its documented solution (cells clicked on the canvas, "Ready"), see
the end screen, level 2 unlocked in the list, still unlocked after a reload; "Menu" parks
a level and "Continue campaign" returns to it; the campaign's tool choice never changes
the preferences of ordinary games. Screenshots in both themes.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import TIMEOUT_MS, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def camp(page) -> dict:
    return page.evaluate("window.cellwarModes.campaign()")


def wait_camp(page, predicate_js: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_function(
        f"() => {{ const s = window.cellwarModes.campaign(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


def life_tool(page) -> str | None:
    """The drawing tool saved in the preferences of ordinary games."""
    data = json.loads(page.evaluate("localStorage.getItem('cellwar.v1')") or "{}")
    return (data.get("prefs") or {}).get("tool")


def click_cell(page, width: int, x: int, y: int) -> None:
    box = page.get_by_test_id("camp-board").bounding_box()
    assert box and box["width"] > 0
    cell = box["width"] / width
    page.mouse.click(box["x"] + (x + 0.5) * cell, box["y"] + (y + 0.5) * cell)


def test_campaign_level_1_win_unlocks_level_2(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    from engine.campaign.levels import SOLUTIONS

    if httpx.get(f"{live_url}/campaign/levels", timeout=10).status_code == 404:
        pytest.skip("the campaign API (GET /campaign/levels, POST /profiles) is not in the gateway")

    page.goto(live_url + "/")
    page.get_by_test_id("mode-campaign").click()
    level1 = page.get_by_test_id("camp-level-1")
    expect(level1).to_have_attribute("data-locked", "false")
    expect(page.get_by_test_id("camp-level-2")).to_have_attribute("data-locked", "true")
    expect(page.get_by_test_id("camp-level-103")).to_have_attribute("data-locked", "true")
    page.get_by_test_id("camp-howto").locator("summary").click()
    shot(page, "campaign-01-levels-dark")

    level1.click()
    wait_camp(page, "s.level === 1 && s.phase === 'placement'")
    s = camp(page)
    expect(page.get_by_test_id("camp-level")).to_have_text("Level 1/103")
    budget = s["budget"]
    page.get_by_test_id("camp-tool-brush").click()
    assert life_tool(page) != "brush"  # the campaign keeps its own tool
    assert json.loads(page.evaluate("localStorage.getItem('cellwar.campaign.v1')"))["tool"] == "brush"
    page.get_by_test_id("camp-tool-pencil").click()
    for x, y in SOLUTIONS[1]["cells"]:
        click_cell(page, s["width"], x, y)
    wait_camp(page, f"s.budget === {budget - len(SOLUTIONS[1]['cells'])} && !s.busy")
    expect(page.get_by_test_id("camp-budget")).to_have_text(str(budget - len(SOLUTIONS[1]["cells"])))
    shot(page, "campaign-02-level-dark")
    page.get_by_test_id("camp-ready").click()
    wait_camp(page, "s.phase === 'finished'")
    assert camp(page)["result"] == "win"
    expect(page.get_by_test_id("camp-end")).to_be_visible()
    expect(page.get_by_test_id("camp-end-title")).to_have_attribute("data-result", "win")
    expect(page.get_by_test_id("camp-end-next")).to_be_visible()
    shot(page, "campaign-03-win-dark")

    # Levels: level 2 is unlocked now, and after a reload too (server-side progress).
    page.get_by_test_id("camp-end-levels").click()
    expect(page.get_by_test_id("camp-level-2")).to_have_attribute("data-locked", "false")
    profile = json.loads(page.evaluate("localStorage.getItem('cellwar.campaign.v1')"))
    assert profile["profileToken"]
    page.reload()
    page.get_by_test_id("mode-campaign").click()
    expect(page.get_by_test_id("camp-level-2")).to_have_attribute("data-locked", "false")
    expect(page.get_by_test_id("camp-level-1")).to_contain_text("solved")

    # Level 2, parked with "Menu", continued from the start screen (light theme).
    page.get_by_test_id("camp-level-2").click()
    wait_camp(page, "s.level === 2 && s.phase === 'placement'")
    page.get_by_test_id("camp-menu").click()
    page.get_by_test_id("pref-theme").select_option("light")
    expect(page.get_by_test_id("btn-continue-campaign")).to_be_visible()
    page.get_by_test_id("btn-continue-campaign").click()
    wait_camp(page, "s.level === 2 && s.phase === 'placement'")
    expect(page.get_by_test_id("camp-level")).to_have_text("Level 2/103")
    shot(page, "campaign-02-level-light")

    # Restart asks first; then back to the list.
    page.get_by_test_id("camp-restart").click()
    expect(page.get_by_test_id("confirm")).to_be_visible()
    page.get_by_test_id("confirm-no").click()
    page.get_by_test_id("camp-menu").click()
    page.get_by_test_id("mode-campaign").click()
    expect(page.get_by_test_id("camp-continue")).to_be_visible()
    shot(page, "campaign-01-levels-light")
    assert life_tool(page) != "brush"
    assert problems.all() == []
