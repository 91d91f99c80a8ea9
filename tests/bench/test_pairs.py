"""The ``actions`` bench judges REST against the hop floor pair by pair
(:func:`bench.actions._pairs`): each REST phase against the floor measured just before
it, the median of the pairs' ratios, the sides' medians beside it."""

from __future__ import annotations

import pytest

from bench.actions import _pairs


def test_the_ratio_is_the_median_of_each_pairs_ratio():
    # the machine slowed down between the pairs: both sides took 1.5x the CPU
    figures = _pairs([1.0, 1.5], [0.9, 1.65])
    assert figures["ratios"] == pytest.approx([0.9, 1.1])
    assert figures["ratio"] == pytest.approx(1.0)
    assert figures["floor"] == pytest.approx(1.25) and figures["rest"] == pytest.approx(1.275)
    # a single ratio of the sides' medians would read 1.02 and fail a <= 1 target
    assert figures["rest"] / figures["floor"] == pytest.approx(1.02)


def test_a_missing_figure_leaves_its_pair_out():
    figures = _pairs([2.0, None, 1.0], [1.0, 3.0, None])
    assert figures["ratios"] == [0.5]
    assert figures["ratio"] == 0.5
    assert figures["floor"] == 1.5 and figures["rest"] == 2.0
    assert _pairs([None], [None])["ratio"] is None
