"""FastAPI dependencies for campaign profile tokens (see :class:`gateway.tokens.ProfileSigner`).

``CurrentProfile`` (the profile id of ``Authorization: Bearer <profile token>``; 401
otherwise), ``OptionalProfile`` (the same, or ``None`` without a token) and
``ProfileHeader`` (the profile id of an ``X-Profile-Token`` header, or ``None``; used by
``POST /game/create`` where ``Authorization`` is not otherwise taken).
"""

from __future__ import annotations

from typing import Annotated

import structlog
from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gateway.tokens import ProfileSigner

_profile_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ProfileToken",
    description="The `profile_token` returned by POST /profiles.",
)


async def get_profile_signer(request: Request) -> ProfileSigner:
    """The profile token signer (same secret as player tokens, another salt)."""
    return request.app.state.profile_signer


ProfileSignerDep = Annotated[ProfileSigner, Depends(get_profile_signer)]


def _remember(request: Request, profile_id: str) -> str:
    request.state.profile_id = profile_id
    structlog.contextvars.bind_contextvars(profile_id=profile_id)
    return profile_id


async def current_profile(
    request: Request,
    signer: ProfileSignerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_profile_bearer)],
) -> str:
    """The profile id of the bearer token.

    Raises:
        ApiError: 401 ``UNAUTHORIZED`` (missing, garbled or forged token).
    """
    return _remember(request, signer.verify(credentials.credentials if credentials else None))


async def optional_profile(
    request: Request,
    signer: ProfileSignerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_profile_bearer)],
) -> str | None:
    """Like :func:`current_profile`, but ``None`` when no token is sent.

    Raises:
        ApiError: 401 for a token that is sent but not valid.
    """
    if credentials is None:
        return None
    return _remember(request, signer.verify(credentials.credentials))


async def profile_header(
    request: Request,
    signer: ProfileSignerDep,
    x_profile_token: Annotated[
        str | None,
        Header(
            alias="X-Profile-Token",
            max_length=500,
            description="Campaign: the `profile_token` of POST /profiles; the level must be "
            "unlocked for that profile (else 409 LEVEL_LOCKED) and a win counts for it. "
            "Without it a campaign level can still be played; nothing is recorded. "
            "Joining a rated game: the profile whose rating the seat counts for. "
            "Matchmaking: the rated identity.",
        ),
    ] = None,
) -> str | None:
    """The profile id of the ``X-Profile-Token`` header, or ``None`` when absent.

    Raises:
        ApiError: 401 ``UNAUTHORIZED`` for a header that is sent but not valid.
    """
    if x_profile_token is None:
        return None
    return _remember(request, signer.verify(x_profile_token))


CurrentProfile = Annotated[str, Depends(current_profile)]
OptionalProfile = Annotated[str | None, Depends(optional_profile)]
ProfileHeader = Annotated[str | None, Depends(profile_header)]
