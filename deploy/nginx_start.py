"""Start nginx inside the ``cellwar/nginx`` image: render the one template
(``deploy/nginx.conf`` through :func:`deploy.nginx.render_config`), then replace this
process with ``nginx`` in the foreground.

Environment:
    CELLWAR_NGINX_GATEWAYS: comma list of gateway ``host:port`` (default ``gateway:8000``).
    CELLWAR_NGINX_LISTEN: what nginx listens on (default ``8080``; a non-root user cannot
        bind ports below 1024).
    CELLWAR_NGINX_RUN_DIR: writable folder for the rendered config, pid and temporary
        files (default ``/run/cellwar-nginx``).
    CELLWAR_NGINX_WORKERS: ``worker_processes`` (default ``auto``).
    CELLWAR_NGINX_WAIT_S: seconds to wait for every gateway name to resolve before nginx
        starts (default 120; nginx refuses to start on an unknown upstream host, and a
        container may start before its gateways do).

Logs go to the container's output: the error log to stderr, the access log (paths
without query strings, see deploy/nginx.conf) to stdout.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

from deploy.nginx import nginx_binary, prepare_run_dir, render_config

STATIC_DIR = Path(__file__).resolve().parent.parent / "client" / "web"


def gateways_from_env(value: str) -> list[str]:
    """``"a:8000, b:8000"`` → ``["a:8000", "b:8000"]``.

    Raises:
        ValueError: no gateway, or an entry without ``host:port``.
    """
    gateways = [item.strip() for item in value.split(",") if item.strip()]
    if not gateways:
        raise ValueError("CELLWAR_NGINX_GATEWAYS names no gateway")
    for item in gateways:
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"CELLWAR_NGINX_GATEWAYS: {item!r} is not host:port")
    return gateways


def wait_until_resolved(gateways: list[str], timeout_s: float) -> list[str]:
    """Wait until every gateway's host name resolves (seconds). Returns the names that
    still do not resolve when ``timeout_s`` has passed (empty: all do)."""
    deadline = time.monotonic() + timeout_s
    said = False
    while True:
        missing = []
        for item in gateways:
            host, _, port = item.rpartition(":")
            try:
                socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
            except OSError:
                missing.append(host)
        if not missing or time.monotonic() > deadline:
            return missing
        if not said:
            print(f"nginx_start: waiting for {', '.join(missing)} to resolve", file=sys.stderr, flush=True)
            said = True
        time.sleep(0.5)


def main() -> int:
    """Render the config and exec nginx (returns only on a configuration error: 2)."""
    try:
        gateways = gateways_from_env(os.environ.get("CELLWAR_NGINX_GATEWAYS", "gateway:8000"))
    except ValueError as exc:
        print(f"nginx_start: {exc}", file=sys.stderr)
        return 2
    missing = wait_until_resolved(gateways, float(os.environ.get("CELLWAR_NGINX_WAIT_S", "120")))
    if missing:
        print(f"nginx_start: {', '.join(missing)} did not resolve; starting anyway", file=sys.stderr)
    run = prepare_run_dir(os.environ.get("CELLWAR_NGINX_RUN_DIR", "/run/cellwar-nginx"))
    for name, target in (("error.log", "/dev/stderr"), ("access.log", "/dev/stdout")):
        link = run / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    conf = run / "nginx.conf"
    conf.write_text(
        render_config(
            listen=os.environ.get("CELLWAR_NGINX_LISTEN", "8080"),
            gateways=gateways,
            static_dir=STATIC_DIR,
            run_dir=run,
            workers=os.environ.get("CELLWAR_NGINX_WORKERS", "auto"),
        )
    )
    binary = nginx_binary()
    os.execv(binary, [binary, "-e", "stderr", "-p", str(run), "-c", str(conf)])
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
