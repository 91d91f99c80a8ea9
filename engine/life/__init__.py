"""The ``life`` kind: coloured B3/S23 kernel, RLE patterns, and the territorial rules."""

from engine.life.kernel import step

__all__ = ["step"]
