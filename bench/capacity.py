"""Hosted capacity: running 300x300 Life games ticking at 8 generations/s, per engine core
(target: >= 5,000 games per core and >= 0.5x the kernel's own bound, docs/benchmarks.md;
the capacity curve shows where the achieved rate bends).

A *tick path* is how a host advances its running games once per tick interval (1/8 s,
1 generation each at speed 1). The sweep measures :class:`EngineRunPath`, the session's
path (docs/architecture/ticking.md): ``Engine.Run`` against a ``python -m
services.engine`` child process, each game named by id, the engine keeping the games
side by side in one slot pool and advancing them in one kernel call per generation
(:mod:`engine.life.slots`); the tick is sent as the session sends it, in calls of 200
games at once, which the engine serves as one batch. No one watches the games, so each
call runs :data:`UNWATCHED_STEP` generations of every game, every ``UNWATCHED_STEP / 8``
s, as the session's ticker steps games nobody watches (``UNWATCHED_STEP_S``); an info row
gives one point of games all watched (one generation every 1/8 s). Each point runs on
an engine process of its own, as a host holds only the games it ticks.

For each number of games K of the sweep (:data:`SWEEP`; ``--quick``: :data:`QUICK_SWEEP`),
with K running 300x300 two-colour games (hard edges, 30 % random soups in both halves;
10 distinct states repeated), until the curve bent (a point below 80 % of the
requested rate, or a second one below 95 %):

* engine CPU per step: the engine process's CPU seconds (user + system, all threads,
  from ``/proc/<pid>/stat``: the machine's CPU steal does not count) over
  :data:`CPU_CYCLES` checkpoint cycles (:data:`CHECKPOINT_TICKS` generations each: every
  game records once in each); one engine core then hosts K x step / (8 x that) games;
* achieved generations/s: steps paced at 8 / step per second for a few seconds (a step
  that takes longer than its share is followed at once by the next), generations run /
  seconds, against the requested 8 K; the bend is where it drops below 95 %;
* the kernel's own bound: the same K boards in the same slot pool advanced by the bare
  kernel program (no rules, no measures, no RPC), CPU time: kernel cell-updates/s /
  720,000 (300 x 300 cells x 8 generations/s) games per core.

One point of the plain ``Engine.Tick`` path (whole states) is kept beside it
("before"). The whole stack row runs :data:`STACK_GAMES` games through nats-server +
engine + session for :data:`STACK_SECONDS` (:func:`whole_stack`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

import numpy as np

import engine
from bench._stack import Services, cpu_seconds, new_services, row, run_async, soup_cells
from bench.kernel import SEED, random_board

TARGET = 5000.0
#: The path's games per core against the kernel's own bound, at least.
TARGET_RATIO = 0.5
GPS = 8  # generations per game-second at speed 1 (the session's tick rate)
DISTINCT = 10  # distinct game states, repeated to make K
CHUNK = 200  # games per Engine.Tick / Engine.Run call (the session's RUN_CHUNK_ITEMS)
CELLS_PER_GAME_S = 300 * 300 * GPS  # cell updates a game needs per second
SWEEP = [250, 500, 1000, 1500, 2000, 3000, 4000]
#: The whole-stack row: 1,000 games keep >= 95 % of their rate for 60 s.
STACK_GAMES = 1000
STACK_SECONDS = 60.0
#: Games whose generations the whole-stack row reads (an even sample of them).
STACK_SAMPLE = 100
QUICK_SWEEP = [100, 250, 500]
#: Other checkpoint intervals measured at one point of the sweep (seconds of running time).
CHECKPOINT_ROWS_S = (2, 16)
#: Checkpoint cycles (every game records once in each) a point's engine CPU is read over.
CPU_CYCLES = 2


def _checkpoint_ticks() -> int:
    """Ticks (1 generation each at speed 1) between a game's records: the session's
    default ``CELLWAR_CHECKPOINT_S`` times :data:`GPS`."""
    from services.common.settings import Settings

    return max(1, round(Settings.model_fields["checkpoint_s"].default * GPS))


CHECKPOINT_TICKS = _checkpoint_ticks()


def _unwatched_step() -> int:
    """Generations per call of a running game nobody watches: the session's ticker steps
    such games every ``UNWATCHED_STEP_S`` seconds (services/session/entrypoints/ticker.py),
    times :data:`GPS`."""
    from services.session.entrypoints.ticker import UNWATCHED_STEP_S

    return max(1, round(UNWATCHED_STEP_S * GPS))


UNWATCHED_STEP = _unwatched_step()


def running_state(seed: int, size: int = 300) -> Any:
    """A running ``size`` x ``size`` 2-player Life game with 30 % soups in both halves."""
    config = engine.config_from_dict(
        "life", {"width": size, "height": size, "budget": size * size, "max_generations": 100_000}
    )
    state = engine.add_player(engine.add_player(engine.new_game(config), "a"), "b")
    for pid in (1, 2):
        zone = engine.get_visible_state(state, pid)["zone"]
        cells = soup_cells(zone, 0.3, seed * 2 + pid)
        state = engine.apply_action(state, pid, {"type": "place", "cells": cells})
        state = engine.end_player_turn(state, pid)
    if engine.summary(state).phase != "running":
        raise RuntimeError("the capacity game is not running")
    return state


class TickPath(Protocol):
    """How a host advances K running games by one step (``step`` generations each)."""

    name: str
    #: generations a game runs per call
    step: int

    async def start(self) -> None:
        """Start what the path needs (servers, connections)."""

    async def prepare(self, games: int) -> None:
        """Host ``games`` running 300x300 games (replacing the previous set)."""

    async def tick(self) -> int:
        """Advance every hosted game by one step; returns the generations run, summed
        over the games (``games x step`` on a healthy path)."""

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the processes doing the ticking (not the bench)."""

    async def close(self) -> None:
        """Stop everything :meth:`start` started."""


class EngineTickPath:
    """Today's path: ``Engine.Tick`` over gRPC with each game's whole state (decode, rules,
    encode, hash per game), as the session's ticker calls it."""

    name = "Engine.Tick"
    step = 1

    def __init__(self) -> None:
        self._svc: Services | None = None
        self._channel: Any = None
        self._stub: Any = None
        self._requests: list[Any] = []
        self._protos: list[Any] = []

    async def start(self) -> None:
        import grpc

        from cellwar.v1 import engine_pb2_grpc
        from services.common.grpcutil import GRPC_OPTIONS
        from services.engine.server import to_proto

        self._protos = [to_proto(running_state(i)) for i in range(DISTINCT)]
        self._svc = new_services()
        await self._svc.start_engine()
        self._channel = grpc.aio.insecure_channel(self._svc.engine_target, options=GRPC_OPTIONS)
        self._stub = engine_pb2_grpc.EngineStub(self._channel)

    async def prepare(self, games: int) -> None:
        from cellwar.v1 import engine_pb2

        items = [
            engine_pb2.TickItem(state=self._protos[i % DISTINCT], generations=1)
            for i in range(games)
        ]
        self._requests = [
            engine_pb2.TickRequest(items=items[i : i + CHUNK]) for i in range(0, games, CHUNK)
        ]

    async def tick(self) -> int:
        ran = 0
        for request in self._requests:
            reply = await self._stub.Tick(request, timeout=300)
            ran += sum(1 for r in reply.results if r.generations_run == 1)
        return ran

    def cpu_seconds(self) -> float:
        assert self._svc is not None
        return cpu_seconds(self._svc.child("engine").pid)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
        if self._svc is not None:
            self._svc.close()


class EngineRunPath:
    """The session's path (docs/architecture/ticking.md): ``Engine.Run`` with
    each game's id, the hash of its last recorded state and the generations run since;
    the engine keeps the games bit-packed in its run cache and advances games of one
    size together (one slot pool, one kernel call per generation). A run is recorded
    (events + state sent back) at the checkpoint, every ``CELLWAR_CHECKPOINT_S`` of
    running time (the session's default: :data:`CHECKPOINT_TICKS` generations at 8 per
    second); the games' checkpoints are spread over those ticks, as in a host whose games started at different times. A
    game the cache does not hold (the first tick) is sent again with its state."""

    name = "Engine.Run (batched)"

    CHECKPOINT = CHECKPOINT_TICKS

    def __init__(self, step: int = 0, records: bool = True) -> None:
        #: generations per call of a game: the session's step of a game nobody watches
        #: (``UNWATCHED_STEP_S``), or 1 (a watched game: a step every tick)
        self.step = step or UNWATCHED_STEP
        #: False: no game is ever recorded (every item's ``checkpoint`` 0): what the path
        #: costs beside the records
        self.records = records
        self._svc: Services | None = None
        self._channel: Any = None
        self._stub: Any = None
        self._protos: list[Any] = []
        self._games: list[dict[str, Any]] = []
        self.recorded = 0
        self._ticks = 0

    async def start(self) -> None:
        import grpc

        from cellwar.v1 import engine_pb2_grpc
        from services.common.grpcutil import GRPC_OPTIONS
        from services.engine.server import to_proto

        if not self._protos:  # the same states at every point (an engine per point)
            self._protos = [to_proto(running_state(i)) for i in range(DISTINCT)]
        self._svc = new_services()
        await self._svc.start_engine()
        self._channel = grpc.aio.insecure_channel(self._svc.engine_target, options=GRPC_OPTIONS)
        self._stub = engine_pb2_grpc.EngineStub(self._channel)

    async def prepare(self, games: int) -> None:
        # each point on an engine of its own: the games of the point before would stay in
        # its run cache (nothing releases them: they are not ticked, and no command or end
        # came), parked in their pool's slots, which the kernel still sweeps
        if self._games:
            await self.close()
            await self.start()
        self._games = [
            {
                "id": f"cap{games}-{i}",
                "base": self._protos[i % DISTINCT],
                "done": 0,
                # the first checkpoint of game i falls at tick i % CHECKPOINT: spread out
                "checkpoint": 1 + i % self.CHECKPOINT if self.records else 0,
            }
            for i in range(games)
        ]

    def _item(self, game: dict[str, Any], with_base: bool) -> Any:
        from cellwar.v1 import engine_pb2

        item = engine_pb2.RunItem(
            game_id=game["id"],
            base_hash=game["base"].state_hash,
            done=game["done"],
            generations=self.step,
            checkpoint=game["checkpoint"],
        )
        if with_base:
            item.base.CopyFrom(game["base"])
        return item

    async def _call(self, games: list[dict[str, Any]], with_base: bool) -> list[Any]:
        """One tick's ``Engine.Run``: calls of :data:`CHUNK` games, all at once (as the
        session's engine client sends them; the engine serves them as one batch)."""
        from cellwar.v1 import engine_pb2

        requests = [
            engine_pb2.RunRequest(items=[self._item(g, with_base) for g in games[i : i + CHUNK]])
            for i in range(0, len(games), CHUNK)
        ]
        self._ticks += 1
        for r in requests:  # one batch, as the session's engine client marks a tick
            r.batch, r.batch_calls = f"tick{self._ticks}", len(requests)
        replies = await asyncio.gather(*(self._stub.Run(r, timeout=600) for r in requests))
        return [result for reply in replies for result in reply.results]

    async def tick(self) -> int:
        from cellwar.v1 import engine_pb2

        results = await self._call(self._games, False)
        missed = [
            g
            for g, r in zip(self._games, results, strict=True)
            if r.status == engine_pb2.RunResult.MISS
        ]
        if missed:
            again = iter(await self._call(missed, True))
            results = [next(again) if r.status == engine_pb2.RunResult.MISS else r for r in results]
        ran = 0
        for game, result in zip(self._games, results, strict=True):
            if result.status != engine_pb2.RunResult.OK:
                continue
            ran += result.ran
            if result.events:  # recorded: the next tick names the recorded state
                game["base"], game["done"], game["checkpoint"] = result.state, 0, self.CHECKPOINT
                self.recorded += 1
            else:
                game["done"] = result.done
        return ran

    def cpu_seconds(self) -> float:
        assert self._svc is not None
        return cpu_seconds(self._svc.child("engine").pid)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if self._svc is not None:
            self._svc.close()
            self._svc = None


async def _point(path: TickPath, games: int, cpu_ticks: int, paced_s: float) -> dict[str, Any]:
    """One point of the sweep (see the module doc)."""
    await path.prepare(games)
    if await path.tick() != games * path.step:  # warm-up, and a check
        raise RuntimeError(
            f"{path.name} did not run {path.step} generation(s) for each of {games} games"
        )
    c0, t0 = path.cpu_seconds(), time.perf_counter()
    for _ in range(cpu_ticks):
        await path.tick()
    cpu_per_tick = max((path.cpu_seconds() - c0) / cpu_ticks, 1e-9)
    wall_per_tick = (time.perf_counter() - t0) / cpu_ticks
    # paced: one step per step/8 s; a late step is followed at once by the next
    interval = path.step / GPS
    ran = ticks = 0
    start = time.perf_counter()
    next_at = start
    while True:
        now = time.perf_counter()
        if now - start >= paced_s and ticks > 0:
            break
        if next_at > now:
            await asyncio.sleep(next_at - now)
        ran += await path.tick()
        ticks += 1
        next_at += interval
    # n paced ticks span n intervals (the first one starts at 0)
    elapsed = max(time.perf_counter() - start, ticks * interval)
    return {
        "games": games,
        "requested_gps": float(GPS * games),
        "achieved_gps": ran / elapsed,
        "paced_ticks": ticks,
        "paced_seconds": elapsed,
        "step": path.step,
        "engine_cpu_per_tick_s": cpu_per_tick,
        "wall_per_tick_s": wall_per_tick,
        "games_per_core": games * path.step / (GPS * cpu_per_tick),
        "ceiling_gps": games * min(float(GPS), path.step / cpu_per_tick),
    }


async def sweep(
    path: TickPath, counts: list[int], cpu_ticks: int, paced_s: float, *, to_bend: bool = False
) -> list[dict[str, Any]]:
    """The capacity curve of ``path``: one :func:`_point` per number of games; with
    ``to_bend``, none after the curve bent: a point below 80 % of the requested rate, or
    the second one below 95 % (one may be the machine's CPU steal)."""
    await path.start()
    points: list[dict[str, Any]] = []
    try:
        for k in counts:
            points.append(await _point(path, k, cpu_ticks, paced_s))
            shares = [p["achieved_gps"] / p["requested_gps"] for p in points]
            if to_bend and (shares[-1] < 0.8 or sum(x < 0.95 for x in shares) >= 2):
                break
        return points
    finally:
        await path.close()


async def whole_stack(games: int, seconds: float) -> dict[str, Any]:
    """``games`` running 300x300 games through the whole stack (nats-server, engine,
    session as child processes; the session's ticker at 8 generations/s): each game is
    created, joined and started through ``Session`` gRPC (30 % soups), then the
    generations of an even sample of :data:`STACK_SAMPLE` of them are read (spectator
    GetView, each reading timed at its midpoint) before and after ``seconds``; the games
    nobody watches step together (one batch every 0.5 s; a sampled game is watched for 5
    s after each reading), so the sample's mean rate is every game's. Returns the
    achieved generations/s against the requested ``8 x games``, and the engine's and
    the session's CPU seconds per game-second over the last ``seconds - 6`` s (the first
    6 s carry the views the first reading asked for)."""
    import json

    import grpc

    from cellwar.v1 import session_pb2, session_pb2_grpc
    from services.common.grpcutil import GRPC_OPTIONS

    svc = new_services()
    try:
        svc.start_nats()
        await svc.start_engine()
        await svc.start_session()
        async with grpc.aio.insecure_channel(svc.session_target, options=GRPC_OPTIONS) as ch:
            stub = session_pb2_grpc.SessionStub(ch)
            config = json.dumps(
                {"width": 300, "height": 300, "budget": 90_000, "max_generations": 100_000}
            ).encode()
            limit = asyncio.Semaphore(16)

            async def start_game(i: int) -> str:
                async with limit:
                    gid = (
                        await stub.CreateGame(
                            session_pb2.CreateGameRequest(kind="life", config=config)
                        )
                    ).game_id
                    for name in ("a", "b"):
                        await stub.Join(session_pb2.JoinRequest(game_id=gid, name=f"{name}{i}"))
                    for pid, zone in ((1, (0, 0, 150, 300)), (2, (150, 0, 300, 300))):
                        cells = soup_cells(zone, 0.3, i * 2 + pid)
                        action = json.dumps({"type": "place", "cells": cells}).encode()
                        await stub.Act(
                            session_pb2.ActRequest(game_id=gid, player_id=pid, action=action)
                        )
                        await stub.EndTurn(session_pb2.EndTurnRequest(game_id=gid, player_id=pid))
                    return gid

            t_setup = time.perf_counter()
            ids = await asyncio.gather(*(start_game(i) for i in range(games)))
            setup_s = time.perf_counter() - t_setup

            # the games read: an even sample (reading all of them would load the session
            # and the engine with views at both ends of the window)
            sample = ids[:: max(1, games // STACK_SAMPLE)]

            async def generations() -> list[int]:
                async def one(gid: str) -> int:
                    async with limit:
                        reply = await stub.GetView(session_pb2.GetViewRequest(game_id=gid))
                        return int(json.loads(reply.view)["generation"])

                return await asyncio.gather(*(one(g) for g in sample))

            await asyncio.sleep(3.0)  # every game's first tick rebuilt its run cache entry
            # a reading takes a while (games go on meanwhile): its time is its midpoint
            r0 = time.perf_counter()
            g0 = await generations()
            t0 = (r0 + time.perf_counter()) / 2
            await asyncio.sleep(min(6.0, seconds / 2))
            engine_pid, session_pid = svc.child("engine").pid, svc.child("session").pid
            c_eng, c_ses, tc = (
                cpu_seconds(engine_pid),
                cpu_seconds(session_pid),
                time.perf_counter(),
            )
            await asyncio.sleep(max(seconds - (tc - t0), 1.0))
            c_eng, c_ses = cpu_seconds(engine_pid) - c_eng, cpu_seconds(session_pid) - c_ses
            cpu_window = time.perf_counter() - tc
            r1 = time.perf_counter()
            g1 = await generations()
            t1 = (r1 + time.perf_counter()) / 2
        elapsed = t1 - t0
        rates = sorted((b - a) / elapsed for a, b in zip(g0, g1, strict=True))
        achieved = sum(rates) / len(rates) * games
        return {
            "games": games,
            "seconds": elapsed,
            "setup_s": setup_s,
            "sample_gps": {"min": rates[0], "median": rates[len(rates) // 2], "max": rates[-1]},
            "requested_gps": float(GPS * games),
            "achieved_gps": achieved,
            "engine_cpu_per_game_s": c_eng / (games * cpu_window),
            "session_cpu_per_game_s": c_ses / (games * cpu_window),
            "engine_cores": c_eng / cpu_window,
            "session_cores": c_ses / cpu_window,
        }
    finally:
        svc.close()


def kernel_bound(games: int, repeats: int, native: bool | None = None) -> dict[str, Any]:
    """The kernel's own bound on ``games`` 300x300 two-colour boards: the bare kernel of a
    slot pool holding them (:mod:`engine.life.slots`, as the engine holds running
    games; no rules, no measures): the native kernel's generation alone
    (``measure=False``) where it is built, else the numpy program without its measures;
    best CPU seconds per generation of a few (``native`` False: the numpy program, as
    before the native kernel). Returns ``{"cell_updates_s", "games_per_core", "kernel"}``
    (cell updates/s / 720,000)."""
    from engine.life.bitplan import Program
    from engine.life.slots import NativeProgram, SlotPool

    pool = SlotPool(300, 300, (1, 2), native=native)
    distinct = np.stack(
        [pool.board_words(random_board(300, 2, seed=SEED + i)) for i in range(DISTINCT)]
    )
    slots = [pool.take() for _ in range(games)]
    pool.put_words(slots, distinct[np.arange(games) % DISTINCT])
    assert pool.program is not None
    if isinstance(pool.program, NativeProgram):
        native = pool.program

        def step() -> None:
            native.run(measure=False)

        kernel = "native"
    else:
        bare = Program(pool.program.geo, pool.n_planes, pool.program.geo.h + 2)
        for dst, src in zip(bare.planes, pool.program.planes, strict=True):
            dst[:] = src
        step, kernel = bare.run, "numpy"
    step()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(GPS):
            step()
        best = min(best, (time.process_time() - t0) / GPS)
    rate = games * 300 * 300 / max(best, 1e-9)
    return {"cell_updates_s": rate, "games_per_core": rate / CELLS_PER_GAME_S, "kernel": kernel}


def digest_input(board: np.ndarray) -> bytes:
    """The bytes a version 3 stability digest hashes for an (H, W) uint8 board: its
    canonical planes' pack words, one plane after the other
    (:func:`engine.life.stability.board_planes_digest`)."""
    from engine.life import stability

    planes = stability.board_canonical_planes(board)
    return b"".join(np.ascontiguousarray(p, dtype="<u8").tobytes() for p in planes)


def record_sha_floor(repeats: int) -> dict[str, Any]:
    """The SHA-256 one record of a running 300x300 game needs, as the recorded state's
    format fixes it (engine version 3 and later): the state hash, SHA-256 of the
    state's canonical encoding (:func:`engine.api.state_hash`, ~91 kB: the board at one
    byte a cell), and the stability digests of the boards the record lists, SHA-256 of
    each board's canonical planes (24 kB; :func:`engine.life.stability.planes_digest`),
    ``HISTORY + 1`` of them (the boards of the last ``HISTORY`` generations and the
    recorded one: the slot pool digests those in its pass). Best CPU time of a few, the
    digests with the SHA-256 the native kernel digests with where it is built.

    Returns ``{"state_bytes", "digest_bytes", "digests", "state_hash_us", "digest_us",
    "record_us", "us_per_game_generation", "games_per_core"}``: ``record_us`` per
    record, spread over the :data:`CHECKPOINT_TICKS` generations between records, and
    the games one core could host doing nothing but that hashing."""
    import hashlib

    from engine.life import slots, stability

    # a state as a record carries it: its history full (HISTORY boards)
    _, state = engine.decide_tick(running_state(0), CHECKPOINT_TICKS)
    encoded = engine.encode_state(state)
    planes = digest_input(state.grid)
    digest = slots._native.sha256 if slots.NATIVE else hashlib.sha256  # type: ignore[union-attr]

    def best(fn, data: bytes, n: int) -> float:
        low = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            for _ in range(n):
                fn(data)
            low = min(low, (time.process_time() - t0) / n)
        return low * 1e6

    count = stability.HISTORY + 1
    state_us = best(lambda b: hashlib.sha256(b).digest(), encoded, 200)
    digest_us = best(digest, planes, 400)
    record_us = state_us + count * digest_us
    per_gen = record_us / CHECKPOINT_TICKS
    return {
        "state_bytes": len(encoded),
        "digest_bytes": len(planes),
        "digests": count,
        "state_hash_us": state_us,
        "digest_us": digest_us,
        "record_us": record_us,
        "us_per_game_generation": per_gen,
        "games_per_core": 1e6 / (GPS * per_gen),
    }


def _kernel_1024(repeats: int) -> float:
    """Cell updates/s of the kernel's headline figure: two colours, 1024x1024 torus,
    200 generations (:mod:`bench.kernel`), best CPU time of a few."""
    from engine.life.kernel import step

    board = random_board(1024, 2)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        step(board, torus=True, generations=200)
        best = min(best, time.process_time() - t0)
    return 1024 * 1024 * 200 / max(best, 1e-9)


def run(quick: bool = False) -> dict[str, Any]:
    """Sweep the tick path over the numbers of games to where it bends, with the
    kernel's own bound at each point, plus the plain path, the whole stack and the
    in-process rules of one game; returns ``{"rows": [...], "sweep": [...], ...}``."""
    from services.engine.server import to_proto

    counts = QUICK_SWEEP if quick else SWEEP
    path = EngineRunPath()
    # CPU over CPU_CYCLES checkpoint cycles (every game records once in each; two are
    # steadier than one)
    cycles = CPU_CYCLES * path.CHECKPOINT // path.step
    points = run_async(sweep(path, counts, cycles, 1.0 if quick else 2.0, to_bend=True))
    for p in points:
        bound = kernel_bound(p["games"], 2 if quick else 3)
        p["kernel_gps"] = bound["games_per_core"] * GPS
        p["kernel_games_per_core"] = bound["games_per_core"]
        p["kernel_cell_updates_s"] = bound["cell_updates_s"]
        p["kernel"] = bound["kernel"]
    # the same path with records every 2 s and every 16 s (CELLWAR_CHECKPOINT_S), at one
    # point: what the checkpoint interval costs
    short_games = 250 if quick else 1000
    other_points = {}
    for seconds in CHECKPOINT_ROWS_S:
        other = EngineRunPath()
        other.CHECKPOINT = seconds * GPS
        other_points[seconds] = run_async(
            sweep(other, [short_games], CPU_CYCLES * other.CHECKPOINT // other.step, 1.0)
        )[0]
    # the same games all watched: a step of one generation every tick (views not asked for)
    watched = EngineRunPath(step=1)
    watched_point = run_async(
        sweep(watched, [short_games], CPU_CYCLES * watched.CHECKPOINT, 1.0)
    )[0]
    plain_counts = [25] if quick else [50]
    plain = run_async(sweep(EngineTickPath(), plain_counts, 2, 1.0))
    stack_games, stack_s = (50, 8.0) if quick else (STACK_GAMES, STACK_SECONDS)
    stack = run_async(whole_stack(stack_games, stack_s))

    states = [running_state(i) for i in range(DISTINCT)]

    def one_game() -> None:
        for s in states:
            _, new = engine.decide_tick(s, 1)
            to_proto(new)

    best = float("inf")
    for _ in range(3 if quick else 5):
        t0 = time.process_time()
        one_game()
        best = min(best, time.process_time() - t0)
    per_game = best / DISTINCT

    # the figure: engine CPU per tick at the sweep's largest point (per-tick costs spread
    # over the most games), against the kernel's bound on the same boards
    kept = [p for p in points if p["achieved_gps"] >= 0.95 * p["requested_gps"]]
    top = max(points, key=lambda p: p["games"])
    ratio = top["games_per_core"] / top["kernel_games_per_core"]
    numpy_bound = kernel_bound(top["games"], 2 if quick else 3, native=False)
    # what the recorded state's format costs: the same point with no records, and the
    # SHA-256 a record needs (docs/architecture/ticking.md "What a record costs")
    unrecorded = run_async(sweep(EngineRunPath(records=False), [top["games"]], cycles, 1.0))[0]
    sha = record_sha_floor(2 if quick else 3)
    bound = top["kernel_games_per_core"]
    # games per core of kernel + hashing alone: 1 / (1/bound + 1/sha), against the bound
    most = sha["games_per_core"] / (sha["games_per_core"] + bound)
    rows = [
        row(
            f"{path.name}: games per engine core at 8 gen/s ({top['games']} games, engine CPU "
            f"/proc), against the kernel's own bound ({top['kernel']} kernel)",
            "games/core",
            top["games_per_core"],
            f">= {TARGET:,.0f} games/core, >= {TARGET_RATIO:g}x kernel bound",
            top["games_per_core"] >= TARGET and ratio >= TARGET_RATIO,
            reference=top["kernel_games_per_core"],
            ratio=ratio,
            kernel_cell_updates_s=top["kernel_cell_updates_s"],
        )
    ]
    for p in points:
        share = p["achieved_gps"] / p["requested_gps"]
        rows.append(
            row(
                f"  {p['games']} games paced at 8 gen/s: achieved ({share:.0%} of requested), "
                f"{p['games_per_core']:,.0f} games/core vs kernel bound {p['kernel_games_per_core']:,.0f}",
                "generations/s",
                p["achieved_gps"],
                "- (info; curve in report.md)",
                None,
                reference=p["requested_gps"],
                ratio=share,
            )
        )
    rows.append(
        row(
            f"  the same games per core against the numpy circuits' bound on the same boards "
            f"({numpy_bound['cell_updates_s'] / 1e9:.1f}e9 cell updates/s)",
            "games/core",
            top["games_per_core"],
            "- (info: the kernel before the native one)",
            None,
            reference=numpy_bound["games_per_core"],
            ratio=top["games_per_core"] / numpy_bound["games_per_core"],
        )
    )
    rows.append(
        row(
            f"  the same {top['games']} games never recorded (the path beside the records): "
            "games per core against the kernel's own bound",
            "games/core",
            unrecorded["games_per_core"],
            "- (info: what the recorded state's format leaves out)",
            None,
            reference=bound,
            ratio=unrecorded["games_per_core"] / bound,
        )
    )
    rows.append(
        row(
            f"  the SHA-256 a record needs alone (state hash of {sha['state_bytes']:,} bytes, "
            f"{sha['digests']} stability digests of {sha['digest_bytes']:,}; one record per "
            f"{CHECKPOINT_TICKS} generations): games per core; kernel + this reach at most "
            f"{most:.2f}x the kernel's bound",
            "games/core",
            sha["games_per_core"],
            "- (info: the recorded state's format)",
            None,
            reference=bound,
            ratio=sha["games_per_core"] / bound,
            most_ratio=most,
            record_us=sha["record_us"],
            state_hash_us=sha["state_hash_us"],
            digest_us=sha["digest_us"],
        )
    )
    rows.append(
        row(
            "  most games keeping >= 95 % of the requested rate (sweep points)",
            "games",
            float(max(p["games"] for p in kept)) if kept else 0.0,
            "- (info; the whole-stack figure is the session's)",
            None,
        )
    )
    long_point = next((p for p in points if p["games"] == short_games), None)
    if long_point is not None:
        beside = [
            (
                f"with a record every {seconds} s instead of every {CHECKPOINT_TICKS // GPS} s "
                f"(CELLWAR_CHECKPOINT_S={seconds})",
                point,
                "the checkpoint's cost",
            )
            for seconds, point in other_points.items()
        ]
        beside.append(
            (
                f"all watched (a step of one generation every tick, not {UNWATCHED_STEP} every "
                f"{UNWATCHED_STEP / GPS:g} s; views not counted)",
                watched_point,
                "what the per-game cost of a call is",
            )
        )
        for label, point, why in beside:
            rows.append(
                row(
                    f"  {short_games} games {label}: games per core",
                    "games/core",
                    point["games_per_core"],
                    f"- (info: {why})",
                    None,
                    reference=long_point["games_per_core"],
                    ratio=point["games_per_core"] / long_point["games_per_core"],
                )
            )
    k1024 = _kernel_1024(2 if quick else 3)
    rows.append(
        row(
            "  kernel headline (two colours 1024x1024 torus) / 720,000: games per core",
            "games/core",
            k1024 / CELLS_PER_GAME_S,
            "- (info)",
            None,
            cell_updates_s=k1024,
        )
    )
    for p in plain:
        rows.append(
            row(
                f"  before: Engine.Tick (plain, whole states), {p['games']} games (engine CPU)",
                "games/core",
                p["games_per_core"],
                "- (info)",
                None,
            )
        )
    share = stack["achieved_gps"] / stack["requested_gps"]
    rows.append(
        row(
            f"whole stack: {stack_games} games through the session for {stack_s:.0f} s, "
            f"achieved ({share:.0%} of requested)",
            "generations/s",
            stack["achieved_gps"],
            ">= 95 % of requested",
            share >= 0.95,
            reference=stack["requested_gps"],
            ratio=share,
            detail=stack,
        )
    )
    rows.append(
        row(
            f"  whole stack: engine CPU per game-second (games per engine core = 1000 / this, at "
            f"{stack_games} games: a tick's fixed costs are shared by that many)",
            "cpu-ms",
            stack["engine_cpu_per_game_s"] * 1000,
            "- (info)",
            None,
            games_per_core=1.0 / max(stack["engine_cpu_per_game_s"], 1e-12),
            session_cpu_per_game_s=stack["session_cpu_per_game_s"],
        )
    )
    rows.append(
        row(
            "in-process engine.decide_tick + to_proto, one 300x300 game (CPU)",
            "games/core",
            1.0 / (GPS * per_game),
            "- (info)",
            None,
            per_game_ms=per_game * 1000,
        )
    )
    return {
        "rows": rows,
        "quick": quick,
        "path": path.name,
        "sweep": points,
        "plain_sweep": plain,
        "unrecorded": unrecorded,
        "record_sha": sha,
        "whole_stack": stack,
        "generations_per_second": GPS,
        "distinct_states": DISTINCT,
        "chunk": CHUNK,
    }
