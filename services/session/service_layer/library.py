"""Read-only game data the session passes through from the engine service: the Life
stamp library (``Engine.Patterns``) and the campaign level list (``Engine.Levels``).

Both are fixed for one engine version, so each is fetched once and kept; a failed
fetch is not kept (the next call asks again).
"""

from __future__ import annotations

import asyncio

import structlog

from services.session.service_layer.ports import GameData

log = structlog.get_logger("cellwar.session.library")


class Library:
    """Cached ``Engine.Patterns`` and ``Engine.Levels`` answers (JSON bytes).

    Args:
        engine: the engine (its ``patterns`` and ``levels``).
    """

    def __init__(self, engine: GameData) -> None:
        self.engine = engine
        self._patterns: bytes | None = None
        self._levels: bytes | None = None
        self._lock = asyncio.Lock()

    async def patterns(self) -> bytes:
        """``{"categories": {category: [ids]}, "patterns": [...]}`` as JSON bytes.

        Raises:
            ServiceError: ``UNAVAILABLE`` (engine down) or the engine's code.
        """
        if self._patterns is None:
            async with self._lock:
                if self._patterns is None:
                    self._patterns = await self.engine.patterns()
                    log.info("patterns_cached", bytes=len(self._patterns))
        return self._patterns

    async def levels(self) -> bytes:
        """The campaign levels as a JSON list (no enemy cells).

        Raises:
            ServiceError: ``UNAVAILABLE`` (engine down) or the engine's code.
        """
        if self._levels is None:
            async with self._lock:
                if self._levels is None:
                    self._levels = await self.engine.levels()
                    log.info("levels_cached", bytes=len(self._levels))
        return self._levels
