"""Render ``deploy/nginx.conf`` (a template) for a host: the cluster runner and the
container stack use the same file with their own addresses and paths.

``python -m deploy.nginx --gateway 127.0.0.1:8001 --gateway 127.0.0.1:8002`` prints a
rendered config; ``nginx -p PREFIX -c FILE`` runs it (the config sets ``daemon off``).
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from gateway.headers import CONTENT_SECURITY_POLICY, SECURITY_HEADERS

TEMPLATE = Path(__file__).with_name("nginx.conf")

#: Where Debian's ``nginx`` package puts its binary and MIME table.
DEBIAN_NGINX = "/usr/sbin/nginx"
DEBIAN_MIME_TYPES = "/etc/nginx/mime.types"

#: Client-side timeouts of nginx (docs/security.md).
CLIENT_HEADER_TIMEOUT = "10s"
CLIENT_BODY_TIMEOUT = "10s"
SEND_TIMEOUT = "30s"
#: nginx's idle keep-alive to a gateway: shorter than the gateway's own
#: (``CELLWAR_HTTP_KEEP_ALIVE_S``, 20 s by default).
UPSTREAM_KEEPALIVE_TIMEOUT = "10s"
#: Open WebSockets per client address through nginx, over all gateways, when
#: ``CELLWAR_WS_MAX_PER_ADDRESS`` (the gateways' own cap) is not set.
WS_PER_ADDRESS = 64


def ws_per_address_setting() -> int:
    """``CELLWAR_WS_MAX_PER_ADDRESS`` from the environment (0 = no cap), else
    :data:`WS_PER_ADDRESS`; a value that is not a whole number >= 0 counts as unset."""
    value = os.environ.get("CELLWAR_WS_MAX_PER_ADDRESS", "").strip()
    return int(value) if value.isdigit() else WS_PER_ADDRESS

INSTALL_HINT = (
    "nginx not found: install Debian's nginx package "
    "(sudo apt-get install -y nginx) or put nginx on PATH"
)


def nginx_binary() -> str:
    """Path of the ``nginx`` executable (``PATH``, then ``/usr/sbin/nginx``).

    Raises:
        FileNotFoundError: with an install hint when there is none.
    """
    found = shutil.which("nginx")
    if found:
        return found
    if Path(DEBIAN_NGINX).exists():
        return DEBIAN_NGINX
    raise FileNotFoundError(INSTALL_HINT)


def render_config(
    *,
    listen: str,
    gateways: Sequence[str],
    static_dir: str | Path,
    run_dir: str | Path,
    workers: int | str = "auto",
    mime_types: str = DEBIAN_MIME_TYPES,
    access_log: str | None = None,
    user: str | None = None,
    ws_per_address: int | None = None,
) -> str:
    """The text of ``deploy/nginx.conf`` with its fields filled in.

    Args:
        listen: what nginx listens on, e.g. ``"127.0.0.1:8000"`` or ``"80"``.
        gateways: ``host:port`` of each gateway (at least one); requests are balanced
            over them, a gateway that refuses connections is skipped.
        static_dir: the browser client's folder (``client/web``), served by nginx.
        run_dir: a folder nginx may write (pid file, temporary files, error log).
        workers: ``worker_processes`` (a number or ``"auto"``).
        mime_types: the MIME table to include (Debian's by default).
        access_log: where the access log goes (default ``<run_dir>/access.log``; ``"off"``
            for none). Its format (``cellwar``) logs the path without the query
            string, where a WebSocket's token may travel.
        user: the ``user`` directive (``"www-data"``, ``"root root"``): whom the workers
            run as when the master runs as root; None leaves nginx's default (nobody).
        ws_per_address: WebSockets open at once per client address over all gateways
            (``limit_conn``; one more is answered 429; 0 = no cap); None:
            :func:`ws_per_address_setting`.

    Raises:
        ValueError: no gateway given.
    """
    if not gateways:
        raise ValueError("nginx needs at least one gateway address")
    run = Path(run_dir)
    servers = "\n".join(
        f"    server {addr} max_fails=1 fail_timeout=2s;" for addr in gateways
    )
    log_target = access_log or str(run / "access.log")
    cap = ws_per_address_setting() if ws_per_address is None else ws_per_address
    # add_header lines are inherited only by a block that sets none itself: every block
    # that sets one repeats them.
    security = "\n".join(
        f"    add_header {name.decode().title()} "
        + ("$cellwar_csp" if name == b"content-security-policy" else f'"{value.decode()}"')
        + " always;"
        for name, value in SECURITY_HEADERS
    )
    fields = {
        "@@WORKERS@@": str(workers),
        "@@PID_FILE@@": str(run / "nginx.pid"),
        "@@ERROR_LOG@@": str(run / "error.log"),
        "@@MIME_TYPES@@": mime_types,
        "@@ACCESS_LOG@@": log_target if log_target == "off" else f"{log_target} cellwar",
        "@@TEMP_DIR@@": str(run / "tmp"),
        "@@UPSTREAM_SERVERS@@": servers,
        "@@LISTEN@@": listen,
        "@@STATIC_DIR@@": str(static_dir),
        "@@CLIENT_HEADER_TIMEOUT@@": CLIENT_HEADER_TIMEOUT,
        "@@CLIENT_BODY_TIMEOUT@@": CLIENT_BODY_TIMEOUT,
        "@@SEND_TIMEOUT@@": SEND_TIMEOUT,
        "@@UPSTREAM_KEEPALIVE_TIMEOUT@@": UPSTREAM_KEEPALIVE_TIMEOUT,
        "@@CSP@@": CONTENT_SECURITY_POLICY,
        "@@SECURITY_HEADERS@@": security,
        "@@WS_LIMIT_CONN@@": f"      limit_conn cellwar_ws {cap};" if cap > 0 else "",
    }
    text = TEMPLATE.read_text()
    for key, value in fields.items():
        text = text.replace(key, value)
    if user:
        text = text.replace("worker_processes ", f"user {user};\nworker_processes ", 1)
    return text


def prepare_run_dir(run_dir: str | Path) -> Path:
    """Create ``run_dir`` and the temporary folders the rendered config names."""
    run = Path(run_dir)
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    return run


def main(argv: Sequence[str] | None = None) -> int:
    """Print a rendered config (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m deploy.nginx", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:8000")
    parser.add_argument("--gateway", action="append", default=[], help="host:port (repeat)")
    parser.add_argument(
        "--static-dir", default=str(Path(__file__).resolve().parent.parent / "client" / "web")
    )
    parser.add_argument("--run-dir", default="/tmp/cellwar-nginx")
    args = parser.parse_args(argv)
    print(
        render_config(
            listen=args.listen,
            gateways=args.gateway or ["127.0.0.1:8001"],
            static_dir=args.static_dir,
            run_dir=args.run_dir,
        ),
        end="",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
