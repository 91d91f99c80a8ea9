"""The committed gRPC stubs must match proto/cellwar/v1/*.proto (`make proto` regenerates)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from gen_proto import generate  # noqa: E402

# Lines that name the protoc / protobuf versions differ between machines, not between protos.
_VERSION_LINE = re.compile(r"(Protobuf Python Version|_runtime_version\.|GRPC_GENERATED_VERSION|# source:|^\s*\d+,\s*$|^\s*\d+,\s*\d+,\s*\d+,|_version_not_supported|first_version_with|is_version|from grpc\._utilities)")


def _normalise(text: str) -> list[str]:
    return [line for line in text.splitlines() if not _VERSION_LINE.search(line)]


def test_stubs_are_up_to_date(tmp_path: Path) -> None:
    fresh = generate(tmp_path)
    assert fresh, "protoc produced no files"
    committed_dir = ROOT / "proto" / "cellwar" / "v1"
    names = sorted(p.name for p in fresh)
    assert names == sorted(p.name for p in committed_dir.glob("*_pb2*.py*")), "stub files differ; run make proto"
    for path in fresh:
        committed = committed_dir / path.name
        assert _normalise(committed.read_text()) == _normalise(path.read_text()), (
            f"{committed.relative_to(ROOT)} is stale: run `make proto`"
        )


def test_stubs_import_as_cellwar_v1() -> None:
    from cellwar.v1 import engine_pb2, events_pb2, session_pb2

    event = events_pb2.Event(game_id="g", seq=3, type="TurnEnded", actor=1, state_hash="ab")
    again = events_pb2.Event.FromString(event.SerializeToString())
    assert (again.game_id, again.seq, again.type, again.actor) == ("g", 3, "TurnEnded", 1)
    assert "Decide" in engine_pb2.DESCRIPTOR.services_by_name["Engine"].methods_by_name
    assert "Watch" in session_pb2.DESCRIPTOR.services_by_name["Session"].methods_by_name
