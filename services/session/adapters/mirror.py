"""A live local copy of a KV bucket, for the session: :class:`KvMirror` of
:mod:`services.common.nats.kv` (one watch per mirror, per instance, for the life of the
instance), which the session and the matchmaker share.

Every instance mirrors ``GAME_DIRECTORY`` (the lobby, leases to take, games to expire),
``GAME_LEASES`` (who holds what) and ``GAME_PRESENCE`` (who is connected), so each knows
what the others wrote within milliseconds without asking NATS per request.
"""

from __future__ import annotations

from services.common.nats.kv import KvMirror, OnChange

__all__ = ["KvMirror", "OnChange"]
