"""Bots: players of the public API and policies of the RL environments.

- :class:`~client.bots.life.LifeBot` and :class:`~client.bots.cellwar.CellWarBot` play
  whole games through the REST + WebSocket API (``python -m client.play``).
- :func:`load_policy` gives a CellWar policy by name (``random``, ``heuristic``,
  ``search``, ``trained``, ``llm``: a local chat model, docs/llm-players.md): an object whose ``act(observation) -> int`` takes the
  observation dict of :func:`client.rl.cellwar_env` and returns a legal action index.
"""

from client.bots.cellwar import CellWarBot, visible_cells
from client.bots.life import FIGURE_WEIGHTS, FIGURES, STAMPS, LifeBot, decode_board
from client.bots.registry import ALL_POLICY_NAMES, POLICY_NAMES, Policy, load_policy

__all__ = [
    "ALL_POLICY_NAMES",
    "FIGURES",
    "FIGURE_WEIGHTS",
    "POLICY_NAMES",
    "STAMPS",
    "CellWarBot",
    "LifeBot",
    "Policy",
    "decode_board",
    "load_policy",
    "visible_cells",
]
