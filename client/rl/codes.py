"""Names the AI environments use: the machine codes of their refusals (the engine has no
enum of its own for these yet; these values are the engine's and the API's strings) and
the snapshot format. Event types are :class:`cellwar.v1.codes.EventType`."""

from __future__ import annotations

from enum import StrEnum

#: Format tag of :meth:`client.rl.cellwar.CellWarEnv.state` snapshots.
SNAPSHOT_FORMAT = "cellwar-env/1"


class ErrorCode(StrEnum):
    """Machine codes of an environment's refusals."""

    #: A CellWar vector the mask forbids (the engine's code for a refused vector).
    INVALID_ACTION = "INVALID_ACTION"
    #: A Life placement on a cell already taken or outside the zone.
    CELL_TAKEN = "CELL_TAKEN"
