"""The gateway's session client over several instances (services/common/grpcutil.py
``FailoverStub``, gateway/deps.py ``session_client``; docs/faults.md): a call to an
instance that is paused (SIGSTOP: its port accepts, nothing answers) moves to the next
instance once the first neither answers within ``failover_s`` nor its health check; the
paused one is asked last for a while. Real gRPC servers in subprocesses on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.deps import session_client
from services.common.grpcutil import FailoverStub
from services.common.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

SERVER = """
import asyncio, sys
import grpc
from grpc_health.v1 import health, health_pb2_grpc

async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""


@pytest.fixture
def servers():
    procs = [
        subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    ports = [int(p.stdout.readline()) for p in procs]
    yield procs, [f"127.0.0.1:{port}" for port in ports]
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
        p.wait(10)
        p.stdout.close()


async def test_cluster_mode_gets_one_channel_per_session_instance():
    # async: grpc.aio channels are made in the running event loop (a sync test has none
    # once an earlier test closed its loop)
    stub, channels = session_client(Settings(session_addr="ipv4:127.0.0.1:1,127.0.0.1:2"))
    assert isinstance(stub, FailoverStub) and len(channels) == 2
    assert stub.names == ["127.0.0.1:1", "127.0.0.1:2"] and stub.failover_s == 1.0
    single, channels = session_client(Settings(session_addr="127.0.0.1:1"))
    assert not isinstance(single, FailoverStub) and len(channels) == 1


async def test_a_call_moves_off_a_paused_instance(servers):
    import grpc

    procs, addrs = servers
    channels = [grpc.aio.insecure_channel(a) for a in addrs]
    stub = FailoverStub(channels, health_pb2_grpc.HealthStub, failover_s=0.5, names=addrs)
    try:
        request = health_pb2.HealthCheckRequest(service="")
        reply = await stub.Check(request, timeout=10)  # both up: the first answers
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert (stub.moves, stub.order()) == (0, [0, 1])

        os.kill(procs[0].pid, signal.SIGSTOP)
        reply = await stub.Check(request, timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert stub.moves == 1 and stub.order() == [1, 0]  # the paused one asked last
        await stub.Check(request, timeout=10)
        assert stub.moves == 1  # the next call went straight to the live instance

        os.kill(procs[0].pid, signal.SIGCONT)
        os.kill(procs[1].pid, signal.SIGKILL)  # a dead one: refused at once, skipped
        procs[1].wait(10)
        stub.suspect_until = [0.0, 0.0]
        stub.suspect(0)  # make the dead one first in line
        reply = await stub.Check(request, timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert stub.moves == 2 and stub.order()[0] == 0
    finally:
        for channel in channels:
            await channel.close()


async def test_no_session_instance_answering_is_503_unavailable_with_retry_after():
    import socket

    import httpx

    from gateway.app import create_app

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    settings = Settings(session_addr=f"ipv4:127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}", secret="s3cret")
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        assert isinstance(app.state.session, FailoverStub)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            response = await client.post(
                "/game/create",
                json={"kind": "life", "config": {"width": 16, "height": 16, "players": 2, "budget": 8}},
                headers={"Idempotency-Key": "k-503"},
            )
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "UNAVAILABLE"
    assert response.headers["Retry-After"] == "1"
    assert app.state.session.moves == 1  # the first refused at once, the second asked too
