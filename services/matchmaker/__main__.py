"""``python -m services.matchmaker``: run a matchmaker instance (``CELLWAR_MATCHMAKER_ADDR``,
``CELLWAR_NATS_URL``, ``CELLWAR_SESSION_ADDR``) until SIGINT/SIGTERM.

``python -m services.matchmaker rebuild-ratings``: rebuild the ``RATINGS`` bucket from
the event log once and exit (docs/ratings.md "Rebuilding the ratings"): 0 when done, 1
when NATS or the session did not answer (nothing written then), 2 for an unknown
argument. Logs one ``ratings_rebuilt`` line with the counts."""

from __future__ import annotations

import asyncio
import signal
import sys

import structlog

from services.common import heap, loop, natsconn
from services.common.logging import configure_logging
from services.common.settings import get_settings, settings_or_exit
from services.matchmaker.server import create_server


async def serve() -> None:
    """Serve until a signal, then stop gracefully (``settings.shutdown_grace_s`` seconds)."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="matchmaker")
    log = structlog.get_logger("cellwar.matchmaker")
    _, port, app = await natsconn.or_exit(
        create_server(
            settings.matchmaker_addr,
            nats_url=settings.nats_url,
            session_target=settings.session_addr,
            settings=settings,
        ),
        log,
    )
    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        running.add_signal_handler(sig, stop.set)
    heap.settle()
    log.info("matchmaker_listening", address=settings.matchmaker_addr, port=port)
    await stop.wait()
    log.info("matchmaker_stopping")
    await app.stop()


async def rebuild_ratings() -> int:
    """Rebuild the ratings once (:meth:`RatingsProjection.rebuild`) and mark the bucket
    as projected by the current rule. Returns the exit status (0 done, 1 unavailable)."""
    import grpc
    import nats.errors

    from services.common import grpcutil
    from services.common.errors import ServiceError
    from services.matchmaker import store
    from services.matchmaker.projection import RatingsProjection
    from services.matchmaker.session_port import GrpcSession

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="matchmaker")
    log = structlog.get_logger("cellwar.matchmaker")
    try:
        nc = await natsconn.connect(
            settings.nats_url, name="cellwar-rebuild-ratings", deadline_s=settings.nats_connect_timeout_s
        )
    except natsconn.NatsUnavailable as exc:
        log.error("nats_unavailable", error=str(exc))
        return 1
    channel = grpc.aio.insecure_channel(settings.session_addr, options=grpcutil.GRPC_OPTIONS)
    try:
        js = nc.jetstream(timeout=10.0)
        reps = settings.stream_replicas
        games = store.Bucket(await store.ensure_bucket(js, store.GAMES, replicas=reps))
        ratings = store.Bucket(await store.ensure_bucket(js, store.RATINGS, replicas=reps))
        projection = RatingsProjection(js, games, ratings, GrpcSession(channel), heal_on_start=False)
        await projection.rebuild_now()
        return 0
    except ServiceError as exc:
        log.error("ratings_not_rebuilt", code=exc.code, error=exc.message)
        return 1
    except (TimeoutError, nats.errors.Error) as exc:
        log.error("ratings_not_rebuilt", code="UNAVAILABLE", error=str(exc) or type(exc).__name__)
        return 1
    finally:
        await channel.close()
        await nc.close()


def main() -> None:
    """Entry point (on the loop of ``CELLWAR_EVENT_LOOP``, services/common/loop.py)."""
    args = sys.argv[1:]
    if args and args != ["rebuild-ratings"]:
        sys.stderr.write("usage: python -m services.matchmaker [rebuild-ratings]\n")
        raise SystemExit(2)
    settings = settings_or_exit("python -m services.matchmaker")
    if args:
        raise SystemExit(loop.run(rebuild_ratings(), settings.event_loop))
    loop.run(serve(), settings.event_loop)


if __name__ == "__main__":
    main()
