"""Background tasks of the services: one way to stop them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger("cellwar.tasks")


async def cancel(task: asyncio.Task | None) -> None:
    """Cancel ``task`` (None: nothing) and wait until it has ended; its cancellation or
    any error it ended with is not raised here (a loop being stopped has nothing more to
    say)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def every(period_s: float, step: Callable[[], Awaitable[object]], failed_event: str) -> None:
    """Await ``step()`` every ``period_s`` seconds until cancelled; a step that fails is
    logged as ``failed_event`` and the loop goes on."""
    while True:
        await asyncio.sleep(period_s)
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a periodic task must go on
            log.exception(failed_event)
