"""Values computed once per state object (states are immutable values): the state's
encoding and hash, its summary, the parts of its views that do not depend on the viewer.

The values live in a dict set on the object itself (``_engine_cache``), so they go when
the state goes; a state type without a ``__dict__`` computes them every time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["once"]

T = TypeVar("T")


def once(state: Any, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` the first time ``key`` is asked of ``state``, the same value after."""
    cache = state.__dict__.get("_engine_cache") if hasattr(state, "__dict__") else None
    if cache is None:
        cache = {}
        try:
            object.__setattr__(state, "_engine_cache", cache)
        except (AttributeError, TypeError):  # a state type without a __dict__: no cache
            return compute()
    if key not in cache:
        cache[key] = compute()
    return cache[key]
