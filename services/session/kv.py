"""The KV buckets of the session (DESIGN §6): created at start, shared by every instance."""

from __future__ import annotations

import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

SNAPSHOTS = "GAME_SNAPSHOTS"
DIRECTORY = "GAME_DIRECTORY"
LEASES = "GAME_LEASES"
PROFILES = "PROFILES"


async def ensure_bucket(
    js: JetStreamContext, bucket: str, *, replicas: int = 1, ttl_s: float | None = None
) -> KeyValue:
    """Open ``bucket``, creating it (file storage, history 1, ``ttl_s`` seconds) if absent."""
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
    )
    try:
        return await js.create_key_value(config)
    except nats.js.errors.BadRequestError:  # another instance created it meanwhile
        return await js.key_value(bucket)
