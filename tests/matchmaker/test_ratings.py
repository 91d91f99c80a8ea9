"""Ratings (docs/ratings.md): after a matchmade game ends, both players' ratings
change once (the winner's up), also when the ratings projection is restarted during the
game; the leaderboard and GET /profile show them; a game made by link with
``"rated": true`` is rated for the profiles that joined it. Unit tests of the rating
rules too."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from client.sdk import AsyncCellWarClient
from services.matchmaker.projection import DURABLE, GAME_EVENTS, RatingsProjection
from services.matchmaker.ratings import (
    Change,
    apply_change,
    new_record,
    ranks_from_view,
    rate_game,
    seat_ranks,
)
from services.matchmaker.server import MatchmakerApp
from tests.matchmaker.conftest import eventually, private_config

# --------------------------------------------------------------------------- rules


def test_ranks_put_the_winner_first_then_more_cells():
    view = {"winner": 3, "players": [{"id": 1, "cells": 10}, {"id": 2, "cells": 30},
                                     {"id": 3, "cells": 5}, {"id": 4, "cells": 10}]}
    assert ranks_from_view(view) == {3: 1, 2: 2, 1: 3, 4: 3}
    draw = {"winner": None, "players": [{"id": 1, "cells": 7}, {"id": 2, "cells": 7}]}
    assert ranks_from_view(draw) == {1: 1, 2: 1}


def test_winner_gains_what_the_loser_loses_between_equals():
    changes = {c.profile_id: c for c in rate_game({"a": (25.0, 25 / 3), "b": (25.0, 25 / 3)}, {"a": 1, "b": 2})}
    assert changes["a"].mu_delta > 0 > changes["b"].mu_delta
    assert changes["a"].mu_delta == pytest.approx(-changes["b"].mu_delta)
    assert changes["a"].sigma_ratio < 1


def test_a_change_is_applied_once_per_game():
    change = Change("a", 2.5, 0.9, 1)
    once = apply_change(new_record("ann"), "g1", change, "ann")
    assert once is not None and once["games"] == 1 and once["mu"] == pytest.approx(27.5)
    assert once["rating"] == pytest.approx(1600.0)
    assert apply_change(once, "g1", change, "ann") is None
    twice = apply_change(once, "g2", change, "ann")
    assert twice["games"] == 2 and twice["mu"] == pytest.approx(30.0)


def test_anonymous_seats_count_in_the_order_but_are_not_rated():
    seats = [{"player_id": 1, "profile_id": "p1"}, {"player_id": 2, "profile_id": ""}]
    ranks = seat_ranks(seats, {1: 2, 2: 1})
    assert ranks == {"p1": 2, "~seat2": 1}


# --------------------------------------------------------------------------- end to end


async def _rating(api: AsyncCellWarClient, token: str) -> dict | None:
    ratings = (await api.profile(token))["ratings"] or []
    return next((r for r in ratings if (r["kind"], r["players"]) == ("life", 2)), None)


async def _matched(api: AsyncCellWarClient, *names: str) -> list[tuple[dict, Any]]:
    """A new profile per name, matched together into one private 2-player Life game:
    (profile, seat) each."""
    profiles = [await api.create_profile(name) for name in names]
    config = private_config()
    seats = await asyncio.gather(*(
        api.find_match("life", 2, name, config, profile_token=profile["profile_token"], timeout=120)
        for name, profile in zip(names, profiles, strict=True)
    ))
    return list(zip(profiles, seats, strict=True))


@pytest.mark.integration
async def test_ratings_change_once_after_a_matchmade_game_also_across_a_projection_restart(
    mm_api: AsyncCellWarClient, matchmaker: MatchmakerApp
):
    (winner, w_seat), (loser, l_seat) = await _matched(mm_api, "winner", "loser")
    assert w_seat.game_id == l_seat.game_id
    assert await _rating(mm_api, winner["profile_token"]) is None  # not rated before the game

    # The projection stops during the game; the game ends while it is down.
    await matchmaker.projection.stop()
    await mm_api.simple(l_seat.game_id, l_seat.token, "resign")
    final = await mm_api.state(w_seat.game_id, w_seat.token)
    assert final["phase"] == "finished" and final["winner"] == w_seat.player_id
    await asyncio.sleep(0.5)
    assert await _rating(mm_api, winner["profile_token"]) is None  # nobody projected it yet

    mm = matchmaker.matchmaker
    restarted = RatingsProjection(matchmaker.nc.jetstream(), mm.games, mm.ratings, mm.session,
                                  games_mirror=mm.games_mirror)
    restarted.start()
    matchmaker.projection = restarted
    w = await eventually(lambda: _rating(mm_api, winner["profile_token"]), what="winner rated")
    lo = await eventually(lambda: _rating(mm_api, loser["profile_token"]), what="loser rated")
    assert w["games"] == 1 and lo["games"] == 1
    assert w["rating"] > 1500 > lo["rating"]
    assert w["rating"] - 1500 == pytest.approx(1500 - lo["rating"], abs=0.2)

    # Processing the same finish again (a redelivery, a second instance) changes nothing.
    again = await restarted.rate(w_seat.game_id)
    assert {c.profile_id for c in again} == {winner["profile_id"], loser["profile_id"]}
    await asyncio.sleep(0.5)
    assert await _rating(mm_api, winner["profile_token"]) == w
    assert await _rating(mm_api, loser["profile_token"]) == lo

    board = await eventually(
        lambda: _board_has(mm_api, {winner["profile_id"], loser["profile_id"]}), what="leaderboard"
    )
    ids = [e["profile_id"] for e in board]
    assert ids.index(winner["profile_id"]) < ids.index(loser["profile_id"])
    entry = board[ids.index(winner["profile_id"])]
    assert entry == {"profile_id": winner["profile_id"], "name": "winner", "rating": w["rating"], "games": 1}

    # The finished game no longer counts as players in running games.
    game = mm.games_mirror.entries[w_seat.game_id][0]
    assert game["finished_at"] is not None and game["rated"] is True


async def _board_has(api: AsyncCellWarClient, ids: set[str]) -> list | None:
    board = await api.leaderboard("life", 2)
    return board if ids <= {e["profile_id"] for e in board} else None


@pytest.mark.integration
async def test_a_game_made_by_link_is_not_rated(mm_api: AsyncCellWarClient, matchmaker: MatchmakerApp):
    game_id = await mm_api.create_game("life", {"width": 20, "height": 20})
    a = await mm_api.join(game_id, "a")
    await mm_api.join(game_id, "b")
    await mm_api.simple(game_id, a.token, "resign")
    assert (await mm_api.state(game_id, a.token))["phase"] == "finished"
    assert await matchmaker.projection.rate(game_id) == []
    assert game_id not in matchmaker.matchmaker.games_mirror.entries


@pytest.mark.integration
async def test_an_anonymous_opponent_rates_only_the_profile(mm_api: AsyncCellWarClient, matchmaker: MatchmakerApp):
    rated = await mm_api.create_profile("rated")
    config = private_config("cellwar")
    r_seat, a_seat = await asyncio.gather(
        mm_api.find_match("cellwar", 2, "rated", config, profile_token=rated["profile_token"], timeout=120),
        mm_api.find_match("cellwar", 2, "anon", config, timeout=120),
    )
    await mm_api.leave(a_seat.game_id, a_seat.token)

    async def rating():
        rs = (await mm_api.profile(rated["profile_token"]))["ratings"] or []
        return next((r for r in rs if r["kind"] == "cellwar"), None)

    r = await eventually(rating, what="profile rated")
    assert r["players"] == 2 and r["games"] == 1 and r["rating"] > 1500
    board = await mm_api.leaderboard("cellwar", 2)
    assert rated["profile_id"] in {e["profile_id"] for e in board}
    assert all(e["name"] != "anon" for e in board)


@pytest.mark.integration
async def test_a_link_game_created_rated_is_rated_once_for_the_profiles_that_joined(
    mm_api: AsyncCellWarClient, mm_url: str, matchmaker: MatchmakerApp
):
    a = await mm_api.create_profile("linked-a")
    b = await mm_api.create_profile("linked-b")
    # "rated" at the top of the body (or in the config) makes the link game rated
    async with httpx.AsyncClient(base_url=mm_url) as http:
        created = await http.post(
            "/game/create", json={"kind": "cellwar", "config": {"width": 8, "height": 8}, "rated": True}
        )
        assert created.status_code == 201
        game_id = created.json()["game_id"]
        bad = await http.post(
            f"/game/{game_id}/join", json={"name": "x"}, headers={"X-Profile-Token": "forged"}
        )
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "UNAUTHORIZED"
    a_seat = await mm_api.join(game_id, "linked-a", profile_token=a["profile_token"])
    b_seat = await mm_api.join(game_id, "linked-b", profile_token=b["profile_token"])
    log = await mm_api.events(game_id, a_seat.token)
    created_event, joined = log[0], [e for e in log if e["type"] == "PlayerJoined"]
    assert created_event["payload"]["config"]["rated"] is True
    # the log names the profile holding each seat, never a token
    assert [e["payload"].get("profile_id") for e in joined] == [a["profile_id"], b["profile_id"]]
    assert all("token" not in json.dumps(e["payload"]) for e in joined)

    await mm_api.leave(game_id, b_seat.token)  # a wins
    w = await eventually(lambda: _rating_of(mm_api, a, "cellwar"), what="winner rated")
    lo = await eventually(lambda: _rating_of(mm_api, b, "cellwar"), what="loser rated")
    assert (w["players"], w["games"], lo["games"]) == (2, 1, 1)
    assert w["rating"] > 1500 > lo["rating"]
    # once: processing the finish again changes nothing
    await matchmaker.projection.rate(game_id)
    await asyncio.sleep(0.5)
    assert await _rating_of(mm_api, a, "cellwar") == w
    # not a matchmade game: no MATCH_GAMES entry
    assert game_id not in matchmaker.matchmaker.games_mirror.entries


async def _rating_of(api: AsyncCellWarClient, profile: dict, kind: str) -> dict | None:
    ratings = (await api.profile(profile["profile_token"]))["ratings"] or []
    return next((r for r in ratings if r["kind"] == kind and r["players"] == 2), None)


@pytest.mark.integration
async def test_a_join_with_a_profile_in_an_unrated_game_records_no_profile(mm_api: AsyncCellWarClient):
    a = await mm_api.create_profile("plain")
    game_id = await mm_api.create_game("life", {"width": 20, "height": 20})
    seat = await mm_api.join(game_id, "plain", profile_token=a["profile_token"])
    await mm_api.join(game_id, "other")
    await mm_api.simple(game_id, seat.token, "resign")
    joined = [e for e in await mm_api.events(game_id, seat.token) if e["type"] == "PlayerJoined"]
    assert all("profile_id" not in e["payload"] for e in joined)


@pytest.mark.integration
async def test_a_consumer_of_every_event_left_by_an_older_version_is_moved_to_the_finish_notices(
    mm_api: AsyncCellWarClient, matchmaker: MatchmakerApp
):
    """The durable consumer as an older version made it (on ``games.*.events``) takes
    only the finish notices once the projection starts, and the game that finished
    meanwhile is rated."""
    js = matchmaker.nc.jetstream()
    await matchmaker.projection.stop()
    await js.delete_consumer(GAME_EVENTS, DURABLE)
    await js.add_consumer(GAME_EVENTS, ConsumerConfig(
        durable_name=DURABLE, deliver_policy=DeliverPolicy.NEW, ack_policy=AckPolicy.EXPLICIT,
        filter_subject="games.*.events",
    ))
    (one, _), (_, seat_2) = await _matched(mm_api, "one", "two")
    await mm_api.simple(seat_2.game_id, seat_2.token, "resign")
    mm = matchmaker.matchmaker
    restarted = RatingsProjection(js, mm.games, mm.ratings, mm.session, games_mirror=mm.games_mirror)
    restarted.start()
    matchmaker.projection = restarted
    won = await eventually(lambda: _rating(mm_api, one["profile_token"]), what="winner rated")
    assert won["games"] == 1 and won["rating"] > 1500
    info = await js.consumer_info(GAME_EVENTS, DURABLE)
    assert info.config.filter_subject == "games.*.finished"
