"""client.rl.observation reads the fog through the views' board codec (no engine)."""

from __future__ import annotations

import numpy as np
import pytest

from cellwar.v1.board_codec import BoardFormatError, encode_mask
from client.rl.observation import VISIBLE, encode_view, visible_mask


def test_visible_mask_is_the_codecs_decoding_read_only():
    mask = 0b1000_0110_0000_0001
    view = {"you": 1, "width": 4, "height": 4, "units": [], "visible": encode_mask(mask, 4, 4)}
    got = visible_mask(view)
    assert got.tolist() == [[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    assert got.dtype == np.uint8 and not got.flags.writeable
    assert np.array_equal(encode_view(view)[VISIBLE], got)
    assert visible_mask({"width": 3, "height": 2}).tolist() == [[0, 0, 0], [0, 0, 0]]  # no field
    assert visible_mask({"width": 3, "height": 2, "visible": "3o$o!"}).tolist() == [
        [1, 1, 1],
        [1, 0, 0],
    ]


@pytest.mark.parametrize(
    ("text", "message"), [("o?!", "unknown character"), ("oB!", "state 2"), ("4o!", "right edge")]
)
def test_visible_mask_refuses_what_is_not_a_mask(text, message):
    with pytest.raises(BoardFormatError, match=message):
        visible_mask({"width": 3, "height": 2, "visible": text})
