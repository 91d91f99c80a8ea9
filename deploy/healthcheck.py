"""Container health check of the CellWar images (``HEALTHCHECK`` of deploy/Dockerfile).

``python -m deploy.healthcheck`` finds which service this container runs (the
``python -m <module>`` among its processes) and probes it:

==========================  ====================================================
``services.engine``         gRPC health ``Check`` on the port of ``CELLWAR_ENGINE_ADDR``
``services.session``        gRPC health ``Check`` on the port of ``CELLWAR_SESSION_ADDR``
``services.matchmaker``     gRPC health ``Check`` on the port of ``CELLWAR_MATCHMAKER_ADDR``
``gateway``                 ``GET /healthz`` on ``CELLWAR_HTTP_PORT``
==========================  ====================================================

A new service adds a row to :data:`PROBES`. Explicit probes skip the detection:
``--grpc HOST:PORT`` or ``--http URL`` (the nginx image uses ``--http``). Exit status 0
when the probe answers SERVING / 2xx within ``--timeout`` seconds (default 10: a service busy with games may take seconds to
answer; the images probe every 15 s with a 15 s limit, so a busy host does not flap them), else 1
with the reason on stderr. Only the standard library is imported unless a gRPC probe
runs (the nginx image has no grpc).
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path


def _port(env: str, default: str) -> int:
    addr = os.environ.get(env, default)
    return int(addr.rpartition(":")[2])


def probe_grpc(target: str, timeout: float) -> str | None:
    """None when the gRPC health service of ``target`` answers SERVING, else the reason."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout
            )
        except grpc.RpcError as exc:
            return f"gRPC health of {target}: {exc.code().name}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"gRPC health of {target}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def probe_http(url: str, timeout: float) -> str | None:
    """None when ``GET url`` answers 2xx, else the reason."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - local URL
            if 200 <= response.status < 300:
                return None
            return f"GET {url}: HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return f"GET {url}: HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return f"GET {url}: {exc}"


#: module run by the container → probe (timeout in seconds → None or the reason).
PROBES: dict[str, Callable[[float], str | None]] = {
    "services.engine": lambda t: probe_grpc(
        f"127.0.0.1:{_port('CELLWAR_ENGINE_ADDR', '127.0.0.1:50051')}", t
    ),
    "services.session": lambda t: probe_grpc(
        f"127.0.0.1:{_port('CELLWAR_SESSION_ADDR', '127.0.0.1:50052')}", t
    ),
    "services.matchmaker": lambda t: probe_grpc(
        f"127.0.0.1:{_port('CELLWAR_MATCHMAKER_ADDR', '127.0.0.1:50053')}", t
    ),
    "gateway": lambda t: probe_http(
        f"http://127.0.0.1:{os.environ.get('CELLWAR_HTTP_PORT', '8000')}/healthz", t
    ),
}


def running_module(proc: Path = Path("/proc")) -> str | None:
    """The ``python -m <module>`` of :data:`PROBES` that a process of this container
    runs (read from ``/proc/<pid>/cmdline``), or None."""
    for entry in sorted(proc.iterdir(), key=lambda p: (len(p.name), p.name)):
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for i, arg in enumerate(argv[:-1]):
            if arg == b"-m":
                module = argv[i + 1].decode(errors="replace")
                if module in PROBES:
                    return module
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probe; exit status 0 healthy, 1 not (reason on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m deploy.healthcheck", description=__doc__.splitlines()[0])
    parser.add_argument("--grpc", metavar="HOST:PORT", help="probe this gRPC health service")
    parser.add_argument("--http", metavar="URL", help="probe this URL (2xx = healthy)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds (default %(default)s)")
    args = parser.parse_args(argv)
    if args.grpc:
        reason = probe_grpc(args.grpc, args.timeout)
    elif args.http:
        reason = probe_http(args.http, args.timeout)
    else:
        module = running_module()
        if module is None:
            print("healthcheck: no known CellWar service runs here "
                  f"(known: {', '.join(sorted(PROBES))})", file=sys.stderr)
            return 1
        reason = PROBES[module](args.timeout)
    if reason:
        print(f"healthcheck: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
