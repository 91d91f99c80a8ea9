"""Regenerate the campaign's levels 8-103 (:mod:`engine.campaign.generator`).

Usage: python tools/gen_campaign_levels.py [--check]

Writes engine/campaign/data/levels_generated.json from engine.campaign.generator (fixed
seed, its own PRNG) and prints what it wrote. With --check, writes nothing and exits 1
when the checked-in file differs from a fresh generation.
tests/engine/test_campaign_levels.py regenerates in memory and fails on any difference.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.campaign.generator import SEED, generate_levels, render_json  # noqa: E402
from engine.campaign.levels import DATA_FILE  # noqa: E402

TARGET = ROOT / "engine" / "campaign" / "data" / DATA_FILE


def main(argv: list[str]) -> int:
    generated = generate_levels()
    text = render_json(generated)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    out = sys.stdout
    if "--check" in argv:
        current = TARGET.read_text("utf-8") if TARGET.exists() else ""
        if current != text:
            out.write(
                f"{TARGET.relative_to(ROOT)} is stale: run python tools/gen_campaign_levels.py\n"
            )
            return 1
        out.write(f"{TARGET.relative_to(ROOT)} is up to date (sha256 {digest})\n")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    cells = sum(len(lv.enemy) for lv in generated)
    hopeless = [lv.number for lv in generated if lv.hopeless]
    out.write(
        f"wrote {TARGET.relative_to(ROOT)}: levels {generated[0].number}..{generated[-1].number} "
        f"(seed {SEED:#x}), {cells} enemy cells, hopeless {hopeless}, "
        f"{len(text)} bytes, sha256 {digest}\n"
    )
    for lv in generated:
        x0, y0, x1, y1 = lv.zone
        out.write(
            f"  {lv.number:3d} {lv.width:3d}x{lv.height:<3d} zone [{x0},{y0},{x1},{y1}) "
            f"budget {lv.budget:3d} enemy {len(lv.enemy):3d}{' hopeless' if lv.hopeless else ''}"
            f"  {lv.name_en}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
