"""Campaign profiles in KV ``PROFILES`` (docs/architecture/session.md): a player's progress, kept
server-side so it survives restarts of the session and of NATS.

Key: the profile id (32 hex characters). Value: JSON
``{"name", "unlocked": n, "best": {"<level>": {"result", "generation", "budget_left"}},
"created_at"}`` where ``unlocked`` is the highest level the player may start (1 for a new
profile, at most the number of levels), ``best`` the best finish of each level played
(``"win"`` beats ``"loss"``, then fewer generations, then more budget left), and
``created_at`` an ISO 8601 UTC time.

Progress is written when a campaign game created with a profile id finishes (from a
command or a tick). Every write is revision-checked (``kv.update(last=revision)``) and
retried on conflict, so two games finishing at once both count; merging is idempotent
(``max`` of unlocked, better of best), so recording the same finish twice (e.g. after a
restart rebuilt the game) changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

from cellwar.v1 import engine_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.session.adapters.directory import now_iso
from services.session.adapters.engine_client import EngineClient

log = structlog.get_logger("cellwar.session.profiles")

#: Revision-checked writes tried before a progress update gives up with ``CONFLICT``.
MAX_ATTEMPTS = 20
#: Longest profile name kept (characters).
MAX_NAME_CHARS = 40


def new_profile(name: str) -> dict[str, Any]:
    """A fresh profile: level 1 unlocked, nothing played."""
    return {"name": name[:MAX_NAME_CHARS], "unlocked": 1, "best": {}, "created_at": now_iso()}


def _rank(record: dict[str, Any]) -> tuple[int, int, int]:
    """Sort key of a finish: higher is better (win, then fewer generations, then more
    budget left)."""
    return (
        1 if record.get("result") == "win" else 0,
        -int(record.get("generation", 0)),
        int(record.get("budget_left", 0)),
    )


def merge_finish(
    profile: dict[str, Any],
    level: int,
    result: str,
    generation: int,
    budget_left: int,
    level_count: int,
) -> dict[str, Any]:
    """The profile after a finish of ``level`` (a new dict; ``profile`` is unchanged).

    A ``"win"`` raises ``unlocked`` to ``level + 1`` (never above ``level_count``, never
    lower than before); ``best[level]`` becomes the better of the old and the new finish.
    Nothing else changes. Applying the same finish twice gives the same profile.

    Args:
        level: 1..level_count. result: ``"win"`` or ``"loss"``. generation: generations
            run when the level ended. budget_left: cells of budget not spent.
    """
    out = dict(profile)
    unlocked = int(out.get("unlocked", 1))
    if result == "win":
        unlocked = max(unlocked, min(level + 1, level_count))
    out["unlocked"] = unlocked
    best = dict(out.get("best") or {})
    new = {"result": result, "generation": int(generation), "budget_left": int(budget_left)}
    old = best.get(str(level))
    if old is None or _rank(new) > _rank(old):
        best[str(level)] = new
    out["best"] = best
    return out


def public(profile: dict[str, Any]) -> dict[str, Any]:
    """What the API shows of a stored profile: ``name``, ``unlocked``, ``best``,
    ``created_at``."""
    return {
        "name": str(profile.get("name", "")),
        "unlocked": int(profile.get("unlocked", 1)),
        "best": dict(profile.get("best") or {}),
        "created_at": str(profile.get("created_at", "")),
    }


def _unavailable(exc: BaseException) -> ServiceError:
    return ServiceError(ErrorCode.UNAVAILABLE, f"profile store: {exc}")


class Profiles:
    """Profiles in one KV bucket.

    Args:
        kv: the ``PROFILES`` bucket.
    """

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    async def create(self, name: str = "", command_id: str = "") -> tuple[str, dict[str, Any]]:
        """Create a profile; returns ``(profile_id, profile)``. With ``command_id`` (the
        request's Idempotency-Key) the id is derived from it, so a retried create returns
        the same profile; the stored profile keeps a digest of the name it was asked with.

        Raises:
            ServiceError: ``IDEMPOTENCY_KEY_REUSED`` (the key made a profile of another
                name), ``UNAVAILABLE`` (NATS did not answer).
        """
        profile = new_profile(name.strip())
        if not command_id:
            profile_id = uuid.uuid4().hex
        else:
            profile_id = hashlib.sha256(b"cellwar-profile:" + command_id.encode()).hexdigest()[:32]
            profile["request_digest"] = hashlib.sha256(name.strip().encode()).hexdigest()[:32]
        try:
            await self.kv.create(profile_id, json.dumps(profile, sort_keys=True).encode())
        except nats.js.errors.KeyWrongLastSequenceError:
            existing, _ = await self._read(profile_id)
            if existing.get("request_digest") != profile.get("request_digest"):
                raise ServiceError(
                    ErrorCode.IDEMPOTENCY_KEY_REUSED,
                    "this Idempotency-Key already made a profile of another name",
                ) from None
            return profile_id, existing
        except (TimeoutError, nats.errors.Error) as exc:
            raise _unavailable(exc) from exc
        log.info("profile_created", profile_id=profile_id)
        return profile_id, profile

    async def _read(self, profile_id: str) -> tuple[dict[str, Any], int]:
        """``(profile, revision)``. Raises ServiceError PROFILE_NOT_FOUND / UNAVAILABLE."""
        if not profile_id or not all(c.isalnum() or c in "-_" for c in profile_id):
            raise ServiceError(ErrorCode.PROFILE_NOT_FOUND, f"no profile {profile_id!r}")
        try:
            entry = await self.kv.get(profile_id)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError) as exc:
            raise ServiceError(ErrorCode.PROFILE_NOT_FOUND, f"no profile {profile_id!r}") from exc
        except (TimeoutError, nats.errors.Error) as exc:
            raise _unavailable(exc) from exc
        try:
            profile = json.loads(entry.value or b"")
        except ValueError as exc:
            raise ServiceError(ErrorCode.INTERNAL, f"profile {profile_id!r} is not valid JSON") from exc
        if not isinstance(profile, dict):
            raise ServiceError(ErrorCode.INTERNAL, f"profile {profile_id!r} is not a JSON object")
        return profile, int(entry.revision or 0)

    async def get(self, profile_id: str) -> dict[str, Any]:
        """The stored profile.

        Raises:
            ServiceError: ``PROFILE_NOT_FOUND``, ``UNAVAILABLE``.
        """
        profile, _ = await self._read(profile_id)
        return profile

    async def check_level(self, profile_id: str, level: Any) -> None:
        """Refuse a level the profile has not unlocked yet.

        A ``level`` that is not an integer is let through (the engine refuses it as
        ``INVALID_CONFIG``).

        Raises:
            ServiceError: ``LEVEL_LOCKED`` (level above ``unlocked``),
                ``PROFILE_NOT_FOUND``, ``UNAVAILABLE``.
        """
        profile = await self.get(profile_id)
        unlocked = int(profile.get("unlocked", 1))
        if isinstance(level, int) and not isinstance(level, bool) and level > unlocked:
            raise ServiceError(
                ErrorCode.LEVEL_LOCKED, f"level {level} is locked: this profile has reached level {unlocked}"
            )

    async def record(
        self,
        profile_id: str,
        level: int,
        result: str,
        generation: int,
        budget_left: int,
        level_count: int,
    ) -> dict[str, Any]:
        """Merge a finish into the profile (:func:`merge_finish`) with a revision-checked
        write, retried on conflict; no write when nothing changes. Returns the profile.

        Raises:
            ServiceError: ``PROFILE_NOT_FOUND``, ``UNAVAILABLE``, ``CONFLICT`` (lost the
                write race :data:`MAX_ATTEMPTS` times).
        """
        for _ in range(MAX_ATTEMPTS):
            profile, revision = await self._read(profile_id)
            merged = merge_finish(profile, level, result, generation, budget_left, level_count)
            if merged == profile:
                return profile
            try:
                await self.kv.update(
                    profile_id, json.dumps(merged, sort_keys=True).encode(), last=revision
                )
            except nats.js.errors.KeyWrongLastSequenceError:
                continue
            except (TimeoutError, nats.errors.Error) as exc:
                raise _unavailable(exc) from exc
            log.info(
                "profile_progress",
                profile_id=profile_id,
                level=level,
                result=result,
                unlocked=merged["unlocked"],
            )
            return merged
        raise ServiceError(ErrorCode.CONFLICT, f"profile {profile_id} changed too often; retry")

    async def record_finished(
        self, game_id: str, profile_id: str, engine: EngineClient, state: engine_pb2.GameState
    ) -> None:
        """Record a finished campaign game's outcome in its profile: level, result,
        generation and the player's budget left are read from player 1's view (fields
        ``level``, ``levels_total``, ``result``, ``generation``, ``players[0].budget_left``).
        Never raises: a failure is logged (the game itself is recorded in the event log
        either way)."""
        if not state.finished:
            return
        try:
            view = json.loads((await engine.views(state, [1]))[0])
            players = view.get("players") or [{}]
            result = view.get("result")
            if result not in ("win", "loss"):
                return
            await self.record(
                profile_id,
                level=int(view["level"]),
                result=result,
                generation=int(view.get("generation", 0)),
                budget_left=int(players[0].get("budget_left", 0)),
                level_count=int(view.get("levels_total") or view["level"]),
            )
        except ServiceError as exc:
            log.error(
                "progress_not_recorded",
                game_id=game_id,
                profile_id=profile_id,
                code=exc.code,
                error=exc.message,
            )
        except (KeyError, ValueError, TypeError, IndexError) as exc:
            log.error(
                "progress_not_recorded", game_id=game_id, profile_id=profile_id, error=repr(exc)
            )
