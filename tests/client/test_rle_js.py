"""The browser's board decoder (client/web/js/rle.js) against the views' board codec
(cellwar.v1.board_codec): node decodes texts the Python codec wrote (random boards and
the edge cases: empty, one cell, full, many colours, two-letter states, fog masks, and
the wrapped, commented and CRLF forms the codec also reads) and must find the same cells;
its encoder must write the codec's ``board`` texts byte for byte."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cellwar.v1.board_codec import decode_board, encode_board, encode_mask

ROOT = Path(__file__).resolve().parents[2]
RLE_JS = ROOT / "client" / "web" / "js" / "rle.js"
NODE = shutil.which("node")
ITEM = re.compile(r"\d*(?:[p-y][A-X]|.)")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: Reads [{"text", "width", "height"}] on stdin; writes, per vector, the decoded cells and
#: encodeBoard of them.
RUNNER = """
import { decodeBoard, encodeBoard } from './rle.mjs';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).map(({ text, width, height }) => {
    const cells = decodeBoard(text, width, height);
    return { cells: Array.from(cells), encoded: encodeBoard(cells, width, height) };
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def _board(rng: random.Random, w: int, h: int, top: int, density: float) -> bytes:
    return bytes(rng.randint(1, top) if rng.random() < density else 0 for _ in range(w * h))


def _vectors() -> list[dict]:
    """(kind, width, height, cells) cases, with the codec's text of each."""
    rng = random.Random(20261202)
    boards: list[tuple[str, int, int, bytes]] = [
        ("empty 0x0", 0, 0, b""),
        ("empty 1x1", 1, 1, b"\x00"),
        ("empty 5x4", 5, 4, bytes(20)),
        ("one cell", 1, 1, b"\x01"),
        ("full one colour", 6, 3, b"\x01" * 18),
        ("full colour 24", 4, 4, b"\x18" * 16),
        ("wide runs", 300, 2, bytes(299) + b"\x04" + b"\x02" * 300),
        ("tall blank rows", 3, 40, bytes(3 * 20) + b"\x00\x00\x03" + bytes(3 * 19)),
        ("every state", 16, 16, bytes(range(256))),
    ]
    for x, y in ((0, 0), (6, 0), (0, 4), (6, 4), (3, 2)):
        cells = bytearray(35)
        cells[y * 7 + x] = 2
        boards.append((f"one cell at {x},{y}", 7, 5, bytes(cells)))
    for i in range(120):
        w, h = rng.randint(1, 64), rng.randint(1, 64)
        top = rng.choice([1, 2, 4, 8, 24, 255])
        density = rng.choice([0.02, 0.2, 0.5, 0.9, 1.0])
        boards.append((f"random {i} ({top} states)", w, h, _board(rng, w, h, top, density)))
    out = [
        {
            "kind": kind,
            "width": w,
            "height": h,
            "cells": list(cells),
            "text": encode_board(cells, w, h),
        }
        for kind, w, h, cells in boards
    ]
    masks = [("fog none", 0, 4, 4), ("fog all", (1 << 16) - 1, 4, 4), ("fog one", 1 << 9, 4, 4)]
    for i in range(60):
        w, h = rng.randint(4, 64), rng.randint(4, 64)
        density = rng.choice([0.1, 0.5, 0.9])
        masks.append(
            (f"fog {i}", sum(1 << k for k in range(w * h) if rng.random() < density), w, h)
        )
    for kind, mask, w, h in masks:
        cells = [mask >> k & 1 for k in range(w * h)]
        out.append(
            {"kind": kind, "width": w, "height": h, "cells": cells, "text": encode_mask(mask, w, h)}
        )
    # the same texts in the other forms the codec reads: wrapped lines (between items, and
    # inside a count), a header and comments, CRLF line ends
    for v in out[9:30]:
        text, w, h = v["text"], v["width"], v["height"]
        items = ITEM.findall(text)
        wrapped = "\n".join("".join(items[k : k + 3]) for k in range(0, len(items), 3))
        wrapped = re.sub(r"(\d)(\d)", r"\1\n\2", wrapped, count=1)
        headed = f"#N vector\n#C {v['kind']}\nx = {w}, y = {h}, rule = B3/S23\n{wrapped}"
        for form, t in (
            ("wrapped", wrapped),
            ("header", headed),
            ("crlf", headed.replace("\n", "\r\n")),
        ):
            out.append({**v, "kind": f"{v['kind']} {form}", "text": t, "form": True})
    return out


def test_the_js_decoder_reads_the_python_codecs_texts(tmp_path):
    vectors = _vectors()
    for v in vectors:  # the vectors are right on the Python side first
        assert list(decode_board(v["text"], v["width"], v["height"])) == v["cells"], v["kind"]
    shutil.copyfile(RLE_JS, tmp_path / "rle.mjs")
    (tmp_path / "run.mjs").write_text(RUNNER, "utf-8")
    payload = [{"text": v["text"], "width": v["width"], "height": v["height"]} for v in vectors]
    done = subprocess.run(
        [NODE, "run.mjs"],
        cwd=tmp_path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == len(vectors)
    checked_encoder = 0
    for v, r in zip(vectors, results, strict=True):
        assert r["cells"] == v["cells"], v["kind"]
        if not v["kind"].startswith("fog") and not v.get("form"):
            assert r["encoded"] == v["text"], v["kind"]
            checked_encoder += 1
    assert checked_encoder == 134
    kinds = {v["kind"] for v in vectors}
    assert {"empty 0x0", "one cell", "full colour 24", "every state", "fog all"} <= kinds
