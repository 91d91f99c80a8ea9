"""Every gRPC server answers health checks and reflection."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


async def _services(target: str) -> set[str]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for reply in stub.ServerReflectionInfo(iter([request])):
            return {s.name for s in reply.list_services_response.service}
    return set()


async def _health(target: str, service: str) -> int:
    async with grpc.aio.insecure_channel(target) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service)
        )
        return reply.status


@pytest.mark.parametrize(
    ("which", "service"), [("engine", "cellwar.v1.Engine"), ("session", "cellwar.v1.Session")]
)
async def test_server_reports_serving_and_lists_its_services(stack, which, service):
    target = stack.engine_target if which == "engine" else stack.session_target
    for name in ("", service):
        assert await _health(target, name) == health_pb2.HealthCheckResponse.SERVING
    assert {service, "grpc.health.v1.Health"} <= await _services(target)
