"""Chaos (issue 9, must-show 2): 20 concurrent bot games (Life and CellWar) through nginx
while one NATS node, one session instance, one engine replica and one gateway are killed
with SIGKILL, one at a time, 4 s apart. The same run as ``python -m deploy.chaos``.

Integrity: every log contiguous, no command applied twice, every hash the fold's, every
2xx answer in the log, every killed process back. Liveness: every game finishes and its
finished log is readable through REST (every session instance follows the events the
others write).
"""

from __future__ import annotations

import pytest

from deploy.chaos import KILL_ORDER, run_chaos
from deploy.harness import RunnerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Checks that need every session instance to follow the others' events.
LIVENESS = {"finished", "rest_log"}


async def test_games_survive_kills_of_one_process_of_each_role(cluster: RunnerProcess):
    report = await run_chaos(cluster, games=20, gap_s=4.0, game_timeout_s=100, say=print)
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
