"""Retry times per key after failures in a row: one backoff for the services' background
retries (the session's lease tries, services/session/adapters/leases.py, and its game
loads after taking a lease, services/session/entrypoints/keeper.py; docs/faults.md).

The pause after the n-th failure in a row of a key is ``first_s * 2 ** (n - 1)``, at most
``max_s`` (``first_s == max_s``: a constant pause). A success forgets the key; so does
:meth:`Backoff.keep_only` for keys no longer wanted, so the table never outgrows the keys
still being tried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Container


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class Backoff:
    """Failures in a row per key, and when each key may be tried again.

    Args:
        first_s: pause after a first failure (seconds, >= 0).
        max_s: longest pause (seconds, >= ``first_s``).
        clock: monotonic seconds; default the running event loop's time.
    """

    def __init__(self, first_s: float, max_s: float, clock: Callable[[], float] = _loop_time) -> None:
        self.first_s = first_s
        self.max_s = max(max_s, first_s)
        self.clock = clock
        self._entries: dict[str, tuple[int, float]] = {}  # key -> (failures in a row, due)

    def failed(self, key: str) -> float:
        """Count a failure of ``key``; returns the pause before its next try (seconds)."""
        failures = self.failures(key) + 1
        pause = min(self.first_s * 2 ** (failures - 1), self.max_s)
        self._entries[key] = (failures, self.clock() + pause)
        return pause

    def failures(self, key: str) -> int:
        """Failures of ``key`` in a row (0: none, or forgotten)."""
        entry = self._entries.get(key)
        return entry[0] if entry else 0

    def waiting(self, key: str) -> bool:
        """True while ``key``'s pause runs (do not try it yet)."""
        entry = self._entries.get(key)
        return entry is not None and entry[1] > self.clock()

    def forget(self, key: str) -> None:
        """``key`` succeeded, or needs no more tries: its failures are forgotten."""
        self._entries.pop(key, None)

    def keep_only(self, keys: Container[str]) -> list[str]:
        """Forget every key not in ``keys`` (no longer wanted); returns those forgotten."""
        gone = [k for k in self._entries if k not in keys]
        for key in gone:
            del self._entries[key]
        return gone

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
