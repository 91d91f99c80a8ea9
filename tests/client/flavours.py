"""Both SDK clients behind one async face, so that each SDK test runs against the blocking
:class:`CellWarClient` and the asynchronous :class:`AsyncCellWarClient` alike.

The blocking client's calls run in a worker thread (``asyncio.to_thread``): the gateway
under test serves in the test's own event loop, which a blocking call in it would stall.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from client.sdk import AsyncCellWarClient, CellWarClient

FLAVOURS = ("sync", "async")


@pytest.fixture(params=FLAVOURS)
def flavour(request: pytest.FixtureRequest) -> str:
    """``"sync"`` (:class:`CellWarClient`) or ``"async"`` (:class:`AsyncCellWarClient`)."""
    return request.param


class Face:
    """One client (or one ``commands`` object of it) with every method awaitable: the
    async one's as they are, the blocking one's in a worker thread."""

    def __init__(self, target: Any, blocking: bool) -> None:
        self.target = target
        self.blocking = blocking

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.target, name)
        if not callable(attr) or not self.blocking:
            return attr

        async def in_thread(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(attr, *args, **kwargs)

        return in_thread

    async def collect(
        self,
        name: str,
        *args: Any,
        limit: int | None = None,
        until: Callable[[dict[str, Any]], bool] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """The items of the iterator method ``name`` (a stream, the JSON Lines log), at
        most ``limit``, up to the first for which ``until`` holds; the iterator is closed
        after."""

        def enough(out: list[dict[str, Any]]) -> bool:
            return (limit is not None and len(out) >= limit) or (until is not None and until(out[-1]))

        out: list[dict[str, Any]] = []
        if self.blocking:

            def take() -> None:
                items = getattr(self.target, name)(*args, **kwargs)
                try:
                    for item in items:
                        out.append(item)
                        if enough(out):
                            return
                finally:
                    items.close()

            await asyncio.to_thread(take)
            return out
        async with contextlib.aclosing(getattr(self.target, name)(*args, **kwargs)) as items:
            async for item in items:
                out.append(item)
                if enough(out):
                    break
        return out

    @contextlib.asynccontextmanager
    async def commands(self, game_id: str, token: str) -> AsyncIterator[Face]:
        """The client's ``commands(game_id, token)``, entered and left (a thread for the
        blocking one)."""
        cmds = self.target.commands(game_id, token)
        if self.blocking:
            await asyncio.to_thread(cmds.__enter__)
            try:
                yield Face(cmds, True)
            finally:
                await asyncio.to_thread(cmds.__exit__, None, None, None)
        else:
            async with cmds:
                yield Face(cmds, False)


@contextlib.asynccontextmanager
async def client(flavour: str, base_url: str, **kwargs: Any) -> AsyncIterator[Face]:
    """A client of ``flavour`` for ``base_url`` (``kwargs``: the constructor's), closed after."""
    if flavour == "sync":
        api = CellWarClient(base_url, **kwargs)
        try:
            yield Face(api, True)
        finally:
            api.close()
    else:
        async with AsyncCellWarClient(base_url, **kwargs) as aapi:
            yield Face(aapi, False)
