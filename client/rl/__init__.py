"""AI environments of CellWar (docs/vector-envs.md): :func:`cellwar_env` (PettingZoo AEC) and
:func:`life_placement_env` (Gymnasium), their batched forms :func:`cellwar_vector_env`
and :func:`life_placement_vector_env` (docs/vector-envs.md), in process on the engine library or remote
through the REST API with the same classes; the trained policy and its training
(``python -m client.rl.train``).

The environments need the ``rl`` extra (pettingzoo, gymnasium); they are imported on
first use, so the numpy-only parts (observation planes, the trained policy) load without
them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cellwar_env", "cellwar_vector_env", "life_placement_env", "life_placement_vector_env"]


def __getattr__(name: str) -> Any:
    if name == "cellwar_env":
        from client.rl.cellwar import cellwar_env

        return cellwar_env
    if name == "cellwar_vector_env":
        from client.rl.vector import cellwar_vector_env

        return cellwar_vector_env
    if name == "life_placement_vector_env":
        from client.rl.life_vector import life_placement_vector_env

        return life_placement_vector_env
    if name == "life_placement_env":
        from client.rl.life import life_placement_env

        return life_placement_env
    raise AttributeError(f"module 'client.rl' has no attribute {name!r}")
