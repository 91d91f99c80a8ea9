"""Background tasks of the services: one way to stop them."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel(task: asyncio.Task | None) -> None:
    """Cancel ``task`` (None: nothing) and wait until it has ended; its cancellation or
    any error it ended with is not raised here (a loop being stopped has nothing more to
    say)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
