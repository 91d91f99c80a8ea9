"""WebSocket fan-out: many spectators of one running game (target: 500 viewers, every
frame delivered, lag p99 <= 100 ms).

A 60x60 2-player Life game runs at the platform's rate (8 generations/s x speed 1) on the
full platform (nats-server with ``sync_interval: always``, engine, session, gateway:
child processes). Its soup is chosen in-process so the game keeps running through the
measurement. ``VIEWERS`` spectators (no token) open ``WS /game/{id}/stream`` from the
bench process; a NATS subscriber in the bench process reads every event of the game from
``games.<id>.events``.

The session records a running game's generations at checkpoints (every 8 s by default;
this bench starts its session with ``CELLWAR_CHECKPOINT_S=2`` so that a window holds
several recorded events; docs/architecture/ticking.md) and pushes a frame every tick in between: a frame is known by
its ``(seq, generation)`` (the version moves at a recorded event, the generation at every
tick).

* sent: the frames of the window (every ``(seq, generation)`` some viewer received
  first within it);
* delivered: (viewer, frame) pairs received;
* lag: WebSocket receive time - the event's ``time`` (stamped by the session just before
  the JetStream append; same machine, same clock) for the frame of each event appended
  in the window (a checkpoint), so it covers append + fsync, the session's Watch, the
  gateway and the socket; frames between events carry no time of their own;
* spread: per frame, last viewer's receive time - first viewer's.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

import engine
from bench._stack import cpu_seconds, percentile, row, run_async, soup_cells, start_platform

LAG_TARGET_MS = 100.0
GPS = 8.0  # generations per second at speed 1 (the session's tick rate)


def pick_soup_seed(min_generations: int, width: int = 60, height: int = 60) -> int:
    """The first seed whose soups (30 %, seed for player 1, seed + 1 for player 2) keep a
    ``width`` x ``height`` game running for ``min_generations`` generations."""
    config = engine.config_from_dict("life", {"width": width, "height": height, "budget": 10_000})
    for seed in range(0, 200, 2):
        state = engine.add_player(engine.add_player(engine.new_game(config), "a"), "b")
        for pid in (1, 2):
            zone = engine.get_visible_state(state, pid)["zone"]
            cells = soup_cells(zone, 0.3, seed + pid - 1)
            state = engine.apply_action(state, pid, {"type": "place", "cells": cells})
            state = engine.end_player_turn(state, pid)
        state = engine.tick(state, min_generations)
        s = engine.summary(state)
        if s.phase == "running" and s.generation >= min_generations:
            return seed
    raise RuntimeError(f"no soup keeps a game running for {min_generations} generations")


def _number_after(frame: str, key: str) -> int:
    s0 = frame.index(key) + len(key)
    end = s0
    while frame[end].isdigit():
        end += 1
    return int(frame[s0:end])


def _seq_of(frame: str) -> tuple[str, tuple[int, int]]:
    """``(type, (seq, generation))`` of a ``{"type":...,"seq":N,"view":{...}}`` frame
    without parsing the view (``generation`` -1 when it has none)."""
    t0 = frame.index('"type":"') + 8
    kind = frame[t0 : frame.index('"', t0)]
    seq = _number_after(frame, '"seq":')
    generation = _number_after(frame, '"generation":') if '"generation":' in frame else -1
    return kind, (seq, generation)


async def _bench(viewers: int, seconds: float) -> dict[str, Any]:
    import nats
    from websockets.asyncio.client import connect

    from cellwar.v1 import events_pb2

    connect_budget = 30.0 + viewers * 0.05
    seed = pick_soup_seed(int((connect_budget + seconds + 15) * GPS))
    svc = await start_platform(fsync=True, checkpoint_s=2.0)
    nc = None
    tasks: list[asyncio.Task] = []
    try:
        url = svc.gateway_url
        async with httpx.AsyncClient(timeout=30.0) as client:
            cfg = {"kind": "life", "config": {"budget": 10_000, "max_generations": 100_000}}
            gid = (await client.post(f"{url}/game/create", json=cfg)).json()["game_id"]
            tokens = []
            for name in ("p1", "p2"):
                r = await client.post(f"{url}/game/{gid}/join", json={"name": name})
                tokens.append(r.json()["player_token"])

        events: dict[int, float] = {}  # seq -> event time (epoch seconds)
        blind: set[int] = set()  # seqs of the blind placements (a spectator does not see)
        nc = await nats.connect(svc.nats_url)

        async def on_event(msg) -> None:
            ev = events_pb2.Event.FromString(msg.data)
            events[ev.seq] = ev.time.seconds + ev.time.nanos / 1e9
            if ev.type == "ActionApplied":  # here only the two soups, during placement
                blind.add(ev.seq)

        await nc.subscribe(f"games.{gid}.events", cb=on_event)

        received: list[list[tuple[tuple[int, int], float]]] = [[] for _ in range(viewers)]
        opened = 0
        all_open = asyncio.Event()
        stop = asyncio.Event()
        failures: list[str] = []
        ws_url = url.replace("http://", "ws://") + f"/game/{gid}/stream"

        async def viewer(i: int) -> None:
            nonlocal opened
            got = received[i]
            try:
                async with connect(
                    ws_url, max_size=None, ping_interval=None, open_timeout=60
                ) as ws:
                    opened += 1
                    if opened == viewers:
                        all_open.set()
                    stop_wait = asyncio.ensure_future(stop.wait())
                    try:
                        while True:
                            recv = asyncio.ensure_future(ws.recv())
                            done, _ = await asyncio.wait(
                                {recv, stop_wait}, return_when=asyncio.FIRST_COMPLETED
                            )
                            if recv not in done:
                                recv.cancel()
                                return
                            frame = recv.result()
                            now = time.time()
                            kind, seq = _seq_of(frame)
                            if kind == "error":
                                failures.append(frame[:200])
                                return
                            got.append((seq, now))
                    finally:
                        stop_wait.cancel()
            except Exception as exc:  # noqa: BLE001 - reported as a failed viewer
                failures.append(f"viewer {i}: {type(exc).__name__}: {exc}")
                if len(failures) + opened >= viewers:
                    all_open.set()

        # The viewers watch a placement game first (no frames), then it starts running.
        for start in range(0, viewers, 50):
            tasks += [
                asyncio.create_task(viewer(i)) for i in range(start, min(start + 50, viewers))
            ]
            await asyncio.sleep(0.05)
        await asyncio.wait_for(all_open.wait(), timeout=connect_budget)
        open_ok = opened
        async with httpx.AsyncClient(timeout=30.0) as client:
            for pid, token in ((1, tokens[0]), (2, tokens[1])):
                headers = {"Authorization": f"Bearer {token}"}
                zone = (await client.get(f"{url}/game/{gid}/state", headers=headers)).json()["zone"]
                cells = soup_cells(zone, 0.3, seed + pid - 1)
                body = {"type": "place", "cells": cells}
                (
                    await client.post(f"{url}/game/{gid}/action", json=body, headers=headers)
                ).raise_for_status()
                (
                    await client.post(f"{url}/game/{gid}/end_turn", headers=headers)
                ).raise_for_status()
        await asyncio.sleep(1.0)  # first ticks; the measurement starts after them
        pids = {c.name: c.pid for c in svc.children}
        cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
        own0 = os.times()
        t_start = time.time()
        await asyncio.sleep(seconds)
        t_end = time.time()
        cpu1 = {n: cpu_seconds(p) for n, p in pids.items()}
        own1 = os.times()
        await asyncio.sleep(1.0)  # frames of the last events still in flight
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        tasks = []
        first_seen: dict[tuple[int, int], float] = {}
        for got in received:
            for key, now in got:
                if now < first_seen.get(key, float("inf")):
                    first_seen[key] = now
        sent_set = {k for k, t in first_seen.items() if t_start <= t < t_end}
        sent = sorted(sent_set)
        # a frame's seq is the spectator's own version: the events it observed, every
        # event but the blind placements (engine.api.observers)
        version_of = {seq: seq - sum(1 for b in blind if b < seq) for seq in events}
        recorded = {version_of[s]: s for s, t in events.items() if t_start <= t < t_end}
        own_frame = {}  # version after a recorded event -> the frame that first shows it
        for key in sent:
            if key[0] in recorded and key[0] not in own_frame:
                own_frame[key[0]] = key
        delivered = 0
        lags: list[float] = []
        first_last: dict[tuple[int, int], list[float]] = {}
        for got in received:
            seen = set()
            for key, now in got:
                if key in sent_set and key not in seen:
                    seen.add(key)
                    delivered += 1
                    if own_frame.get(key[0]) == key:
                        lags.append((now - events[recorded[key[0]]]) * 1000.0)
                    fl = first_last.setdefault(key, [now, now])
                    fl[0], fl[1] = min(fl[0], now), max(fl[1], now)
        spreads = [(b - a) * 1000.0 for a, b in first_last.values()]
        cpu = {n: (cpu1[n] - cpu0[n]) / seconds for n in pids}
        cpu["bench-client"] = (own1.user + own1.system - own0.user - own0.system) / seconds
        return {
            "viewers": viewers,
            "viewers_open": open_ok,
            "failures": failures[:5],
            "failed_viewers": len(failures),
            "seconds": t_end - t_start,
            "frames_sent": len(sent),
            "events_recorded": len(recorded),
            "lag_samples": len(lags),
            "frames_per_s": len(sent) / (t_end - t_start),
            "expected": len(sent) * viewers,
            "delivered": delivered,
            "lag_p50_ms": percentile(lags, 50),
            "lag_p99_ms": percentile(lags, 99),
            "lag_max_ms": max(lags) if lags else None,
            "spread_p99_ms": percentile(spreads, 99),
            "cpu_cores": {n: round(v, 3) for n, v in cpu.items()},
            "soup_seed": seed,
        }
    finally:
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if nc is not None:
            await nc.close()
        svc.close()


def run(quick: bool = False) -> dict[str, Any]:
    """500 viewers for 10 s (``quick``: 100 viewers for 5 s)."""
    viewers, seconds = (100, 5.0) if quick else (500, 10.0)
    r = run_async(_bench(viewers, seconds))
    cpu = ", ".join(f"{n} {v:.2f}" for n, v in r["cpu_cores"].items())
    print(
        f"  fanout: {r['viewers_open']}/{viewers} viewers open, {r['frames_sent']} frames sent "
        f"({r['frames_per_s']:.1f}/s), {r['delivered']}/{r['expected']} delivered; CPU cores: {cpu}"
    )
    for f in r["failures"]:
        print(f"    failure: {f}")
    share = 100.0 * r["delivered"] / r["expected"] if r["expected"] else 0.0
    all_ok = r["expected"] > 0 and r["delivered"] == r["expected"] and not r["failed_viewers"]
    rows = [
        row(
            f"frames delivered, {viewers} viewers of one 60x60 game at 8 gen/s",
            "% of sent",
            share,
            "100 % (every frame)",
            all_ok,
            **{k: r[k] for k in ("frames_sent", "expected", "delivered", "failed_viewers")},
        ),
        row(
            "lag p99: event time -> WebSocket frame received (recorded events)",
            "ms",
            r["lag_p99_ms"],
            f"<= {LAG_TARGET_MS:g} ms",
            r["lag_p99_ms"] is not None and r["lag_p99_ms"] <= LAG_TARGET_MS,
        ),
        row("lag p50", "ms", r["lag_p50_ms"], "- (info)", None),
        row(
            "spread p99: first to last viewer of a frame",
            "ms",
            r["spread_p99_ms"],
            "- (info)",
            None,
        ),
        row(
            "frames sent (every tick: generations, and the recorded events)",
            "frames/s",
            r["frames_per_s"],
            "- (info, 8 expected)",
            None,
            events_recorded=r["events_recorded"],
            lag_samples=r["lag_samples"],
        ),
    ]
    return {"rows": rows, "quick": quick, "detail": r}
