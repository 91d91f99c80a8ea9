"""CellWar (kind ``cellwar``): a turn-based fog-of-war grid game with infantry,
fortifications and factories (source: the CellWar seed ``seeds/001_9d7c8657bdcb51a7.txt``;
docs/playing.md "CellWar").

:mod:`engine.cellwar.game` is the kind module behind :mod:`engine.api`; the other
modules each hold one part of the rules: :mod:`~engine.cellwar.units` (unit types and
their constants), :mod:`~engine.cellwar.config` (the JSON config and the default start),
:mod:`~engine.cellwar.state` (the immutable state and its encoding),
:mod:`~engine.cellwar.actions` (the vector action and what it does),
:mod:`~engine.cellwar.turns` (turn order, elimination, removal) and
:mod:`~engine.cellwar.fog` (vision and the per-player view).
"""
