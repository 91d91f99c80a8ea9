"""The KV buckets of the session (docs/architecture/index.md): created at start, shared by
every instance.

- ``GAME_SNAPSHOTS`` states (services/session/snapshots.py)
- ``GAME_DIRECTORY`` the lobby projection (services/session/directory.py)
- ``GAME_LEASES`` who ticks a game and runs its disconnect clocks (services/session/leases.py)
- ``GAME_PRESENCE`` open Watch streams and disconnect clocks (services/session/presence.py)
- ``PROFILES`` campaign progress (services/session/profiles.py)
"""

from __future__ import annotations

import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

SNAPSHOTS = "GAME_SNAPSHOTS"
DIRECTORY = "GAME_DIRECTORY"
LEASES = "GAME_LEASES"
PRESENCE = "GAME_PRESENCE"
PROFILES = "PROFILES"

#: Seconds the server keeps the marker it writes when a key expires (so watchers see it).
MARKER_TTL_S = 60.0


async def ensure_bucket(
    js: JetStreamContext,
    bucket: str,
    *,
    replicas: int = 1,
    ttl_s: float | None = None,
    expiry_markers: bool = False,
) -> KeyValue:
    """Open ``bucket``, creating it (file storage, history 1, ``ttl_s`` seconds, direct
    gets) if absent. ``expiry_markers``: the server writes a delete marker when a key
    expires (by the bucket TTL or a per-message TTL), so watchers learn of it at once
    (NATS >= 2.11; created without markers on an older server)."""
    try:
        return await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    config = api.KeyValueConfig(
        bucket=bucket,
        history=1,
        ttl=ttl_s,
        storage=api.StorageType.FILE,
        replicas=replicas,
        direct=True,
        limit_marker_ttl=MARKER_TTL_S if expiry_markers else None,
    )
    try:
        return await js.create_key_value(config)
    except nats.js.errors.KeyValueLimitMarkerTTLNotSupportedError:
        config.limit_marker_ttl = None
        return await js.create_key_value(config)
    except nats.js.errors.BadRequestError:  # another instance created it meanwhile
        return await js.key_value(bucket)


def safe_key(part: str) -> str:
    """``part`` with every character a KV key may not hold replaced by ``_`` (keys:
    ``[-/_=.a-zA-Z0-9]``; ``.`` separates the parts of the session's keys, so it goes too)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_=") else "_" for c in part)

