"""The design is the project's own: no file of the repository (code, tests, docs, help
texts) cites a design document outside it, a tracker's issue number or an acceptance
list of one. Rules cite their source (the seeds' rules, Golly, LifeWiki, a paper, an
upstream ``owner/repo#N``) or a page of the docs site (docs/).

The files are git's: tracked ones and new ones not ignored (``git ls-files --cached
--others --exclude-standard``), so local data (``.venv``, ``.bench``, ``site``) is not
read. Without git (an unpacked archive) the test is skipped."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# the words are split so that this file does not match its own patterns
_WORD = "DESIGN"
PATTERN = re.compile(
    rf"{_WORD}( |\.md|§|$)|\bissue [0-9]+|" + "must" + "-show",
    re.IGNORECASE | re.MULTILINE,
)
#: Exact case for the design file's name: "design" is an ordinary English word.
CASED = re.compile(rf"\b{_WORD}\b")


def _files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout
    return [ROOT / name for name in out.decode("utf-8").split("\0") if name]


def test_no_file_cites_an_outside_design_document_or_issue_numbers() -> None:
    found = []
    for path in _files():
        if not path.is_file():
            continue  # deleted in the working tree, not yet committed
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary (images, fonts)
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            hit = PATTERN.search(line)
            if hit and (not hit.group(0).upper().startswith(_WORD) or CASED.search(line)):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert found == []
