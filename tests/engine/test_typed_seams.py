"""The engine's typed seams: kinds behind an explicit registry of :class:`KindRules`
modules (no dynamic import), every :class:`GameError` raised with an ``ErrorCode`` member.

The two scans read the source of ``engine/`` with :mod:`ast`, so a new string-literal
code or a dynamic import fails here rather than in review.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from cellwar.v1.codes import ErrorCode
from engine.errors import NO_CHANGE, GameError
from engine.kinds import KIND_NAMES, KindRules, registry, rules_for

ENGINE = Path(__file__).resolve().parents[2] / "engine"
SOURCES = sorted(ENGINE.rglob("*.py"))


def _protocol_members() -> set[str]:
    return {
        name
        for name, value in vars(KindRules).items()
        if callable(value) and not name.startswith("_")
    }


def test_registry_maps_every_kind_to_a_module_with_the_whole_protocol() -> None:
    members = _protocol_members()
    assert len(members) == 15
    kinds = registry()
    assert tuple(kinds) == KIND_NAMES == ("life", "campaign", "cellwar")
    for kind, rules in kinds.items():
        missing = {name for name in members if not callable(getattr(rules, name, None))}
        assert missing == set(), kind
        assert rules_for(kind) is rules


def test_rules_for_an_unknown_kind_is_invalid_config() -> None:
    with pytest.raises(GameError) as caught:
        rules_for("chess")
    assert caught.value.code == "INVALID_CONFIG"
    assert "known: ['campaign', 'cellwar', 'life']" in caught.value.message
    with pytest.raises(GameError) as caught:
        rules_for(3)  # type: ignore[arg-type]
    assert caught.value.code == ErrorCode.INVALID_CONFIG


def test_game_error_keeps_the_plain_string_value_of_its_code() -> None:
    exc = GameError(ErrorCode.OUT_OF_ZONE, "no cell lands inside your zone")
    assert type(exc.code) is str
    assert exc.code == "OUT_OF_ZONE" == ErrorCode.OUT_OF_ZONE
    assert str(exc) == "OUT_OF_ZONE: no cell lands inside your zone"
    assert json.dumps({"code": exc.code}) == '{"code": "OUT_OF_ZONE"}'
    assert NO_CHANGE == "NO_CHANGE"
    assert exc.code not in GameError.SCHEMA_CODES
    assert GameError(ErrorCode.MALFORMED, "x").code in GameError.SCHEMA_CODES


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def test_no_game_error_with_a_string_literal_code() -> None:
    found = []
    raisers = {"GameError", "LogMismatch"}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and _call_name(node) in raisers):
                continue
            args = list(node.args) + [kw.value for kw in node.keywords if kw.arg == "code"]
            if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                found.append(f"{path.relative_to(ENGINE.parent)}:{node.lineno}")
    assert found == []


def test_no_dynamic_import_in_the_engine() -> None:
    found = []
    for path in SOURCES:
        text = path.read_text("utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "importlib" for a in node.names
            ):
                found.append(f"{path.name}:{node.lineno}")
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").split(".")[0] == "importlib"
            ):
                found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call) and _call_name(node) == "__import__":
                found.append(f"{path.name}:{node.lineno}")
        assert "importlib" not in text, path.name
    assert found == []
