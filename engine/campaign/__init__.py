"""The ``campaign`` kind: one red player against static green figures (the Life seed's
section "Кампания"; docs/playing.md "Campaign").

This package holds the 103 levels as pure data (:mod:`engine.campaign.levels`); the
deterministic generator of levels 8-103 lives in :mod:`engine.campaign.generator` and
is not imported at runtime. The campaign rules are added separately.

Note: the function :func:`levels` shadows the submodule of the same name as an
attribute of this package, so import from the submodule with
``from engine.campaign.levels import Level`` (not ``import engine.campaign.levels as m``).
"""

from engine.campaign.levels import (
    HAND_LEVEL_COUNT,
    LEVEL_COUNT,
    SOLUTIONS,
    Level,
    UnknownLevelError,
    level,
    levels,
)

__all__ = [
    "HAND_LEVEL_COUNT",
    "LEVEL_COUNT",
    "SOLUTIONS",
    "Level",
    "UnknownLevelError",
    "level",
    "levels",
]
