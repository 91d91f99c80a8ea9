"""The per-kind rule modules behind the one face of :mod:`engine`.

Each kind module (``engine.life.game``, ``engine.campaign.game``, ``engine.cellwar.game``)
exports the same functions; :mod:`engine.api` dispatches on ``state.kind`` or on the
config's type. See the module docstring of :mod:`engine.api` for the contract.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from engine.errors import GameError

#: kind name -> module path of its rules.
KIND_MODULES: dict[str, str] = {
    "life": "engine.life.game",
    "campaign": "engine.campaign.game",
    "cellwar": "engine.cellwar.game",
}

#: Rule modules already imported (every engine call dispatches through here).
_LOADED: dict[str, ModuleType] = {}


def rules_for(kind: str) -> ModuleType:
    """The rule module of ``kind``.

    Raises:
        GameError: ``INVALID_CONFIG`` for an unknown or not yet available kind.
    """
    if not isinstance(kind, str):
        raise GameError("INVALID_CONFIG", f"the game kind must be a string, got {kind!r:.40}")
    cached = _LOADED.get(kind)
    if cached is not None:
        return cached
    path = KIND_MODULES.get(kind)
    if path is None:
        raise GameError("INVALID_CONFIG", f"unknown game kind {kind!r}; known: {sorted(KIND_MODULES)}")
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as exc:  # a kind whose rules are not built yet
        if exc.name and path.startswith(exc.name):
            raise GameError("INVALID_CONFIG", f"game kind {kind!r} is not available") from exc
        raise
    _LOADED[kind] = module
    return module
