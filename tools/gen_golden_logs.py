"""Write the golden event logs of ``tests/fixtures/logs/`` (docs/architecture/engine-versions.md).

Each log is a deterministic game played in process through :func:`engine.api.decide` and
:func:`engine.api.decide_tick` (scripted moves, and for CellWar a seeded bot), written as
JSON Lines, one event per line, exactly the objects ``GET /game/{id}/events`` returns
(``services/common/jsonwire.py`` ``event_json``): ``seq``, ``type``, ``actor``, ``payload``, ``time``,
``state_hash``, ``engine_version``. ``time`` is a fake RFC 3339 time (a fixed start plus
one second per seq) so the files are reproducible byte for byte.

The tool writes the logs of the CURRENT engine version (``engine.ENGINE_VERSION``) into
``tests/fixtures/logs/v<version>/``; the logs of older versions stay as they were written
and must keep folding to their recorded hashes (``tests/engine/test_golden_logs.py``).
A removal during a player's own CellWar turn is recorded as the session records it today
(``services/session/rollback.py``): ``RolledBack {"to_seq", "state": base64}`` whose hash
is the one recorded at ``to_seq``, then ``PlayerRemoved`` again for every other player
removed since ``to_seq``, then ``PlayerRemoved`` of the player (+ ``GameFinished``).

Commands that change nothing (placing on an own live cell, erasing an empty cell, ...)
were recorded as events by engine version 1; from version 2 the rules refuse them with
``NO_CHANGE``. The scripts mark them (:meth:`Log.noop`): the tool records them under
version 1 and checks that a later version refuses them.

Usage::

    python tools/gen_golden_logs.py            # write tests/fixtures/logs/v<current>/
    python tools/gen_golden_logs.py --check    # compare with the files instead (exit 1)
    python tools/gen_golden_logs.py --out DIR  # write elsewhere
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.api import dumps  # noqa: E402
from engine.errors import GameError  # noqa: E402
from engine.removal import plan_time_out  # noqa: E402

#: Folder of the golden logs; one subfolder ``v<engine version>`` per version.
LOGS_DIR = ROOT / "tests" / "fixtures" / "logs"
#: Fake time of seq 0; event ``seq`` gets this plus ``seq`` seconds.
START_TIME = datetime(2025, 1, 1, tzinfo=UTC)
#: Error code of a refused no-op command (engine version >= 2).
NO_CHANGE = "NO_CHANGE"
#: Event types after which a turn may begin (services/session/rollback.py ``_ANCHORS``).
TURN_ANCHORS = frozenset({"GameCreated", "PlayerJoined", "TurnEnded"})


def fake_time(seq: int) -> str:
    """The fake RFC 3339 time of event ``seq`` (as ``gateway/wire.py`` writes times)."""
    return (START_TIME + timedelta(seconds=seq)).isoformat()


class SplitMix64:
    """A tiny deterministic PRNG (SplitMix64), so the logs never depend on ``random``."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self) -> int:
        """The next 64-bit value."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """An integer in ``0..n-1`` (n >= 1)."""
        return self.next() % n


class Log:
    """A game being played and recorded: the events (REST shape) and the state after each."""

    def __init__(self) -> None:
        self.state: Any = None
        self.events: list[dict[str, Any]] = []
        #: ``states[i]`` is the state after event ``seq = i + 1``.
        self.states: list[Any] = []

    # ------------------------------------------------------------------ recording

    def _record(self, drafts: list[engine.EventDraft], state: Any) -> list[dict[str, Any]]:
        out = []
        for d in drafts:
            seq = len(self.events) + 1
            event = {
                "seq": seq,
                "type": d.type,
                "actor": d.actor,
                "payload": json.loads(dumps(d.payload)),
                "time": fake_time(seq),
                "state_hash": d.state_hash,
                "engine_version": engine.ENGINE_VERSION,
            }
            self.events.append(event)
            self.states.append(state)
            out.append(event)
        self.state = state
        return out

    def cmd(self, command_type: str, actor: int = 0, **payload: Any) -> list[dict[str, Any]]:
        """Run a command through :func:`engine.decide` and record its events; ``time_out``
        through :func:`engine.removal.plan_time_out`, as the session records it (engine
        version 4+: the seats that let two own turns in a row time out are removed)."""
        if command_type == "time_out":
            out = []
            for draft, state in plan_time_out(self.state):
                out.extend(self._record([draft], state))
            return out
        return self._record(*engine.decide(self.state, command_type, actor, payload))

    def noop(self, command_type: str, actor: int = 0, **payload: Any) -> None:
        """A command that changes nothing: recorded by engine version 1, refused with
        ``NO_CHANGE`` (nothing recorded) by later versions."""
        before = engine.encode_state(self.state)
        if engine.ENGINE_VERSION == "1":
            events = self.cmd(command_type, actor, **payload)
            assert engine.encode_state(self.state) == before, f"not a no-op: {command_type} {payload}"
            assert len(events) == 1, events
            return
        try:
            engine.decide(self.state, command_type, actor, payload)
        except GameError as exc:
            assert exc.code == NO_CHANGE, f"{command_type} {payload}: {exc.code} {exc.message}"
            return
        raise AssertionError(f"no-op {command_type} {payload} was not refused")

    def action(self, actor: int, type_: str, **fields: Any) -> list[dict[str, Any]]:
        """A Life action ``{"type": type_, **fields}`` of ``actor``."""
        return self.cmd("action", actor, type=type_, **fields)

    def tick(self, generations: int) -> list[dict[str, Any]]:
        """Tick by up to ``generations`` (what the session's ticker does)."""
        return self._record(*engine.decide_tick(self.state, generations))

    def run(self, batch: int, limit: int) -> None:
        """Tick in batches of ``batch`` while the game runs, at most ``limit`` ticks."""
        for _ in range(limit):
            if engine.summary(self.state).phase != "running":
                return
            self.tick(batch)

    # ------------------------------------------------------------------ removal

    def _turn_start(self) -> int:
        """``to_seq`` as ``services/session/rollback.py`` ``turn_start`` finds it: the
        last event (from the last turn anchor on) that changed the summary ``turn``."""
        anchor = max(e["seq"] for e in self.events if e["type"] in TURN_ANCHORS)
        best = anchor
        for e in self.events[anchor:]:
            seq = e["seq"]
            if engine.summary(self.states[seq - 1]).turn != engine.summary(self.states[seq - 2]).turn:
                best = seq
        return best

    def remove(self, player_id: int, reason: str, actor: int) -> None:
        """Remove a player as the session does (services/session/rollback.py): during its
        own CellWar turn, roll back to the turn's start first."""
        s = engine.summary(self.state)
        if s.kind == "cellwar" and not s.finished and s.turn == player_id:
            to_seq = self._turn_start()
            if to_seq < len(self.events):
                later = self.events[to_seq:]
                start = self.states[to_seq - 1]
                payload = {
                    "to_seq": to_seq,
                    "state": base64.b64encode(engine.encode_state(start)).decode("ascii"),
                }
                back = engine.EventDraft("RolledBack", actor, payload, engine.state_hash(start))
                assert back.state_hash == self.events[to_seq - 1]["state_hash"]
                self._record([back], start)
                for e in later:
                    other = int(e["payload"].get("player_id", 0) or 0)
                    if e["type"] != "PlayerRemoved" or other in (0, player_id):
                        continue
                    self.cmd("remove_player", e["actor"], **e["payload"])
        self.cmd("remove_player", actor, player_id=player_id, reason=reason)

    # ------------------------------------------------------------------ output

    def jsonl(self) -> str:
        """The log as JSON Lines (one event per line, ``\\n`` after each)."""
        return "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in self.events)


# =========================================================================== Life

BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]
BLINKER = [[0, 0], [1, 0], [2, 0]]
GLIDER = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]]
R_PENTOMINO = [[1, 0], [2, 0], [0, 1], [1, 1], [1, 2]]


def shift(cells: list[list[int]], dx: int, dy: int) -> list[list[int]]:
    """``cells`` moved by (dx, dy)."""
    return [[x + dx, y + dy] for x, y in cells]


def life_2p_redraw() -> Log:
    """Life, 2 players, 30×20: drawing with place/erase/stamp/reset_turn (and the no-ops
    version 1 recorded), pause/resume/speed, two redraw rounds with drawing, then an
    empty redraw round ends the game by score."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 30, "height": 20, "budget": 40})
    log.cmd("join", 1, name="alice")
    log.cmd("join", 2, name="bob")
    log.action(1, "place", cells=shift(BLINKER, 3, 3))
    log.noop("action", 1, type="place", cells=shift(BLINKER, 3, 3))  # own live cells
    log.action(1, "stamp", pattern="block", x=8, y=10, rotation=0)
    log.action(1, "place", cells=[[1, 15], [2, 15]])
    log.action(1, "erase", cells=[[1, 15]])
    log.noop("action", 1, type="erase", cells=[[1, 15]])  # already empty
    log.noop("action", 1, type="place", cells=[])
    log.cmd("end_turn", 1)
    log.action(2, "place", cells=shift(BLOCK, 20, 4))
    log.action(2, "reset_turn")
    log.noop("action", 2, type="reset_turn")  # nothing left to reset
    log.action(2, "stamp", rle="#N beehive\nx = 4, y = 3\nb2o$o2bo$b2o!", x=20, y=4, rotation=1)
    log.action(2, "place", cells=shift(BLOCK, 24, 14))
    log.cmd("end_turn", 2)
    log.action(1, "speed", multiplier=2)
    log.noop("action", 2, type="speed", multiplier=2)  # already 2
    log.action(2, "pause")
    log.action(1, "resume")
    log.run(2, 40)
    assert log.state.phase == "redraw", log.state.phase
    # Redraw round 1: both draw, one says ready twice.
    log.action(1, "place", cells=shift(BLOCK, 4, 14))
    log.action(2, "place", cells=shift(BLINKER, 18, 10))
    log.cmd("end_turn", 2)
    log.noop("end_turn", 2)  # already ready
    log.cmd("end_turn", 1)
    log.run(4, 40)
    assert log.state.phase == "redraw", log.state.phase
    # Redraw round 2: player 2 draws, player 1 proposes to finish (twice).
    log.action(2, "place", cells=shift(GLIDER, 22, 0))
    log.action(1, "propose_finish")
    log.noop("action", 1, type="propose_finish")
    log.cmd("end_turn", 1)
    log.cmd("end_turn", 2)
    log.run(8, 60)
    assert log.state.phase == "redraw", log.state.phase
    # Redraw round 3: nobody draws: the game ends by score.
    log.cmd("end_turn", 2)
    log.cmd("end_turn", 1)
    assert log.state.phase == "finished", log.state.phase
    return log


def life_4p() -> Log:
    """Life, 4 players on 40×40 quadrants, max_generations 120: a resignation while
    running, a pause, then the game ends at max_generations by score."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 40, "height": 40, "players": 4, "budget": 25, "max_generations": 120})
    for pid, name in enumerate(("red", "green", "blue", "yellow"), start=1):
        log.cmd("join", pid, name=name)
    log.action(1, "place", cells=shift(R_PENTOMINO, 8, 8))
    log.cmd("end_turn", 1)
    log.action(2, "stamp", pattern="glider", x=28, y=6, rotation=1)
    log.action(2, "place", cells=shift(BLOCK, 34, 14))
    log.cmd("end_turn", 2)
    log.action(3, "place", cells=shift(BLINKER, 6, 30))
    log.action(3, "place", cells=shift(BLOCK, 12, 34))
    log.cmd("end_turn", 3)
    log.action(4, "stamp", pattern="beehive", x=30, y=30, rotation=0)
    log.action(4, "place", cells=shift(GLIDER, 24, 24))
    log.cmd("end_turn", 4)
    log.action(4, "speed", multiplier=8)
    log.run(8, 3)
    log.action(3, "resign")
    log.action(2, "pause")
    log.action(2, "resume")
    log.run(8, 40)
    if log.state.phase == "redraw":  # a stable board: everyone ready, on it goes
        for pid in (1, 2, 4):
            log.action(pid, "place", cells=shift(BLOCK, [2, 22, 2][pid - 1], [2, 2, 22][pid - 1]))
            log.cmd("end_turn", pid)
        log.run(8, 40)
    assert log.state.phase == "finished", log.state.phase
    return log


def life_torus() -> Log:
    """Life on a 24×16 torus: gliders cross the edges; both players propose to finish."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 24, "height": 16, "budget": 20, "torus": True})
    log.cmd("join", 1, name="ann")
    log.cmd("join", 2, name="ben")
    log.action(1, "stamp", pattern="glider", x=0, y=12, rotation=3)
    log.action(1, "place", cells=shift(BLOCK, 6, 2))
    log.cmd("end_turn", 1)
    log.action(2, "stamp", pattern="glider", x=20, y=0, rotation=0)
    log.action(2, "place", cells=shift(BLINKER, 15, 8))
    log.cmd("end_turn", 2)
    log.action(2, "speed", multiplier=4)
    for _ in range(12):
        if log.state.phase != "running":
            break
        log.tick(4)
    if log.state.phase == "running":
        log.action(1, "propose_finish")
        log.action(2, "propose_finish")
    assert log.state.phase in ("finished", "redraw"), log.state.phase
    if log.state.phase == "redraw":
        log.action(1, "propose_finish")
        log.action(2, "propose_finish")
    assert log.state.phase == "finished", log.state.phase
    return log


def life_resign() -> Log:
    """Life, 2 players: player 1 resigns while the board runs; player 2 wins."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 16, "height": 16, "budget": 10})
    log.cmd("join", 1, name="amy")
    log.cmd("join", 2, name="bea")
    log.action(1, "place", cells=shift(BLINKER, 2, 4))
    log.cmd("end_turn", 1)
    log.action(2, "place", cells=shift(BLOCK, 11, 11))
    log.cmd("end_turn", 2)
    log.tick(1)
    log.action(1, "resign")
    assert log.state.phase == "finished" and log.state.winner == 2
    return log


def life_removed() -> Log:
    """Life, 2 players: player 2 leaves during placement (PlayerRemoved); player 1 wins."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 20, "height": 12, "budget": 8})
    log.cmd("join", 1, name="cat")
    log.cmd("join", 2, name="dan")
    log.action(1, "place", cells=shift(BLOCK, 3, 3))
    log.cmd("end_turn", 1)
    log.action(2, "place", cells=shift(BLINKER, 13, 5))
    log.remove(2, "disconnected", 0)
    assert log.state.phase == "finished" and log.state.winner == 1
    return log


def life_2p_timed() -> Log:
    """Life, 2 players with a turn timer (``turn_time_s``): both placement turns run out
    after drawing (what was placed stays); in the first
    redraw round player 1 draws and says ready, the timeout makes player 2 ready and the
    board runs again; the second redraw round runs out with nothing drawn: the game ends
    (an empty round)."""
    log = Log()
    log.cmd("create", kind="life", config={"width": 20, "height": 12, "budget": 12, "turn_time_s": 30})
    log.cmd("join", 1, name="tim")
    log.cmd("join", 2, name="tom")
    log.action(1, "place", cells=shift(BLOCK, 2, 2))
    log.cmd("time_out")
    log.action(2, "place", cells=shift(BLINKER, 14, 4))
    log.cmd("time_out")
    assert log.state.phase == "running", log.state.phase
    log.run(4, 10)
    assert log.state.phase == "redraw", log.state.phase
    log.action(1, "place", cells=shift(BLOCK, 5, 7))
    log.cmd("end_turn", 1)
    log.cmd("time_out")
    assert log.state.phase == "running", log.state.phase
    log.run(4, 10)
    assert log.state.phase == "redraw", log.state.phase
    log.cmd("time_out")
    assert log.state.phase == "finished" and log.state.winner == 1, (log.state.phase, log.state.winner)
    return log


# =========================================================================== campaign


def campaign_win() -> Log:
    """Campaign level 1: one red cell above the block wins in 4 generations."""
    log = Log()
    log.cmd("create", kind="campaign", config={"level": 1})
    log.cmd("join", 1, name="solo")
    log.action(1, "place", cells=[[3, 3]])
    log.action(1, "restart")
    log.action(1, "place", cells=[[9, 8]])
    log.noop("action", 1, type="place", cells=[[9, 8]])
    log.cmd("end_turn", 1)
    log.run(1, 10)
    assert log.state.phase == "finished" and log.state.result == "win", log.state.result
    return log


def campaign_loss() -> Log:
    """Campaign level 1 lost: the whole budget spent on figures far from the enemy block;
    a redraw round on the way; the board stabilises with budget 0 and the block alive."""
    log = Log()
    log.cmd("create", kind="campaign", config={"level": 1})
    log.cmd("join", 1, name="solo")
    log.action(1, "place", cells=shift(BLOCK, 1, 1))
    log.action(1, "place", cells=shift(BLINKER, 14, 2))
    log.cmd("end_turn", 1)
    log.run(2, 20)
    assert log.state.phase == "redraw", log.state.phase
    log.action(1, "place", cells=[[1, 16], [2, 16], [3, 17]])
    log.cmd("end_turn", 1)
    log.run(2, 20)
    assert log.state.phase == "finished" and log.state.result == "loss", log.state.result
    return log


# =========================================================================== CellWar


def unit_at(state: Any, x: int, y: int) -> int:
    """Id of the unit on (x, y) (scripts name units by cell, so they hold under any id scheme)."""
    for u in engine.get_visible_state(state, None)["units"]:
        if (u["x"], u["y"]) == (x, y):
            return int(u["id"])
    raise AssertionError(f"no unit on ({x}, {y})")


def move(log: Log, pid: int, x: int, y: int, dx: int, dy: int) -> None:
    """The unit of ``pid`` on (x, y) acts with vector (dx, dy)."""
    log.cmd("action", pid, unit_id=unit_at(log.state, x, y), dx=dx, dy=dy)


def bot_turn(log: Log, rng: SplitMix64, *, stop: Callable[[Log], bool] | None = None) -> None:
    """The current player acts with every unit (attacks first, else a seeded choice among
    the legal actions, listed by unit cell so the choice does not depend on unit ids),
    then ends the turn. ``stop(log)`` true before an action: return mid-turn."""
    pid = engine.summary(log.state).turn
    while True:
        if engine.summary(log.state).turn != pid or log.state.phase != "playing":
            return
        if stop is not None and stop(log):
            return
        units = {u["id"]: u for u in engine.get_visible_state(log.state, None)["units"]}
        actions = engine.get_valid_actions(log.state, pid)
        if not actions:
            log.cmd("end_turn", pid)
            return
        first = min(actions, key=lambda a: (units[a["unit_id"]]["y"], units[a["unit_id"]]["x"]))
        cell = (units[first["unit_id"]]["x"], units[first["unit_id"]]["y"])
        mine = sorted(
            (a for a in actions if (units[a["unit_id"]]["x"], units[a["unit_id"]]["y"]) == cell),
            key=lambda a: (a["dy"], a["dx"]),
        )
        attacks = [a for a in mine if a["kind"] == "attack"]
        pool = attacks or mine
        choice = pool[rng.below(len(pool))]
        log.cmd("action", pid, unit_id=choice["unit_id"], dx=choice["dx"], dy=choice["dy"])


def stop_after(n: int) -> Callable[[Log], bool]:
    """A ``stop`` for :func:`bot_turn`: true after ``n`` actions."""
    calls = [0]

    def stop(_log: Log) -> bool:
        calls[0] += 1
        return calls[0] > n

    return stop


def bots_to_end(log: Log, rng: SplitMix64, turns: int, leaver: int) -> None:
    """Seeded bots play up to ``turns`` turns; if the game still runs then, ``leaver``
    leaves (the bots could not finish). The game is finished after."""
    for _ in range(turns):
        if log.state.phase != "playing":
            break
        bot_turn(log, rng)
    if log.state.phase == "playing":
        log.remove(leaver, "left", leaver)
    assert log.state.phase == "finished", log.state.phase


def cellwar_2p() -> Log:
    """CellWar, 2 players on 8×8 with explicit units: the two-hit rule on a fortification,
    a fortification becoming a factory that produces, then seeded bots play to the end."""
    log = Log()
    units = [
        {"owner": 1, "type": "infantry", "x": 1, "y": 1},
        {"owner": 2, "type": "fortification", "x": 2, "y": 1, "standing": 1},
        {"owner": 1, "type": "infantry", "x": 1, "y": 2},
        {"owner": 2, "type": "infantry", "x": 6, "y": 6},
        {"owner": 1, "type": "fortification", "x": 0, "y": 5, "standing": 2},
        {"owner": 2, "type": "infantry", "x": 6, "y": 5},
        {"owner": 2, "type": "fortification", "x": 7, "y": 7, "standing": 2},
    ]
    log.cmd("create", kind="cellwar", config={"width": 8, "height": 8, "units": units})
    log.cmd("join", 1, name="north")
    log.cmd("join", 2, name="south")
    # Round 1, player 1: the first hit kills the attacker and the fortification yields...
    move(log, 1, 1, 1, 1, 0)
    # ...the second hit destroys it (now infantry); the attacker takes its cell.
    move(log, 1, 1, 2, 1, -1)
    move(log, 1, 0, 5, 0, 0)  # standing 3: a factory (produces from the next turn)
    log.cmd("end_turn", 1)
    move(log, 2, 6, 5, -1, 0)
    move(log, 2, 6, 6, 0, 0)
    move(log, 2, 7, 7, 0, 0)  # player 2's fortification becomes a factory too
    log.cmd("end_turn", 2)
    move(log, 1, 2, 1, 1, 1)
    move(log, 1, 0, 5, 1, 0)  # the factory produces an infantry on (1, 5)
    log.cmd("end_turn", 1)
    rng = SplitMix64(2)
    bots_to_end(log, rng, 40, 2)
    return log


def cellwar_3p_rollback() -> Log:
    """CellWar, 3 players, default start on 10×10, seeded bots with production. Player 3
    leaves outside its turn while player 2 is mid-turn; then player 2 disconnects in its
    own turn: RolledBack to the turn's start, player 3 removed again, player 2 removed;
    player 1 wins."""
    log = Log()
    log.cmd("create", kind="cellwar", config={"width": 10, "height": 10, "players": 3})
    for pid, name in enumerate(("ash", "birch", "cedar"), start=1):
        log.cmd("join", pid, name=name)
    rng = SplitMix64(3)
    for _ in range(3 * 4):  # four rounds
        bot_turn(log, rng)
    assert log.state.phase == "playing" and engine.summary(log.state).turn == 1

    bot_turn(log, rng)  # player 1
    assert engine.summary(log.state).turn == 2
    bot_turn(log, rng, stop=stop_after(1))  # player 2 acts once, then...
    log.remove(3, "left", 3)  # ...player 3 leaves (not its turn: no rollback)
    log.remove(2, "disconnected", 0)  # player 2 drops during its turn: rollback
    assert log.state.phase == "finished" and log.state.winner == 1
    return log


def cellwar_3p_rollback_continues() -> Log:
    """CellWar, 3 players on 12×12 with factories in the start: a player who leaves during
    its own turn is rolled back and removed, and the two others play on to the end."""
    log = Log()
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 1, "type": "fortification", "x": 1, "y": 1, "standing": 2},
        {"owner": 2, "type": "infantry", "x": 11, "y": 11},
        {"owner": 2, "type": "factory", "x": 10, "y": 10},
        {"owner": 3, "type": "infantry", "x": 11, "y": 0},
        {"owner": 3, "type": "factory", "x": 10, "y": 1},
    ]
    log.cmd("create", kind="cellwar", config={"width": 12, "height": 12, "players": 3, "units": units})
    for pid, name in enumerate(("oak", "pine", "yew"), start=1):
        log.cmd("join", pid, name=name)
    rng = SplitMix64(5)
    for _ in range(3 * 3):
        bot_turn(log, rng)
    assert engine.summary(log.state).turn == 1
    bot_turn(log, rng)
    bot_turn(log, rng, stop=stop_after(2))
    assert engine.summary(log.state).turn == 2
    log.remove(2, "left", 2)
    bots_to_end(log, rng, 60, 3)
    return log


def cellwar_2p_timed() -> Log:
    """CellWar, 2 players on 8×8 with a turn timer and a factory: player 1's turn runs
    out after one unit acted (the others stay), player 2's runs out with nothing done,
    then seeded bots play to the end (player 2 leaves if they cannot finish)."""
    log = Log()
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 1, "type": "infantry", "x": 1, "y": 0},
        {"owner": 1, "type": "factory", "x": 0, "y": 2},
        {"owner": 2, "type": "infantry", "x": 7, "y": 7},
        {"owner": 2, "type": "infantry", "x": 6, "y": 7},
    ]
    log.cmd("create", kind="cellwar", config={"width": 8, "height": 8, "units": units, "turn_time_s": 60})
    log.cmd("join", 1, name="quick")
    log.cmd("join", 2, name="slow")
    move(log, 1, 0, 0, 1, 1)
    log.cmd("time_out")
    assert engine.summary(log.state).turn == 2
    log.cmd("time_out")
    assert engine.summary(log.state).turn == 1
    rng = SplitMix64(7)
    bots_to_end(log, rng, 40, 2)
    return log


def cellwar_2p_abandoned() -> Log:
    """CellWar, 2 players with a turn timer, and both stop playing after one turn each:
    every later turn times out; player 1 is the first whose two own turns in a row ran
    out without acting, so it is removed as disconnected (engine version 4) and player 2
    wins: the game ends at the third timeout, no draw (the seed "Ничья невозможна")."""
    log = Log()
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 1, "type": "infantry", "x": 1, "y": 0},
        {"owner": 2, "type": "infantry", "x": 7, "y": 7},
        {"owner": 2, "type": "infantry", "x": 6, "y": 7},
    ]
    log.cmd("create", kind="cellwar", config={"width": 8, "height": 8, "units": units, "turn_time_s": 30})
    log.cmd("join", 1, name="gone")
    log.cmd("join", 2, name="away")
    move(log, 1, 0, 0, 1, 1)
    move(log, 1, 1, 0, 0, 0)
    log.cmd("end_turn", 1)
    move(log, 2, 7, 7, -1, -1)
    move(log, 2, 6, 7, 0, 0)
    log.cmd("end_turn", 2)
    for _ in range(3):
        log.cmd("time_out")
    assert log.state.phase == "finished" and log.state.winner == 2, (log.state.phase, log.state.winner)
    assert [e["type"] for e in log.events[-5:]] == [
        "TurnTimedOut", "TurnTimedOut", "TurnTimedOut", "PlayerRemoved", "GameFinished"
    ]
    return log


def cellwar_3p_idle() -> Log:
    """CellWar, 3 players with a turn timer: player 3 never plays; player 1's turns run
    out too, but it acts in every other one (an acted turn that runs out breaks the
    streak), so only player 3, whose two own turns in a row ran out without acting, is
    removed as disconnected; players 1 and 2 play on to the end with seeded bots."""
    log = Log()
    log.cmd("create", kind="cellwar", config={"width": 10, "height": 10, "players": 3, "turn_time_s": 45})
    for pid, name in enumerate(("elm", "fir", "ivy"), start=1):
        log.cmd("join", pid, name=name)
    rng = SplitMix64(11)
    bot_turn(log, rng, stop=stop_after(1))  # player 1 acts once, then its time runs out
    log.cmd("time_out")
    bot_turn(log, rng)  # player 2 plays
    log.cmd("time_out")  # player 3: first idle turn
    assert engine.summary(log.state).turn == 1
    log.cmd("time_out")  # player 1: idle once (its acted turn before does not count)
    bot_turn(log, rng)
    log.cmd("time_out")  # player 3: second idle turn in a row: removed
    assert [e["type"] for e in log.events[-2:]] == ["TurnTimedOut", "PlayerRemoved"]
    assert log.events[-1]["payload"] == {"player_id": 3, "reason": "disconnected"}
    bot_turn(log, rng, stop=stop_after(1))  # player 1 acts: its count is 0 again
    log.cmd("time_out")
    assert log.state.phase == "playing" and not log.state.player(1).out
    bots_to_end(log, rng, 60, 2)
    return log


#: Scenarios that need the rules of a later engine version (name -> first version).
SINCE: dict[str, str] = {"cellwar-2p-abandoned": "4", "cellwar-3p-idle": "4"}

#: Log file name (without ``.jsonl``) -> the game that writes it.
SCENARIOS: dict[str, Callable[[], Log]] = {
    "life-2p-redraw": life_2p_redraw,
    "life-4p": life_4p,
    "life-torus": life_torus,
    "life-resign": life_resign,
    "life-removed": life_removed,
    "life-2p-timed": life_2p_timed,
    "campaign-win": campaign_win,
    "campaign-loss": campaign_loss,
    "cellwar-2p-two-hit-production": cellwar_2p,
    "cellwar-3p-rollback": cellwar_3p_rollback,
    "cellwar-3p-rollback-continues": cellwar_3p_rollback_continues,
    "cellwar-2p-timed": cellwar_2p_timed,
    "cellwar-2p-abandoned": cellwar_2p_abandoned,
    "cellwar-3p-idle": cellwar_3p_idle,
}


def version_dir(version: str = engine.ENGINE_VERSION, root: Path = LOGS_DIR) -> Path:
    """The folder of the logs written by engine ``version``."""
    return root / f"v{version}"


def render_all() -> dict[str, str]:
    """File name -> JSON Lines text of every scenario, played by the current engine."""
    return {
        f"{name}.jsonl": play().jsonl()
        for name, play in SCENARIOS.items()
        if engine.versions.at_least(engine.ENGINE_VERSION, SINCE.get(name, "1"))
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: write (default) or ``--check`` the current version's golden logs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=LOGS_DIR, help="folder holding v<version>/")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    target = version_dir(root=args.out)
    files = render_all()
    if args.check:
        bad = [n for n, text in files.items() if not (target / n).is_file() or (target / n).read_text() != text]
        for n in bad:
            sys.stderr.write(f"differs: {target / n}\n")
        return 1 if bad else 0
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (target / name).write_text(text, encoding="utf-8")
        sys.stdout.write(f"{target / name}: {text.count(chr(10))} events\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
