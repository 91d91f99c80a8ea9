"""The session knows no rules (docs/architecture/index.md "The layers"): it never imports
``engine`` and never names a game kind; per-kind policy comes from the engine as data
(engine/policy.py)."""

from __future__ import annotations

import ast
from pathlib import Path

SESSION = Path(__file__).resolve().parents[3] / "services" / "session"
KINDS = {"life", "cellwar", "campaign"}


def modules() -> list[Path]:
    paths = sorted(SESSION.rglob("*.py"))
    assert len(paths) > 10
    return paths


def test_the_session_never_imports_the_engine():
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n == "engine" or n.startswith("engine.") for n in names), path.name


def test_the_session_names_no_game_kind():
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value.lower() not in KINDS, f"{path.name}:{node.lineno} {node.value!r}"


def test_rule_tables_are_gone():
    text = "\n".join(p.read_text() for p in modules())
    for table in ("FOG_KINDS", "BLIND_PHASES", "ROLLBACK_KINDS", "LOBBY_HIDDEN"):
        assert table not in text
