"""``cellwar games --nats URL [--abandoned [--idle-min N] [--clean]] [--json]``: the
unfinished games of the lobby directory, read straight from NATS, and the operator's
clean-up of the abandoned ones (docs/abandoned-games.md).

Reads the KV bucket ``GAME_DIRECTORY`` (services/session/adapters/directory.py: one entry per
game, finished ones say ``"phase": "finished"``) and, per unfinished game, the last
message of ``games.<game_id>.events`` in the stream ``GAME_EVENTS`` (the recorded time
of its last event, exact, where the entry keeps it to the minute only).

``--clean`` deletes the directory entries of the abandoned games listed: the lobby no
longer shows them. Nothing else changes: the event log stays whole, the players' tokens
still work, and the game's next event writes its entry again (the session's directory
projection writes an entry that differs from the mirror's). Kept, with the reason:
a game with ``lease`` (a session must hold it: it ticks or runs a turn timer, and the
keeper finds such games by their entry) and a game played for a campaign profile (the
entry holds the profile its progress goes to). An entry whose game got an event after
the listing is left alone (checked again just before each delete).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import nats
import nats.errors
import nats.js.errors

from cellwar.v1 import events_pb2
from client.cli.nats_source import STREAM, NatsReadError
from services.common.nats.kv import bucket_keys
from services.session.adapters.directory import FINISHED, idle_s
from services.session.adapters.kv import DIRECTORY

#: ``--idle-min`` when not given: ``CELLWAR_ABANDONED_AFTER_S``'s default, in minutes.
DEFAULT_IDLE_MIN = 15.0
#: Seconds to wait for one NATS answer.
NATS_TIMEOUT_S = 10.0


@dataclass
class GameRow:
    """One unfinished game of the directory.

    Attributes:
        game_id, kind, phase: from the entry.
        players: ``"joined/max"``.
        last_event_at: ISO 8601 UTC time of its last event ("" = no event readable).
        idle_min: minutes since then (at the listing).
        abandoned: started (not waiting for players) and idle at least ``--idle-min``.
        kept: why ``--clean`` leaves its entry ("" = it may be removed).
        removed: ``--clean`` removed its entry.
    """

    game_id: str
    kind: str
    phase: str
    players: str
    last_event_at: str
    idle_min: float
    abandoned: bool
    kept: str = ""
    removed: bool = False


def _event_time(data: bytes) -> float | None:
    try:
        event = events_pb2.Event.FromString(data)
    except Exception:  # noqa: BLE001 - a message that is no Event: fall back to the entry
        return None
    return event.time.seconds + event.time.nanos / 1e9 if event.time.seconds else None


def _kept(entry: dict[str, Any]) -> str:
    if entry.get("lease"):
        return "lease: a session ticks it or runs its turn timer"
    if entry.get("profile_id"):
        return "campaign: the entry holds its profile"
    return ""


async def _last_event(js: Any, game_id: str) -> float | None:
    try:
        msg = await js.get_last_msg(STREAM, f"games.{game_id}.events")
    except nats.js.errors.NotFoundError:
        return None
    return _event_time(msg.data)


async def list_games(
    url: str, *, idle_min: float, abandoned_only: bool, clean: bool, now: float | None = None
) -> list[GameRow]:
    """The unfinished games of ``GAME_DIRECTORY`` at ``url``, oldest event first.

    Args:
        url: NATS URL.
        idle_min: a started game with no event for this many minutes is abandoned.
        abandoned_only: only the abandoned games.
        clean: delete the directory entries of the abandoned games (see the module).
        now: the time to measure idleness from (unix seconds; default the clock).

    Raises:
        NatsReadError: no server at ``url``, no directory bucket, or a NATS timeout.
    """
    async def on_error(exc: Exception) -> None:  # nats-py would print each error
        pass

    try:
        nc = await nats.connect(
            url, connect_timeout=5, max_reconnect_attempts=1, allow_reconnect=False, error_cb=on_error
        )
    except (OSError, TimeoutError, nats.errors.Error) as exc:
        said = str(exc) or type(exc).__name__
        raise NatsReadError(f"cannot reach NATS at {url}: {said}") from None
    try:
        js = nc.jetstream(timeout=NATS_TIMEOUT_S)
        try:
            kv = await js.key_value(DIRECTORY)
            keys = await bucket_keys(kv)  # a deleted one is skipped as it is read below
        except nats.js.errors.BucketNotFoundError as exc:
            raise NatsReadError(f"no KV bucket {DIRECTORY} at {url} (no session ever ran there)") from exc
        rows: list[GameRow] = []
        for key in keys:
            try:
                item = await kv.get(key)
                entry = json.loads(item.value or b"null")
            except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError, ValueError):
                continue
            if not isinstance(entry, dict) or entry.get("phase") == FINISHED:
                continue
            at = time.time() if now is None else now
            last = await _last_event(js, key)
            idle = (at - last) if last is not None else idle_s(entry, at)
            if idle is None:
                continue
            # started games only: a game still waiting for players (a fork or an import
            # waits without expiring) is open, not abandoned
            started = entry.get("phase") != "waiting"
            abandoned = started and not entry.get("expirable") and idle >= idle_min * 60
            if abandoned_only and not abandoned:
                continue
            row = GameRow(
                game_id=key,
                kind=str(entry.get("kind", "")),
                phase=str(entry.get("phase", "")),
                players=f"{entry.get('players_joined', 0)}/{entry.get('max_players', 0)}",
                last_event_at=(
                    datetime.fromtimestamp(last, UTC).isoformat(timespec="seconds")
                    if last is not None
                    else str(entry.get("last_event_at") or entry.get("created_at") or "")
                ),
                idle_min=round(max(idle, 0.0) / 60, 1),
                abandoned=abandoned,
                kept=_kept(entry) if abandoned else "",
            )
            if clean and abandoned and not row.kept:
                row.removed = await _remove(js, kv, key, item.revision, last)
                if not row.removed:
                    row.kept = "an event came meanwhile"
            rows.append(row)
        rows.sort(key=lambda r: (-r.idle_min, r.game_id))
        return rows
    except (TimeoutError, nats.errors.Error) as exc:
        raise NatsReadError(f"NATS at {url} did not answer: {exc}") from exc
    finally:
        await nc.close()


async def _remove(js: Any, kv: Any, key: str, revision: int, last: float | None) -> bool:
    """Delete the entry when neither it nor the game's log moved since it was read."""
    if await _last_event(js, key) != last:
        return False
    try:
        await kv.delete(key, last=revision)
    except nats.js.errors.APIError:  # wrong last sequence: the entry changed meanwhile
        return False
    return True


def table(rows: list[GameRow], *, clean: bool) -> list[str]:
    """Text lines: a header and one line per game."""
    head = f"{'GAME':<26} {'KIND':<9} {'PHASE':<12} {'PLAYERS':<8} {'LAST EVENT (UTC)':<26} {'IDLE MIN':>8}  STATE"
    lines = [head]
    for r in rows:
        state = "removed" if r.removed else (f"kept ({r.kept})" if r.kept else ("abandoned" if r.abandoned else ""))
        if clean and r.abandoned and not r.removed and not r.kept:
            state = "abandoned"
        lines.append(
            f"{r.game_id:<26} {r.kind:<9} {r.phase:<12} {r.players:<8} {r.last_event_at:<26} "
            f"{r.idle_min:>8.1f}  {state}".rstrip()
        )
    return lines


def as_json(rows: list[GameRow]) -> str:
    """``{"games": [GameRow as an object, ...]}``."""
    return json.dumps({"games": [asdict(r) for r in rows]}, indent=2)
