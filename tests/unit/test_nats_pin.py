"""The nats-py that :mod:`services.common.nats` was written for, and the private parts
of it that package reads (``KeyValue._name``/``_js``, ``JetStreamContext._nc``/
``_prefix``, ``JetStreamContext.publish(msg_ttl=...)``). An upgrade of nats-py past
:data:`NATS_PY_WRITTEN_FOR` fails here first: read those attributes in nats-py's
``js/kv.py`` and ``js/client.py`` again, then move the bound.

Also checks that no module outside ``services/common/nats/`` reads one of them. No NATS
server needed (nothing connects).
"""

from __future__ import annotations

import ast
import inspect
from importlib.metadata import version
from pathlib import Path

import nats
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from services.common.nats import NATS_PY_WRITTEN_FOR
from services.common.nats.direct import api_prefix, connection
from services.common.nats.kv import bucket_name

ROOT = Path(__file__).resolve().parents[2]
#: nats.py attributes only services/common/nats/ may read.
PRIVATE = {"_js", "_name", "_nc", "_prefix", "_pre", "_stream", "_jsm"}


def _major_minor(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def test_installed_nats_py_is_the_one_the_private_access_was_written_for() -> None:
    lowest, beyond = NATS_PY_WRITTEN_FOR
    installed = _major_minor(version("nats-py"))
    assert lowest <= installed < beyond, (version("nats-py"), NATS_PY_WRITTEN_FOR)


def test_the_private_attributes_read_are_there() -> None:
    nc = nats.NATS()  # never connected
    js = nc.jetstream()
    assert isinstance(js, JetStreamContext)
    assert connection(js) is nc
    assert api_prefix(js) == "$JS.API"
    assert api_prefix(nc.jetstream(domain="hub")) == "$JS.hub.API"
    kv = KeyValue(
        name="GAME_PRESENCE",
        stream="KV_GAME_PRESENCE",
        pre="$KV.GAME_PRESENCE.",
        js=js,
        direct=True,
    )
    assert bucket_name(kv) == "GAME_PRESENCE"
    assert kv._js is js
    publish = inspect.signature(JetStreamContext.publish).parameters
    assert "msg_ttl" in publish and "headers" in publish
    assert "msg_ttl" not in inspect.signature(KeyValue.put).parameters  # why put_with_ttl exists


def test_no_nats_private_is_read_outside_services_common_nats() -> None:
    found = []
    for top in ("services", "gateway", "client", "deploy", "bench", "tools"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("services/common/nats/"):
                continue
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not (isinstance(node, ast.Attribute) and node.attr in PRIVATE):
                    continue
                owner = node.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                    continue  # a class's own private attribute
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
