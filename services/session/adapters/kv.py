"""The KV buckets of the session (docs/architecture/index.md): created at start, shared by
every instance.

- ``GAME_SNAPSHOTS`` states (services/session/adapters/snapshots.py)
- ``GAME_DIRECTORY`` the lobby projection (services/session/adapters/directory.py)
- ``GAME_LEASES`` who ticks a game and runs its disconnect clocks (services/session/adapters/leases.py)
- ``GAME_PRESENCE`` open Watch streams and disconnect clocks (services/session/entrypoints/presence.py)
- ``PROFILES`` campaign progress (services/session/adapters/profiles.py)
"""

from __future__ import annotations

from services.common.nats.kv import MARKER_TTL_S, ensure_bucket

SNAPSHOTS = "GAME_SNAPSHOTS"
DIRECTORY = "GAME_DIRECTORY"
LEASES = "GAME_LEASES"
PRESENCE = "GAME_PRESENCE"
PROFILES = "PROFILES"

#: ``ensure_bucket`` (open or create a bucket) and ``MARKER_TTL_S`` are those of
#: :mod:`services.common.nats.kv`, shared with the matchmaker.
__all__ = [
    "DIRECTORY",
    "LEASES",
    "MARKER_TTL_S",
    "PRESENCE",
    "PROFILES",
    "SNAPSHOTS",
    "ensure_bucket",
    "safe_key",
]


def safe_key(part: str) -> str:
    """``part`` with every character a KV key may not hold replaced by ``_`` (keys:
    ``[-/_=.a-zA-Z0-9]``; ``.`` separates the parts of the session's keys, so it goes too)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_=") else "_" for c in part)

