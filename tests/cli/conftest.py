"""Helpers of the ``cellwar`` tool's tests: the golden logs, tampered copies, and a way
to run the tool in this process (its exit code and what it printed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from client.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "logs"
GOLDEN = sorted(LOGS.glob("v*/*.jsonl"))


@dataclass
class Run:
    """One run of ``cellwar``: exit code, standard output and error."""

    code: int
    out: str
    err: str


@pytest.fixture
def cellwar(capsys):
    """``cellwar(*args) -> Run``: the tool run in this process (progress bars are off
    off a terminal)."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def read(path: Path) -> list[dict[str, Any]]:
    """The events of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write(path: Path, events: list[dict[str, Any]]) -> Path:
    """Write events as JSON Lines (the golden logs' format); returns ``path``."""
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events), "utf-8"
    )
    return path


# The integration tests reuse the API tests' real gateway (uvicorn on port 0 + the stack).
from tests.api.conftest import api, gateway, gateway_settings  # noqa: E402, F401
