"""Regenerate the gRPC/protobuf stubs of proto/cellwar/v1 (run by `make proto`).

Usage: python tools/gen_proto.py [OUT_DIR]   (default: proto/, next to the sources)
The stubs import as `cellwar.v1.*_pb2`. tests/test_proto_stubs.py regenerates into a
temporary folder and fails when the committed stubs differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grpc_tools
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"


def generate(out_dir: Path) -> list[Path]:
    """Write *_pb2.py, *_pb2.pyi and *_pb2_grpc.py for every .proto under proto/cellwar/v1.

    Raises RuntimeError when protoc fails.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "cellwar" / "v1").glob("*.proto"))
    include = str(Path(grpc_tools.__file__).parent / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *sources,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {' '.join(args)}")
    return sorted((out_dir / "cellwar" / "v1").glob("*_pb2*.py*"))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else PROTO
    for path in generate(target):
        sys.stdout.write(f"{path}\n")
