"""A phone (390×844, touch) against the real stack: the Life placement screen shows the
whole pattern menu and its Done button right under the board; CellWar says "Tap", not
"Click"; a statistics chart of one point or of zeros has real axes; the CellWar replay
and the combat log name an attack an attack (client/web/js/replay/events.js cwAction)."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.lifekit import new_game, watch
from tests.browser.restkit import post
from tests.browser.test_cellwar_play import open_cellwar, wait_cw
from tests.browser.test_fork_watch import duel

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

PHONE = {"width": 390, "height": 844}

#: The box of an element by id, and the width the selected option's text needs.
BOXES = """() => {
  const box = (el) => { const b = el.getBoundingClientRect(); return {x: b.x, y: b.y, w: b.width, h: b.height}; };
  const sel = document.querySelector('#toolbar select');
  const probe = document.createElement('span');
  probe.style.font = getComputedStyle(sel).font;
  probe.style.position = 'absolute';
  probe.textContent = sel.options[sel.selectedIndex].text;
  document.body.append(probe);
  const need = probe.getBoundingClientRect().width;
  probe.remove();
  return {board: box(document.getElementById('board')), done: box(document.getElementById('btn-done')),
          select: box(sel), need, iw: innerWidth};
}"""


@pytest.fixture
def phone(browser, problems):
    ctx = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    watch(page, problems)
    yield page
    ctx.close()


def test_placement_shows_the_whole_pattern_menu_and_done_under_the_board(phone, live_url, problems) -> None:
    new_game(phone, live_url)
    phone.wait_for_function(
        "() => document.querySelector('#toolbar select') &&"
        " document.getElementById('board').getBoundingClientRect().width >= 0.85 * (innerWidth - 24)"
    )
    b = phone.evaluate(BOXES)
    sel = b["select"]
    assert sel["x"] >= 0 and sel["x"] + sel["w"] <= b["iw"], b
    assert sel["w"] >= b["need"] + 20, b  # the text and the menu's arrow
    gap = b["done"]["y"] - (b["board"]["y"] + b["board"]["h"])
    assert 0 <= gap <= 60, b
    assert problems.all() == []


def test_cellwar_on_a_touch_screen_says_tap(phone, live_url, problems) -> None:
    gid, tok = duel(live_url, p2_x=7)
    save = {"gameId": gid, "tokens": {str(k): v for k, v in tok.items()}, "mode": "hotseat",
            "accepted": None, "config": {"width": 8, "height": 8, "players": 2}}
    open_cellwar(phone, live_url, save)
    hint = phone.get_by_test_id("cw-hint")
    phone.wait_for_function("() => document.getElementById('cw-hint').textContent.length > 0")
    assert hint.inner_text().startswith("Tap "), hint.inner_text()
    assert problems.all() == []


def test_a_chart_of_one_point_or_of_zeros_has_real_axes(phone, live_url, problems) -> None:
    phone.goto(live_url + "/")
    scales = phone.evaluate("""async () => {
      const { CellChart } = await import('/js/stats/chart.js');
      const { CellSeries } = await import('/js/stats/series.js');
      const el = document.createElement('div');
      el.className = 'chart';
      document.body.append(el);
      const out = {};
      for (const [name, views] of Object.entries({
        one: [{ kind: 'life', generation: 0, players: [{ id: 1, cells: 0 }, { id: 2, cells: 0 }] }],
        zeros: [0, 1, 2].map((g) => ({ kind: 'life', generation: g, players: [{ id: 1, cells: 0 }] })),
        some: [0, 1].map((g) => ({ kind: 'life', generation: g, players: [{ id: 1, cells: 40 + g }] })),
      })) {
        const s = new CellSeries();
        views.forEach((v, i) => s.add(v, i + 1));
        const chart = new CellChart(el, s);
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        const { x, y } = chart.plot.scales;
        out[name] = { x: [x.min, x.max], y: [y.min, y.max] };
        chart.destroy();
      }
      el.remove();
      return out;
    }""")
    assert scales["one"] == {"x": [0, 1], "y": [0, 1]}, scales
    assert scales["zeros"] == {"x": [0, 2], "y": [0, 1]}, scales
    assert scales["some"]["y"][0] == 0 and scales["some"]["y"][1] > 41, scales
    assert problems.all() == []


def _attack_game(base: str) -> tuple[str, dict[int, str], int]:
    """A duel where player 1's infantry at (0, 0) stands next to player 2's at (1, 0)."""
    gid, tok = duel(base, p2_x=1)
    with httpx.Client(base_url=base, timeout=10) as c:
        view = c.get(f"/game/{gid}/state", headers={"Authorization": f"Bearer {tok[1]}"}).json()
    unit = next(u["id"] for u in view["units"] if u["owner"] == 1)
    return gid, tok, unit


def test_cellwar_replay_and_combat_log_name_an_attack(phone, live_url, problems) -> None:
    from playwright.sync_api import expect

    gid, tok, unit = _attack_game(live_url)
    # The combat log of the attacker's seat: the attack was sent from elsewhere (not from
    # this browser), so its words come from the seat's view before it.
    save = {"gameId": gid, "tokens": {str(k): v for k, v in tok.items()}, "mode": "hotseat",
            "accepted": None, "config": {"width": 8, "height": 8, "players": 2}}
    open_cellwar(phone, live_url, save)
    wait_cw(phone, "s.shownPid === 1")
    with httpx.Client(base_url=live_url, timeout=10) as c:
        post(c, f"/game/{gid}/action", tok[1], {"unit_id": unit, "dx": 1, "dy": 0})
    log = phone.locator("#cw-log li[data-type='ActionApplied']")
    expect(log.first).to_contain_text("attacked the infantry at (1, 0)")

    events = httpx.get(f"{live_url}/game/{gid}/events", timeout=10).json()["events"]
    attack = next(e["seq"] for e in events if e["type"] == "ActionApplied")
    phone.goto(f"{live_url}/#replay={gid}")
    phone.wait_for_function(f"() => window.cellwarModes.replay().shownSeq === {events[-1]['seq']}")
    phone.get_by_test_id(f"replay-event-{attack}").tap()
    item = phone.get_by_test_id(f"replay-event-{attack}")
    expect(item).to_contain_text(f"infantry #{unit} attacked the infantry at (1, 0)")
    expect(item).to_have_attribute("data-action", "attack")
    assert problems.all() == []


def test_campaign_result_chart_has_room_to_plot(phone, live_url, problems) -> None:
    from playwright.sync_api import expect

    from engine.campaign.levels import SOLUTIONS
    from tests.browser.test_campaign import camp, click_cell, wait_camp

    phone.goto(live_url + "/")
    phone.get_by_test_id("mode-campaign").click()
    phone.get_by_test_id("camp-level-1").click()
    wait_camp(phone, "s.level === 1 && s.phase === 'placement'")
    width = camp(phone)["width"]
    for x, y in SOLUTIONS[1]["cells"]:
        click_cell(phone, width, x, y)
    phone.get_by_test_id("camp-ready").click()
    wait_camp(phone, "s.phase === 'finished'")
    expect(phone.get_by_test_id("camp-end")).to_be_visible()
    phone.wait_for_function("() => document.querySelector('#chart-camp-end .u-over')")
    plot = phone.locator("#chart-camp-end .u-over").bounding_box()
    assert plot["height"] >= 80 and plot["width"] >= 200, plot  # not a flat strip
    counts = phone.evaluate("window.cellwarCharts.campaign().counts")
    assert max(max(v) for v in counts.values()) > 0  # the enemy's block had cells
    assert problems.all() == []
