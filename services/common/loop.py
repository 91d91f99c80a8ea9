"""The event loop a service process runs on: uvloop when installed (it comes with
``uvicorn[standard]``, which the gateway already runs on), else asyncio's own.

uvloop runs the same coroutines with less CPU per callback and per socket read, which
is most of what a session or engine instance does between the rules (grpc.aio and
nats-py both support it). ``CELLWAR_EVENT_LOOP=asyncio`` chooses asyncio's loop (to
compare, or where uvloop misbehaves).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: The values of ``CELLWAR_EVENT_LOOP``.
LOOPS = ("auto", "uvloop", "asyncio")


def loop_name(choice: str = "auto") -> str:
    """The loop ``choice`` gives here: ``"uvloop"`` or ``"asyncio"``.

    Raises:
        ValueError: an unknown choice, or ``"uvloop"`` when it is not installed.
    """
    if choice not in LOOPS:
        raise ValueError(f"CELLWAR_EVENT_LOOP must be one of {list(LOOPS)}, got {choice!r}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise ValueError("CELLWAR_EVENT_LOOP=uvloop but uvloop is not installed") from None
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """Run ``main`` to its end on the loop ``choice`` gives (:func:`loop_name`)."""
    if loop_name(choice) == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
