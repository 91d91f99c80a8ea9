"""The import rule of the session's four packages (docs/architecture/session.md):

- ``domain`` (the game aggregate, commands, idempotency, the lobby's rules) imports
  nothing of the session outside ``domain``;
- ``service_layer`` (the command loop, the cache, views, the ports) imports only
  ``domain`` and ``service_layer``: it types against the Protocols of
  ``service_layer/ports.py``, never an adapter;
- ``adapters`` (JetStream, KV, the engine client, memory) never import ``entrypoints``
  (nor the wiring: ``bootstrap``, ``server``).

Every import counts, those inside functions and ``if TYPE_CHECKING:`` too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SESSION = Path(__file__).resolve().parents[3] / "services" / "session"
PREFIX = "services.session"
LAYERS = ("domain", "service_layer", "adapters", "entrypoints")
#: What each layer may import of the session (None: anything).
ALLOWED: dict[str, set[str] | None] = {
    "domain": {"domain"},
    "service_layer": {"domain", "service_layer"},
    "adapters": {"domain", "service_layer", "adapters"},
    "entrypoints": None,
}


def session_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every ``services.session...`` import of a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:
            pytest.fail(f"{path}:{node.lineno}: a relative import (spell the module out)")
    return [(n, m) for n, m in found if m == PREFIX or m.startswith(PREFIX + ".")]


def target_layer(module: str) -> str:
    """``domain`` of ``services.session.domain.game``; the module's own name for one
    outside the four packages (``bootstrap``, ``server``, ``services.session``)."""
    rest = module.removeprefix(PREFIX).lstrip(".")
    return rest.split(".")[0] if rest else PREFIX


def violations(layer: str) -> list[str]:
    allowed = ALLOWED[layer]
    out = []
    for path in sorted((SESSION / layer).rglob("*.py")):
        for line, module in session_imports(path):
            if allowed is not None and target_layer(module) not in allowed:
                out.append(f"{path.relative_to(SESSION.parents[1])}:{line} imports {module}")
    return out


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_what_it_may(layer: str):
    assert violations(layer) == []


def test_the_four_packages_are_there_and_hold_the_code():
    for layer in LAYERS:
        assert (SESSION / layer / "__init__.py").is_file()
        assert len(list((SESSION / layer).glob("*.py"))) > 1, layer
    top = sorted(p.name for p in SESSION.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "bootstrap.py", "server.py"]


def test_the_rule_sees_a_forbidden_import(tmp_path: Path):
    """The checker itself: an adapter import in a service-layer file is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from services.session.adapters.event_store import EventStore\n"
        "def f():\n"
        "    import services.session.entrypoints.ticker\n"
    )
    found = [(n, target_layer(m)) for n, m in session_imports(bad)]
    assert found == [(3, "adapters"), (5, "entrypoints")]
    assert all(t not in ALLOWED["service_layer"] for _, t in found)
