"""Durable appends in flight: does JetStream merge fsyncs, and does the session's append
path keep many games' appends in flight together (docs/architecture/batching.md)?

One ``nats-server`` child with JetStream ``sync_interval: always`` (the durability
``make run`` and the images use, :func:`deploy.nats.write_config`), the ``GAME_EVENTS``
stream as the session creates it (:meth:`EventStore.ensure_stream`). ``N`` = 1, 16, 256
games, each with one append in flight (a game's next append waits for the ack of its
previous one, as the session's per-game lock makes it; other games do not wait), the same
~150-byte ``cellwar.v1.Event`` each time. Four loops, each run for a short window per
``N``, in turns, repeated (the machine has CPU steal: figures are ranges over repeats):

* ``raw fenced``: ``js.publish`` with ``Nats-Expected-Last-Subject-Sequence`` (the last
  ack's stream sequence of the game) and ``Nats-Msg-Id``, awaiting each ack, the anchor;
* ``raw unfenced``: the same without the fence header (only ``Nats-Msg-Id``);
* ``raw atomic batch``: each round one JetStream atomic batch (``Nats-Batch-Id``,
  NATS >= 2.12) carrying the next event of all ``N`` games, each fenced, awaiting the
  commit's ack: what the server reaches when one fsync covers many appends;
* ``EventStore.append``: :meth:`services.session.adapters.event_store.EventStore.append`,
  the code every recorded command goes through (its group commit included).

Besides wall time, CPU seconds of the ``nats-server`` child and of the bench process
(``/proc/<pid>/stat``) per append, and a write+fsync loop of 150 bytes on the same disk
(the ceiling of one fsync per append). Rows: appends/s (median, range) per loop and
``N``, the ratios 256 in flight / 1 in flight and ``EventStore.append`` / the raw loops at
256, with targets: ``EventStore.append`` at 256 in flight at least 10x its rate at 1, and
at least 0.8x the best raw publish loop (fenced or not); against the raw atomic-batch loop
(the ceiling of one fsync per batch) the ratio is info.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench._stack import cpu_seconds, row, run_async
from bench.append import event_store_on_nats, sample_event

IN_FLIGHT = (1, 16, 256)
LOOPS = ("raw fenced", "raw unfenced", "raw atomic batch", "EventStore.append")
FENCE = "Nats-Expected-Last-Subject-Sequence"
MSG_ID = "Nats-Msg-Id"


def fsync_rate(folder: Path, seconds: float) -> float:
    """150-byte appends + ``os.fsync`` per second on ``folder``'s disk (one file)."""
    path = folder / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            os.write(fd, b"x" * 150)
            os.fsync(fd)
            n += 1
        return n / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        path.unlink()


class _Game:
    """One game of a loop: its id, subject, serialised event, last stream seq and count."""

    def __init__(self, prefix: str) -> None:
        from services.session.adapters.event_store import subject

        self.id = f"{prefix}-{uuid.uuid4().hex[:12]}"
        self.subject = subject(self.id)
        self.draft = sample_event(self.id)
        self.data = self.draft.SerializeToString()
        self.last = 0  # stream seq of the last ack (raw loops)
        self.seq = 0  # per-game seq (EventStore.append)
        self.k = 0


class _Meter:
    """CPU seconds of the ``nats-server`` child and of this process over a window."""

    def __init__(self, nats_pid: int) -> None:
        self.pids = (nats_pid, os.getpid())
        self.start_cpu = (0.0, 0.0)
        self.used = (0.0, 0.0)

    def start(self) -> None:
        self.start_cpu = tuple(cpu_seconds(p) for p in self.pids)

    def stop(self) -> None:
        self.used = tuple(cpu_seconds(p) - c for p, c in zip(self.pids, self.start_cpu, strict=True))


async def _per_game(
    n: int, step: Callable[[_Game], Awaitable[None]], prefix: str, seconds: float, meter: _Meter
) -> int:
    """``n`` games, each running ``step`` back to back for ``seconds``; appends done."""
    games = [_Game(prefix) for _ in range(n)]
    for g in games:  # the first append of each game outside the window (creates the subject)
        await step(g)
    done = 0
    meter.start()
    t_end = time.perf_counter() + seconds

    async def one(g: _Game) -> None:
        nonlocal done
        while time.perf_counter() < t_end:
            await step(g)
            done += 1

    await asyncio.gather(*(one(g) for g in games))
    meter.stop()
    return done


async def _bench(seconds: float, repeats: int) -> dict[str, Any]:
    from services.session.adapters.event_store import STREAM, msg_id

    async with event_store_on_nats() as (svc, nc, js, store):
        nats_pid = svc.child("nats").pid
        config = (await js.stream_info(STREAM)).config
        if not config.allow_atomic:  # the raw batch loop needs it (the store may not)
            config.allow_atomic = True
            await js.update_stream(config)
        disk = [fsync_rate(svc.tmp, 0.5)]

        async def raw_fenced(g: _Game) -> None:
            g.k += 1
            headers = {FENCE: str(g.last), MSG_ID: msg_id(g.id, f"c{g.k}", 0)}
            g.last = (await js.publish(g.subject, g.data, headers=headers)).seq

        async def raw_unfenced(g: _Game) -> None:
            g.k += 1
            await js.publish(g.subject, g.data, headers={MSG_ID: msg_id(g.id, f"c{g.k}", 0)})

        async def platform(g: _Game) -> None:
            g.k += 1
            stored = await store.append(g.id, [g.draft], g.seq, command_id=f"c{g.k}")
            g.seq = stored[-1].seq

        async def raw_batch(n: int, seconds: float, meter: _Meter) -> int:
            games = [_Game("batch") for _ in range(n)]
            done = 0
            t_end = 0.0
            first = True
            while first or time.perf_counter() < t_end:
                batch_id = uuid.uuid4().hex
                for i, g in enumerate(games, 1):
                    g.k += 1
                    headers = {
                        "Nats-Batch-Id": batch_id,
                        "Nats-Batch-Sequence": str(i),
                        FENCE: str(g.last),
                        MSG_ID: msg_id(g.id, f"c{g.k}", 0),
                    }
                    if i < n:
                        await nc.publish(g.subject, g.data, headers=headers)
                        continue
                    headers["Nats-Batch-Commit"] = "1"
                    reply = json.loads((await nc.request(g.subject, g.data, headers=headers, timeout=10)).data)
                    if "error" in reply:
                        raise RuntimeError(f"atomic batch refused: {reply['error']}")
                    for j, gg in enumerate(games):  # the batch's stream seqs are contiguous
                        gg.last = reply["seq"] - n + 1 + j
                if not first:
                    done += n
                first = False
                if not t_end:  # the first batch (it creates the subjects) is not timed
                    meter.start()
                    t_end = time.perf_counter() + seconds
            meter.stop()
            return done

        loops: dict[str, Callable[[int, float, _Meter], Awaitable[int]]] = {
            "raw fenced": lambda n, s, m: _per_game(n, raw_fenced, "fenced", s, m),
            "raw unfenced": lambda n, s, m: _per_game(n, raw_unfenced, "unfenced", s, m),
            "raw atomic batch": raw_batch,
            "EventStore.append": lambda n, s, m: _per_game(n, platform, "store", s, m),
        }
        # samples[loop][n] = [(appends/s, nats cpu us/append, bench cpu us/append), ...]
        samples: dict[str, dict[int, list[tuple[float, float, float]]]] = {
            name: {n: [] for n in IN_FLIGHT} for name in LOOPS
        }
        meter = _Meter(nats_pid)
        for r in range(repeats):
            order = list(LOOPS) if r % 2 == 0 else list(reversed(LOOPS))
            for n in IN_FLIGHT:
                for name in order:
                    count = await loops[name](n, seconds, meter)
                    per = 1e6 / max(count, 1)  # CPU seconds -> us per append
                    samples[name][n].append(
                        (count / seconds, meter.used[0] * per, meter.used[1] * per)
                    )
            disk.append(fsync_rate(svc.tmp, 0.3))
        info = await js.stream_info(STREAM)
        return {
            "samples": samples,
            "disk_fsync_per_s": disk,
            "stream_messages": info.state.messages,
            "group_commit": store.commit_stats(),
        }


def _span(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _fmt_span(s: dict[str, float], fmt: str = "{:,.0f}") -> str:
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}..{fmt.format(s['max'])})"


def run(quick: bool = False) -> dict[str, Any]:
    """The four loops at 1, 16 and 256 in flight, in turns, ``repeats`` times."""
    seconds, repeats = (0.6, 2) if quick else (1.0, 3)
    r = run_async(_bench(seconds, repeats))
    samples = r["samples"]
    rates = {name: {n: [s[0] for s in samples[name][n]] for n in IN_FLIGHT} for name in LOOPS}
    figures: dict[str, Any] = {}
    for name in LOOPS:
        for n in IN_FLIGHT:
            figures[f"{name}@{n}"] = {
                "appends_per_s": _span(rates[name][n]),
                "nats_cpu_us_per_append": _span([s[1] for s in samples[name][n]]),
                "bench_cpu_us_per_append": _span([s[2] for s in samples[name][n]]),
            }
            f = figures[f"{name}@{n}"]
            print(
                f"  {name:18s} {n:4d} in flight: {_fmt_span(f['appends_per_s'])}/s, CPU/append "
                f"nats {_fmt_span(f['nats_cpu_us_per_append'])} us, "
                f"bench {_fmt_span(f['bench_cpu_us_per_append'])} us"
            )
    disk = _span(r["disk_fsync_per_s"])
    print(f"  disk write+fsync loop: {_fmt_span(disk)}/s")

    def ratios(num: list[float], den: list[float]) -> dict[str, float]:
        # per repeat (the two figures of a ratio come from the same round of turns)
        return _span([a / b for a, b in zip(num, den, strict=True) if b])

    rows = []
    for name in LOOPS:
        for n in IN_FLIGHT:
            f = figures[f"{name}@{n}"]
            rows.append(
                row(
                    f"{name}, {n} in flight (median, range)",
                    "appends/s",
                    f["appends_per_s"]["median"],
                    "- (anchor)" if name.startswith("raw") else "- (info)",
                    None,
                    range=[f["appends_per_s"]["min"], f["appends_per_s"]["max"]],
                    nats_cpu_us=f["nats_cpu_us_per_append"]["median"],
                    bench_cpu_us=f["bench_cpu_us_per_append"]["median"],
                )
            )
    rows.append(row("disk write+fsync loop (one fsync per append ceiling)", "fsync/s", disk["median"], "- (info)", None, range=[disk["min"], disk["max"]]))
    scale = {name: ratios(rates[name][256], rates[name][1]) for name in LOOPS}
    for name in LOOPS[:3]:
        rows.append(row(f"{name}: 256 in flight / 1 in flight", "x", scale[name]["median"], "- (info)", None, range=[scale[name]["min"], scale[name]["max"]]))
    # the best per-message publish loop of each repeat (the anchor of the target), and the
    # raw atomic-batch loop (the ceiling of one fsync per batch, info)
    best = [max(rates[name][256][i] for name in LOOPS[:2]) for i in range(repeats)]
    vs_best = ratios(rates["EventStore.append"][256], best)
    vs_batch = ratios(rates["EventStore.append"][256], rates["raw atomic batch"][256])
    rows.append(
        row(
            "EventStore.append: 256 in flight / 1 in flight",
            "x",
            scale["EventStore.append"]["median"],
            ">= 10x",
            scale["EventStore.append"]["median"] >= 10.0,
            range=[scale["EventStore.append"]["min"], scale["EventStore.append"]["max"]],
        )
    )
    rows.append(
        row(
            "EventStore.append / best raw publish loop (fenced or not), 256 in flight",
            "x",
            vs_best["median"],
            ">= 0.8x",
            vs_best["median"] >= 0.8,
            range=[vs_best["min"], vs_best["max"]],
        )
    )
    rows.append(
        row(
            "  EventStore.append / raw atomic batch loop, 256 in flight",
            "x",
            vs_batch["median"],
            "- (info: the batch ceiling)",
            None,
            range=[vs_batch["min"], vs_batch["max"]],
        )
    )
    stats = r["group_commit"]
    if stats.get("batches"):
        rows.append(
            row(
                "  EventStore.append: appends per atomic batch (whole run)",
                "appends",
                stats["batched_appends"] / stats["batches"],
                "- (info)",
                None,
                **stats,
            )
        )
    for n in IN_FLIGHT:
        fenced = ratios(rates["EventStore.append"][n], rates["raw fenced"][n])
        rows.append(row(f"  EventStore.append / raw fenced, {n} in flight", "x", fenced["median"], "- (info)", None, range=[fenced["min"], fenced["max"]]))
    return {
        "rows": rows,
        "quick": quick,
        "seconds": seconds,
        "repeats": repeats,
        "figures": figures,
        "disk_fsync_per_s": r["disk_fsync_per_s"],
        "stream_messages": r["stream_messages"],
        "group_commit": r["group_commit"],
    }
