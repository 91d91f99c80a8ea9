"""Campaign (docs/playing.md "Campaign"): the level list and player profiles.

- ``GET /campaign/levels``: the 103 levels (no enemy cells); with ``Authorization:
  Bearer <profile token>`` each level also says whether it is ``unlocked`` and the
  profile's ``best`` finish of it.
- ``POST /profiles``: a new profile (level 1 unlocked) and its token.
- ``GET /profile``: the profile of the bearer token: ``unlocked`` and ``best``.

A campaign game counts for a profile when ``POST /game/create`` carries the header
``X-Profile-Token`` (see gateway/routes/games.py); the session records each finish.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from cellwar.v1 import engine_pb2, session_pb2
from gateway.deps import RPC_TIMEOUT_S, CommandId, SessionDep
from gateway.profile_deps import CurrentProfile, OptionalProfile, ProfileSignerDep
from gateway.responses import errors
from gateway.routes.matchmaking import RatingOut, profile_ratings
from gateway.schemas import DisplayName

router = APIRouter(tags=["campaign"])

class Localised(BaseModel):
    """A text in English and Russian."""

    en: str
    ru: str


class BestOut(BaseModel):
    """A profile's best finish of one level."""

    result: str = Field(description='"win" or "loss"')
    generation: int = Field(description="Generations run when the level ended")
    budget_left: int = Field(description="Cells of the budget not spent")


class LevelOut(BaseModel):
    """One campaign level (sizes and budget in cells)."""

    number: int = Field(description="1..103")
    name: Localised
    hint: Localised
    width: int
    height: int
    zone: list[int] | None = Field(default=None, description="Drawing zone [x0, y0, x1, y1), half-open")
    budget: int = Field(description="Cells the player may place over the whole level")
    hopeless: bool = Field(description="Nearly impossible on purpose (e.g. a glider gun)")
    unlocked: bool | None = Field(default=None, description="With a profile token: may be started")
    best: BestOut | None = Field(default=None, description="With a profile token: best finish so far")


class LevelsOut(BaseModel):
    """Answer of GET /campaign/levels."""

    levels: list[LevelOut]


class CreateProfileBody(BaseModel):
    """Create a campaign profile."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        DisplayName,
        Field(description="Shown on the profile; may be empty; no control or format characters"),
    ] = ""


class ProfileCreated(BaseModel):
    """Answer of POST /profiles: keep the token, it is the profile."""

    profile_id: str
    profile_token: str = Field(
        description="Send as `Authorization: Bearer <token>` to /profile and /campaign/levels, "
        "and as `X-Profile-Token` to POST /game/create"
    )


class ProfileOut(BaseModel):
    """A profile's campaign progress."""

    profile_id: str
    name: str
    unlocked: int = Field(description="Highest level the profile may start (1 for a new profile)")
    best: dict[str, BestOut] = Field(description='Best finish by level number ("1", "2", ...)')
    created_at: str = Field(default="", description="ISO 8601, UTC")
    ratings: list[RatingOut] | None = Field(
        default=None,
        description="Matchmaking ratings, one per queue played rated (null: matchmaker down)",
    )


async def _profile(session: SessionDep, profile_id: str) -> dict[str, Any]:
    reply = await session.GetProfile(
        session_pb2.GetProfileRequest(profile_id=profile_id), timeout=RPC_TIMEOUT_S
    )
    return json.loads(reply.data or b"{}")


@router.get(
    "/campaign/levels",
    response_model=LevelsOut,
    responses=errors(401, 404, 503),
    # The profile token is optional: without it the levels come without progress.
    openapi_extra={"security": [{}]},
    summary="Campaign levels",
    description="Every level without its enemy cells. With a profile token (`Authorization: "
    "Bearer <profile token>`) each level also carries `unlocked` and `best`.",
)
async def levels(session: SessionDep, profile_id: OptionalProfile) -> JSONResponse:
    """GET /campaign/levels → ``{"levels": [{"number", "name", "hint", "width", "height",
    "zone", "budget", "hopeless", "unlocked"?, "best"?}]}`` (``best`` null for a level
    not played yet; both absent without a token)."""
    reply = await session.Levels(engine_pb2.LevelsRequest(), timeout=RPC_TIMEOUT_S)
    items: list[dict[str, Any]] = json.loads(reply.levels or b"[]")
    if profile_id is not None:
        profile = await _profile(session, profile_id)
        unlocked = int(profile.get("unlocked", 1))
        best = profile.get("best") or {}
        for item in items:
            item["unlocked"] = item["number"] <= unlocked
            item["best"] = best.get(str(item["number"]))
    return JSONResponse({"levels": items})


@router.post(
    "/profiles",
    status_code=status.HTTP_201_CREATED,
    response_model=ProfileCreated,
    responses=errors(413, 422, 429, 503),
    summary="Create a campaign profile",
    description="A new profile with level 1 unlocked. Keep `profile_token`: it is the profile.",
)
async def create_profile(
    session: SessionDep,
    signer: ProfileSignerDep,
    cid: CommandId,
    body: Annotated[CreateProfileBody | None, Body()] = None,
) -> ProfileCreated:
    """POST /profiles ``{"name"?}`` → 201 ``{"profile_id", "profile_token"}``; retried with
    the same Idempotency-Key, the same profile (another name: 422
    ``IDEMPOTENCY_KEY_REUSED``)."""
    name = body.name if body is not None else ""
    reply = await session.CreateProfile(
        session_pb2.CreateProfileRequest(name=name, command_id=cid), timeout=RPC_TIMEOUT_S
    )
    return ProfileCreated(profile_id=reply.profile_id, profile_token=signer.issue(reply.profile_id))


@router.get(
    "/profile",
    response_model=ProfileOut,
    responses=errors(401, 404, 503),
    summary="Your campaign progress",
    description="The profile of the bearer token: `unlocked` (highest level you may start) "
    "and `best` (your best finish of each level played).",
)
async def get_profile(request: Request, session: SessionDep, profile_id: CurrentProfile) -> ProfileOut:
    """GET /profile → ``{"profile_id", "name", "unlocked", "best", "created_at",
    "ratings"}``."""
    profile = await _profile(session, profile_id)
    ratings = await profile_ratings(request, profile_id)
    return ProfileOut.model_validate({**profile, "profile_id": profile_id, "ratings": ratings})
