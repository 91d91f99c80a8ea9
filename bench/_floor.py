"""``python -m bench._floor ROLE ...``: the round trip's hop floor (bench/roundtrip.py).

The same processes and hops as a platform action (docs/architecture/index.md "The layers":
HTTP -> gateway -> gRPC -> session -> gRPC -> engine, then a JetStream append with fsync,
answer back) with no work in them: no rules, no aggregate, no projections. Each hop carries
bytes of the platform's sizes. What this skeleton reaches is the most any implementation of
that shape can reach on this machine with these libraries (FastAPI/uvicorn, grpc.aio,
nats-py), so the round-trip row can be read against it.

Roles:

* ``engine PORT`` — gRPC ``/floor.Engine/Decide``: answers :data:`DECIDE_REPLY_BYTES`;
* ``session PORT ENGINE_TARGET NATS_URL`` — gRPC ``/floor.Session/Act``: calls the
  engine, publishes one event of :data:`EVENT_BYTES` to JetStream (stream ``FLOOR``, file
  storage, with the platform's ``Nats-Msg-Id`` and expected-last-subject-sequence
  headers), waits for the ack, answers :data:`VIEW_BYTES`;
* ``gateway PORT SESSION_TARGET`` — the bare app's ``POST /game/{game_id}/action`` (same
  body model, token and Idempotency-Key dependencies) calling the session.

Every role runs on the event loop the services use (uvloop) with the platform's gRPC
channel options and garbage-collector settings (services/common/heap.py).
"""

from __future__ import annotations

import itertools
import sys

import grpc

DECIDE_REQUEST_BYTES = 2_000  # a 60x60 Life state and a command
DECIDE_REPLY_BYTES = 3_000  # an event, the state after it and one view
EVENT_BYTES = 200  # one recorded placement event
VIEW_BYTES = 800  # the actor's view, as the gateway answers it
STREAM = "FLOOR"


def _identity(b: bytes) -> bytes:
    return b


def _unary(fn) -> grpc.RpcMethodHandler:
    return grpc.unary_unary_rpc_method_handler(
        fn, request_deserializer=_identity, response_serializer=_identity
    )


async def _serve(port: int, service: str, methods: dict[str, grpc.RpcMethodHandler]) -> None:
    from services.common import heap
    from services.common.grpcutil import GRPC_OPTIONS

    server = grpc.aio.server(options=GRPC_OPTIONS)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, methods),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    heap.settle()
    await server.wait_for_termination()


async def engine_role(port: int) -> None:
    """Answer every Decide with a fixed reply of the platform's size."""
    reply = b"e" * DECIDE_REPLY_BYTES

    async def decide(request: bytes, context) -> bytes:
        return reply

    await _serve(port, "floor.Engine", {"Decide": _unary(decide)})


async def session_role(port: int, engine_target: str, nats_url: str) -> None:
    """Engine call, JetStream append (one event, fsync per the server's config), answer."""
    import nats
    from nats.js import api

    from services.common.grpcutil import GRPC_OPTIONS

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(
        api.StreamConfig(
            name=STREAM,
            subjects=["floor.*.events"],
            storage=api.StorageType.FILE,
            duplicate_window=120.0,
            allow_direct=True,
        )
    )
    channel = grpc.aio.insecure_channel(engine_target, options=GRPC_OPTIONS)
    decide = channel.unary_unary(
        "/floor.Engine/Decide", request_serializer=_identity, response_deserializer=_identity
    )
    request = b"r" * DECIDE_REQUEST_BYTES
    event = b"v" * EVENT_BYTES
    view = b"w" * VIEW_BYTES
    tails: dict[bytes, int] = {}
    ids = itertools.count()

    async def act(game: bytes, context) -> bytes:
        await decide(request, timeout=10.0)
        subject = f"floor.{game.decode()}.events"
        headers = {
            "Nats-Expected-Last-Subject-Sequence": str(tails.get(game, 0)),
            "Nats-Msg-Id": f"{game.decode()}:{next(ids)}",
        }
        ack = await js.publish(subject, event, timeout=5.0, headers=headers)
        tails[game] = ack.seq
        return view

    await _serve(port, "floor.Session", {"Act": _unary(act)})


def gateway_app(session_target: str):
    """The bare app (:mod:`bench._bare`) whose answer comes from the skeleton session."""
    from bench._bare import create_app
    from services.common.grpcutil import GRPC_OPTIONS
    from services.common.settings import Settings
    from services.common.signing_key import resolve_secret

    calls: dict[str, grpc.aio.UnaryUnaryMultiCallable] = {}

    async def answer(game_id: str) -> bytes:
        if "act" not in calls:  # on the server's loop
            channel = grpc.aio.insecure_channel(session_target, options=GRPC_OPTIONS)
            calls["act"] = channel.unary_unary(
                "/floor.Session/Act", request_serializer=_identity, response_deserializer=_identity
            )
        return await calls["act"](game_id.encode(), timeout=10.0)

    settings = Settings()
    return create_app(resolve_secret(settings.secret, settings.data_dir), answer)


def main() -> int:
    """Run one role until killed."""
    from services.common import loop

    role, args = sys.argv[1], sys.argv[2:]
    if role == "gateway":
        import uvicorn

        from services.common import heap

        app = gateway_app(args[1])
        heap.settle()
        uvicorn.run(
            app,
            host="127.0.0.1",
            port=int(args[0]),
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        return 0
    if role == "engine":
        loop.run(engine_role(int(args[0])), "auto")
    elif role == "session":
        loop.run(session_role(int(args[0]), args[1], args[2]), "auto")
    else:
        print(f"unknown role {role!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
