"""Per-seat view bookkeeping (client/web/js/seats.js, hotseat.js, stats/series.js).

A view's ``seq`` is its seat's own version (the number of events that seat observed):
seat 1 that drew 38 blind strokes is at 40 while seat 2 is at 12 for the same game
state. The hot-seat and CellWar clients hold every seat's views, so they must order
views per seat and never compare the seqs of two seats. These run the client's modules
in the page against views shaped as the server sends them.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]


def _run(page, live_url: str, script: str):
    page.goto(live_url + "/")
    return page.evaluate(script)


KEEP_VIEW = """async () => {
    const { keepView } = await import('/js/seats.js');
    const closed = [];
    const game = { views: new Map(), latest: null, latestPid: 0, stopped: false,
                   streams: [{ close: () => closed.push(1) }, { close: () => closed.push(2) }] };
    const v = (seq, phase, generation, extra = {}) => ({ seq, phase, generation, ...extra });
    const out = {};
    const step = (name, pid, view) => {
        const kept = keepView(game, pid, view);
        out[name] = { kept, latestPid: game.latestPid, latestSeq: game.latest && game.latest.seq,
                      latestPhase: game.latest && game.latest.phase,
                      held: Object.fromEntries([...game.views].map(([p, x]) => [p, x.seq])),
                      closed: closed.length };
    };
    // Seat 1 drew 38 blind strokes: its version is far ahead of seat 2's.
    step('s1', 1, v(40, 'placement', 0, { turn: 2 }));
    step('s2 starts the simulation', 2, v(12, 'running', 0));
    step('s1 older', 1, v(39, 'placement', 0));
    step('s1 stale frame', 1, v(41, 'placement', 0));
    step('s1 catches up', 1, v(42, 'running', 30));
    step('s2 lagging', 2, v(13, 'running', 20));
    step('s2 repeats its version', 2, v(13, 'running', 20));
    step('s2 finished', 2, v(14, 'finished', 31));
    step('s1 late frame', 1, v(43, 'running', 31));
    return out;
}"""


def test_views_are_ordered_per_seat_never_across_seats(page, live_url, problems) -> None:
    out = _run(page, live_url, KEEP_VIEW)
    assert out["s1"]["latestPid"] == 1 and out["s1"]["latestSeq"] == 40
    # Seat 2's 12 is newer than seat 1's 40: another seat's numbering.
    assert out["s2 starts the simulation"] == {
        "kept": True, "latestPid": 2, "latestSeq": 12, "latestPhase": "running",
        "held": {"1": 40, "2": 12}, "closed": 0,
    }
    # Within a seat, older views are dropped.
    assert out["s1 older"]["kept"] is False and out["s1 older"]["held"]["1"] == 40
    # A seat whose stream lags keeps its own newer view, but cannot take the game back.
    assert out["s1 stale frame"]["kept"] is True
    assert out["s1 stale frame"]["held"]["1"] == 41
    assert out["s1 stale frame"]["latestPid"] == 2
    assert out["s1 stale frame"]["latestPhase"] == "running"
    assert out["s1 catches up"]["latestPid"] == 1 and out["s1 catches up"]["latestSeq"] == 42
    assert out["s2 lagging"]["held"]["2"] == 13 and out["s2 lagging"]["latestPid"] == 1
    assert out["s2 repeats its version"]["latestPid"] == 1
    # The end comes from seat 2 (lower seq than seat 1's): the streams close.
    assert out["s2 finished"]["latestPid"] == 2
    assert out["s2 finished"]["latestPhase"] == "finished"
    assert out["s2 finished"]["closed"] == 2
    # A finished game stays finished whatever seat 1's stream still brings.
    assert out["s1 late frame"]["held"]["1"] == 43
    assert out["s1 late frame"]["latestPhase"] == "finished"
    assert problems.all() == []


HOTSEAT = """async () => {
    const { HotseatGame } = await import('/js/hotseat.js');
    const g = new HotseatGame({ gameId: 'g', tokens: { 1: 'a', 2: 'b' }, config: {} });
    const players = [{ id: 1, cells: 9, budget_left: 5 }, { id: 2, cells: 4, budget_left: 7 }];
    const view = (seq, phase, extra = {}) => ({ seq, phase, generation: 288, width: 8, height: 8,
        board: '!', players, ...extra });
    const out = {};
    // Redraw: seat 1 counts 50, seat 2 counts 20 for the same state.
    g.applyView(1, view(50, 'redraw'));
    g.applyView(2, view(20, 'redraw'));
    out.display = g.displayPid();
    // Seat 2 says ready: its answer (21) is of this round in seat 2's numbering.
    g._markReady(2, { seq: 21, view: view(21, 'redraw') });
    out.ready = [...g.readyInRound];
    // The round ends and the next one begins (both seats hear of it).
    g.applyView(1, view(51, 'running'));
    g.applyView(2, view(22, 'running'));
    out.afterRound = [...g.readyInRound];
    g.applyView(1, view(60, 'redraw', { generation: 300 }));
    g.applyView(2, view(31, 'redraw', { generation: 300 }));
    // A late answer of the last round (seat 1's 52) must not count for this one.
    g._markReady(1, { seq: 52, view: view(52, 'redraw') });
    out.late = [...g.readyInRound];
    g._markReady(1, { seq: 61, view: view(61, 'redraw', { generation: 300 }) });
    out.fresh = [...g.readyInRound];
    return out;
}"""


def test_hotseat_redraw_readiness_counts_each_seat_in_its_own_numbering(
    page, live_url, problems
) -> None:
    out = _run(page, live_url, HOTSEAT)
    assert out["display"] == 1  # redraw: the seat chosen to draw (seat 1 by default)
    assert out["ready"] == [2]
    assert out["afterRound"] == []
    assert out["late"] == []
    assert out["fresh"] == [1]
    assert problems.all() == []


SERIES = """async () => {
    const { CellSeries } = await import('/js/stats/series.js');
    const s = new CellSeries();
    const view = (seq, c1, c2) => ({ seq, generation: 288, players: [{ id: 1, cells: c1 }, { id: 2, cells: c2 }] });
    const out = {};
    s.add(view(50, 10, 5), undefined, 1);  // seat 1's numbering
    s.add(view(21, 10, 6), undefined, 2);  // seat 2 drew one cell in the redraw: newer
    out.live = s.toJSON().counts;
    s.add(view(20, 10, 5), undefined, 2);  // older in seat 2's own numbering
    out.older = s.toJSON().counts;
    s.add(view(9, 10, 5), undefined, 'past');  // a replay of the past: never over a live row
    out.past = s.toJSON().counts;
    return out;
}"""


def test_chart_rows_compare_seqs_of_one_seat_only(page, live_url, problems) -> None:
    out = _run(page, live_url, SERIES)
    assert out["live"] == {"1": [10], "2": [6]}
    assert out["older"] == {"1": [10], "2": [6]}
    assert out["past"] == {"1": [10], "2": [6]}
    assert problems.all() == []
