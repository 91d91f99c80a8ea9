"""Two matchmaker instances on one NATS: 1,000 tickets over
several queues; no ticket in two matches, every match complete, none lost — also when
one instance is killed (SIGKILL) while it holds claims of matches being formed."""

from __future__ import annotations

import asyncio
import collections
import json
import random
import signal
from collections.abc import Iterator

import pytest

from services.matchmaker.domain import merge_configs
from services.matchmaker.server import MatchmakerApp
from services.matchmaker.store import ticket_key
from tests.matchmaker.conftest import (
    MatchmakerProcess,
    eventually,
    private_config,
    start_matchmaker,
)
from tests.support.nats import NatsProcess
from tests.support.stack import Stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory) -> Iterator[str]:
    """A NATS of this module's own: the ~400 games it leaves in placement must not be
    rebuilt by every later test's session on the shared server."""
    with NatsProcess(tmp_path_factory.mktemp("nats-instances")) as proc:
        yield proc.url


#: Tickets per queue: 1,000 in all, each queue a whole number of matches.
QUEUES = {("life", 2): 400, ("life", 4): 200, ("cellwar", 2): 220, ("cellwar", 4): 180}


async def _foreign_claims(app: MatchmakerApp, ours: set[str]) -> list[str]:
    """Our tickets claimed now by another instance (as this instance's mirror sees them)."""
    me = app.matchmaker.options.instance_id
    return [
        tid
        for tid in ours
        if (claim := (app.matchmaker.ticket_mirror.entries.get(ticket_key(tid), ({}, 0))[0].get("claim") or {}))
        and claim.get("by") != me
    ]


async def test_two_instances_1000_tickets_one_killed_midway_none_lost_none_twice(stack: Stack, tmp_path):
    local = await start_matchmaker(stack)
    other = MatchmakerProcess(stack.settings.nats_url, stack.session_target, log_path=str(tmp_path / "mm1.log"))
    replacement: MatchmakerProcess | None = None
    await other.start()
    try:
        mm = local.matchmaker
        configs = {q: private_config(q[0]) for q in QUEUES}
        # Half the tickets also ask for a board size (compatible with those that do not).
        plan = [
            (kind, players, {**configs[(kind, players)], **({"width": 20} if i % 10 < 5 else {})})
            for (kind, players), count in QUEUES.items()
            for i in range(count)
        ]
        rng = random.Random(14)
        rng.shuffle(plan)
        ours: dict[str, tuple[str, int]] = {}
        for i, (kind, players, config) in enumerate(plan):
            t = await mm.create_ticket(kind, players, config, f"t{i}")
            ours[t["ticket_id"]] = (kind, players)
        assert len(ours) == 1000

        # Kill the other instance while it holds claims of matches it is forming: freeze it
        # (SIGSTOP) once it claims, check claims of it are left, then SIGKILL.
        stale: list[str] = []
        for _ in range(50):
            await eventually(lambda: _foreign_claims(local, set(ours)), every=0.002,
                             what="the other instance claimed tickets")
            other.proc.send_signal(signal.SIGSTOP)
            await asyncio.sleep(0.3)  # let this instance's mirror catch up
            stale = await _foreign_claims(local, set(ours))
            if stale:
                break
            other.proc.send_signal(signal.SIGCONT)
        other.kill()
        assert stale, "the other instance never held a claim when frozen"
        stale_claims = {
            t: mm.ticket_mirror.entries[ticket_key(t)][0]["claim"]["match_id"] for t in stale
        }
        replacement = MatchmakerProcess(stack.settings.nats_url, stack.session_target,
                                        log_path=str(tmp_path / "mm2.log"))
        await replacement.start()  # two instances again, one of them new

        async def all_ended():
            statuses = collections.Counter(
                mm.ticket_mirror.entries[ticket_key(t)][0]["status"] for t in ours
            )
            return statuses if statuses.get("searching", 0) == 0 else None

        statuses = await eventually(all_ended, timeout=600, every=0.5, what="every ticket matched")
        assert statuses == {"matched": 1000}  # none lost, none cancelled or expired

        tickets = {t: (await mm.tickets.get(ticket_key(t)))[0] for t in ours}
        by_game: dict[str, list[dict]] = collections.defaultdict(list)
        for record in tickets.values():
            assert record["claim"] is None
            by_game[record["match"]["game_id"]].append(record)
        expected_games = sum(count // players for (_, players), count in QUEUES.items())
        assert len(by_game) == expected_games
        seen: set[str] = set()
        for game_id, members in by_game.items():
            kind, players = ours[members[0]["ticket_id"]]
            assert len(members) == players  # complete
            assert sorted(m["match"]["player_id"] for m in members) == list(range(1, players + 1))
            assert {ours[m["ticket_id"]] for m in members} == {(kind, players)}
            assert merge_configs(m["config"] for m in members) is not None  # compatible
            game = (await mm.games.get(game_id))[0]
            seat_tickets = {s["ticket_id"] for s in game["seats"]}
            assert seat_tickets == {m["ticket_id"] for m in members}  # the game holds exactly them
            assert not seat_tickets & seen  # no ticket in two games
            seen |= seat_tickets
        assert seen == set(ours)

        # The games are real: the session seated each ticket's name at its player id.
        for game_id in random.Random(1).sample(sorted(by_game), 5):
            game = await stack.session.games.get(game_id)
            _, view = await stack.session.games.view(game, 0)
            names = {p["id"]: p["name"] for p in json.loads(view)["players"]}
            assert names == {m["match"]["player_id"]: m["name"] for m in by_game[game_id]}

        # The claims the killed instance left were finished by a survivor: rolled forward
        # (same match) or back (matched again later); either way matched once.
        for t, match_id in stale_claims.items():
            assert tickets[t]["status"] == "matched"
            forward = tickets[t]["match"]["match_id"] == match_id
            assert forward or match_id not in {s["match"]["match_id"] for s in tickets.values()}
    finally:
        other.kill()
        if replacement is not None:
            replacement.stop()
        await local.stop(grace=0.2)

