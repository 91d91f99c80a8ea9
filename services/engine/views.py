"""The JSON of the views the engine service renders (``Decide``, ``Views``, ``Run``)."""

from __future__ import annotations

from typing import Any

import orjson


def view_json(view: Any) -> bytes:
    """A view as JSON: compact, key-sorted, UTF-8 (orjson, several times json's speed; a
    view is shown, never hashed: the session merges its own keys in,
    services/session/domain/game.py ``merge_view``)."""
    return orjson.dumps(view, option=orjson.OPT_SORT_KEYS)
