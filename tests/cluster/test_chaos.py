"""Chaos (docs/hosting.md, docs/faults.md): 20 concurrent bot games (Life and CellWar)
through nginx while one NATS node, one session instance, one engine replica and one
gateway are killed with SIGKILL, one at a time, 3 s apart (within the games' first
~13 s, while they run); then 20 new games, and a pacer game that writes every 0.25 s
(``deploy.chaos.pace_writes``), while 2 of the 3 NATS nodes are down for 25 s (a quorum
loss). The same runs as
``python -m deploy.chaos --scenario kills --scenario quorum``.

Integrity: every log contiguous, no command applied twice, every hash the fold's, every
2xx answer in the log, every killed process back. Liveness: every game finishes and its
finished log is readable through REST (every session instance follows the events the
others write). A fault is answered 503 with Retry-After, never 409 CONFLICT.
"""

from __future__ import annotations

import pytest

from deploy.chaos import KILL_ORDER, SCENARIOS, run_chaos
from deploy.harness import RunnerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Checks that need every session instance to follow the others' events.
LIVENESS = {"finished", "rest_log"}


async def test_games_survive_kills_of_one_process_of_each_role(cluster: RunnerProcess):
    report = await run_chaos(cluster, games=20, gap_s=3.0, game_timeout_s=100, say=print)
    print(report.summary())

    assert [k.name.split("-")[0] for k in report.kills] == list(KILL_ORDER)
    assert all(k.running_games > 0 for k in report.kills), "a kill came when no game was running"
    assert report.answers > 100, "too few answered commands for the run to mean anything"
    integrity = {check: v for check, v in report.violations.items() if check not in LIVENESS}
    assert not integrity, report.summary()
    assert all(k.new_pid and k.new_pid != k.old_pid for k in report.kills), report.summary()
    liveness = {check: v for check, v in report.violations.items() if check in LIVENESS}
    assert not liveness, report.summary()
    assert all(g.finished for g in report.games)


async def test_every_game_finishes_through_a_quorum_loss(cluster: RunnerProcess):
    cluster.wait_up()
    hold, inject = SCENARIOS["quorum"]

    def quorum_loss(run, say):
        return inject(run, hold, say)

    report = await run_chaos(cluster, games=20, game_timeout_s=150, say=print, fault=quorum_loss)
    print(report.summary())

    [fault] = report.faults
    assert [g.kind for g in report.games].count("pacer") == 1
    assert fault.scenario == "quorum" and len(fault.targets) == 2
    assert fault.end - fault.start >= hold
    assert fault.requests > 0 and fault.statuses.get("503", 0) > 0, "the quorum loss was not felt"
    assert report.conflicts == 0, report.summary()  # a fault is never answered as final
    assert report.no_retry_after == 0, report.summary()
    assert not report.violations, report.summary()
    assert all(g.finished for g in report.games)
