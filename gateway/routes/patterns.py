"""The Life stamp library (docs/playing.md "Life"): ``GET /patterns``.

The catalogue comes from the engine through the session (``Session.Patterns``, cached
there) and is answered as the JSON bytes it arrives as.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, Field

from cellwar.v1 import engine_pb2
from gateway.deps import RPC_TIMEOUT_S, SessionDep
from gateway.responses import errors
from gateway.wire import raw_json_response

router = APIRouter(tags=["library"])


class PatternOut(BaseModel):
    """One stamp pattern (sizes in cells)."""

    id: str = Field(description="snake_case id to send as a stamp's `pattern`, e.g. glider")
    name: str = Field(description="Display name, e.g. Glider")
    category: str = Field(description="still_lifes, oscillators, spaceships, methuselahs or guns")
    width: int = Field(description="Bounding box width in cells (rotation 0)")
    height: int = Field(description="Bounding box height in cells (rotation 0)")
    cells: list[tuple[int, int]] = Field(description="Live cells [x, y] (column, row) from the top-left")
    source: str | None = Field(default=None, description="Where the cells were published")


class PatternsOut(BaseModel):
    """Answer of GET /patterns."""

    categories: dict[str, list[str]] = Field(
        description="Pattern ids by category, in the order still_lifes, oscillators, "
        "spaceships, methuselahs, guns"
    )
    patterns: list[PatternOut]


@router.get(
    "/patterns",
    response_model=PatternsOut,
    responses=errors(503),
    summary="The stamp library",
    description="The 29 classic Life patterns a `stamp` action may name, by category. "
    "A stamp puts the pattern's top-left at (x, y) after `rotation` quarter turns clockwise.",
)
async def patterns(session: SessionDep) -> Response:
    """GET /patterns → ``{"categories": {category: [ids]}, "patterns": [{"id", "name",
    "category", "width", "height", "cells", "source"}]}``."""
    reply = await session.Patterns(engine_pb2.PatternsRequest(), timeout=RPC_TIMEOUT_S)
    return raw_json_response(reply.catalogue)
