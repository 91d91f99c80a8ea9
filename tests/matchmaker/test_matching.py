"""The matching step as a pure function (services/matchmaker/domain.py): tickets in,
matches out. Unit tests and a Hypothesis property test."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaker.domain import (
    Candidate,
    config_problem,
    form_matches,
    merge_configs,
    percentile,
    queue_problem,
    rating_window,
)

NOW = 1_000.0


def cand(tid: str, rating: float = 1500.0, waited: float = 0.0, **config) -> Candidate:
    return Candidate(tid, NOW - waited, rating, config)


def test_two_compatible_tickets_are_matched_oldest_first_in_seat_order():
    matches = form_matches([cand("b", waited=1), cand("a", waited=5)], 2, NOW)
    assert [m.ticket_ids for m in matches] == [("a", "b")]
    assert matches[0].config == {}


def test_fields_set_by_one_ticket_are_taken_and_by_two_must_agree():
    matches = form_matches([cand("a", width=80), cand("b", torus=True, width=80)], 2, NOW)
    assert matches[0].config == {"width": 80, "torus": True}


def test_configs_that_disagree_are_never_matched_together():
    assert form_matches([cand("a", width=60), cand("b", width=80)], 2, NOW) == []
    # ... even when waiting for ever: the window widens, the configs do not.
    assert form_matches([cand("a", waited=299, width=60), cand("b", waited=299, width=80)], 2, NOW) == []


def test_a_compatible_third_ticket_takes_the_place_of_a_conflicting_one():
    matches = form_matches(
        [cand("a", waited=3, width=60), cand("b", waited=2, width=80), cand("c", waited=1)], 2, NOW
    )
    assert [m.ticket_ids for m in matches] == [("a", "c")]
    assert matches[0].config == {"width": 60}


def test_four_player_match_needs_four_mutually_compatible_tickets():
    tickets = [cand("a", waited=4, budget=50), cand("b", waited=3), cand("c", waited=2, budget=70),
               cand("d", waited=1), cand("e", waited=0)]
    matches = form_matches(tickets, 4, NOW)
    assert [m.ticket_ids for m in matches] == [("a", "b", "d", "e")]
    assert matches[0].config == {"budget": 50}
    assert form_matches(tickets[:4], 4, NOW) == []


def test_rating_window_starts_at_100_and_is_unlimited_after_60_seconds():
    assert rating_window(0) == 100
    assert rating_window(10) == 250
    assert rating_window(59) == pytest.approx(985)
    assert math.isinf(rating_window(60))


def test_far_ratings_wait_until_the_window_has_widened():
    far = [cand("a", 1500, waited=1), cand("b", 1800, waited=1)]
    assert form_matches(far, 2, NOW) == []
    later = [cand("a", 1500, waited=21), cand("b", 1800, waited=1)]  # 100 + 15*21 = 415
    assert [m.ticket_ids for m in form_matches(later, 2, NOW)] == [("a", "b")]


def test_nearest_rating_is_preferred():
    tickets = [cand("a", 1500, waited=3), cand("b", 1580, waited=2), cand("c", 1510, waited=1)]
    assert [m.ticket_ids for m in form_matches(tickets, 2, NOW)] == [("a", "c")]


def test_spread_of_a_match_stays_within_the_window_on_both_sides():
    # a at 1500 could reach 1440 and 1560 (both within 100 of a) but not both at once.
    tickets = [cand("a", 1500, waited=0), cand("b", 1440, waited=0), cand("c", 1560, waited=0)]
    assert form_matches(tickets, 3, NOW) == []


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        form_matches([cand("a"), cand("a")], 2, NOW)
    with pytest.raises(ValueError):
        form_matches([cand("a")], 1, NOW)


def test_queues_and_ticket_configs():
    assert queue_problem("life", 2) is None and queue_problem("life", 4) is None
    assert queue_problem("life", 3) is not None
    assert queue_problem("cellwar", 8) is None and queue_problem("cellwar", 9) is not None
    assert queue_problem("campaign", 1) is not None
    assert config_problem("life", 2, {"width": 80, "torus": True}) is None
    assert "players" in config_problem("life", 2, {"players": 2})
    assert "units" in config_problem("cellwar", 2, {"units": []})
    assert config_problem("cellwar", 5, {"width": 5}) is not None
    assert config_problem("cellwar", 4, {"width": 4}) is None


def test_matchmade_games_have_turn_timers_a_ticket_may_tune_within_bounds():
    from services.matchmaker.domain import MATCH_CONFIG_DEFAULTS

    assert MATCH_CONFIG_DEFAULTS["life"] == {"turn_time_s": 90}
    assert MATCH_CONFIG_DEFAULTS["cellwar"] == {"turn_time_s": 60}
    assert config_problem("cellwar", 2, {"turn_time_s": 10}) is None
    assert config_problem("life", 4, {"turn_time_s": 600}) is None
    for bad in (9, 601, None, 30.5, True):
        assert "turn_time_s" in config_problem("cellwar", 2, {"turn_time_s": bad})
    assert "rated" in config_problem("life", 2, {"rated": True})


def test_merge_and_percentile():
    assert merge_configs([{"a": 1}, {"b": 2}, {"a": 1}]) == {"a": 1, "b": 2}
    assert merge_configs([{"a": 1}, {"a": 2}]) is None
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([0.0, 10.0], 90) == 9.0


# --------------------------------------------------------------------------- property

FIELDS = {"width": [40, 60], "torus": [False, True], "budget": [50, 100]}

configs = st.fixed_dictionaries(
    {}, optional={k: st.sampled_from(v) for k, v in FIELDS.items()}
)
tickets_strategy = st.lists(
    st.tuples(
        st.floats(min_value=1000, max_value=2000, allow_nan=False),
        st.floats(min_value=0, max_value=90, allow_nan=False),
        configs,
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(tickets=tickets_strategy, players=st.sampled_from([2, 3, 4, 8]))
def test_no_ticket_twice_every_match_complete_compatible_and_within_window(tickets, players):
    candidates = [cand(f"t{i}", r, w, **c) for i, (r, w, c) in enumerate(tickets)]
    by_id = {c.ticket_id: c for c in candidates}
    matches = form_matches(candidates, players, NOW)
    seen: set[str] = set()
    for m in matches:
        assert len(m.ticket_ids) == players  # complete
        assert not seen & set(m.ticket_ids)  # no ticket twice
        seen.update(m.ticket_ids)
        members = [by_id[t] for t in m.ticket_ids]
        merged = merge_configs(c.config for c in members)
        assert merged is not None and merged == m.config  # compatible
        ratings = [c.rating for c in members]
        longest = max(NOW - c.created_at for c in members)
        assert max(ratings) - min(ratings) <= rating_window(longest) + 1e-9
        assert list(m.ticket_ids) == sorted(m.ticket_ids, key=lambda t: (by_id[t].created_at, t))
    assert form_matches(candidates, players, NOW) == matches  # deterministic


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=0, max_value=40), players=st.sampled_from([2, 4]))
def test_identical_tickets_are_all_matched_but_the_remainder(n, players):
    candidates = [cand(f"t{i}", 1500, waited=i) for i in range(n)]
    matches = form_matches(candidates, players, NOW)
    assert len(matches) == n // players
