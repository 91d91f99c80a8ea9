"""Liveness, readiness and Prometheus metrics (docs/hosting.md)."""

from __future__ import annotations

import hmac
import ipaddress

import grpc
import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from cellwar.v1.codes import ErrorCode
from gateway.errors import SESSION_UNREACHABLE, error_body
from gateway.responses import errors
from gateway.schemas import Status

log = structlog.get_logger("gateway.health")

router = APIRouter(tags=["operations"])

#: Deadline of the readiness probe's health check (seconds).
READY_TIMEOUT_S = 2.0


@router.get("/healthz", response_model=Status, summary="Liveness: the gateway process answers")
async def healthz() -> Status:
    """Always 200 ``{"status": "ok"}`` while the process serves HTTP."""
    return Status(status="ok")


@router.get(
    "/readyz",
    response_model=Status,
    responses=errors(503),
    summary="Readiness: the session service answers SERVING",
)
async def readyz(request: Request) -> Response:
    """200 ``{"status": "ready"}`` when the session's gRPC health check answers SERVING
    (the session itself is ready only with NATS and the engine reachable); else 503
    ``UNAVAILABLE``."""
    stub = health_pb2_grpc.HealthStub(request.app.state.session_channel)
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=READY_TIMEOUT_S)
    except grpc.RpcError as exc:
        # gRPC's text names the session's address: logged, not answered (/readyz is public)
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        log.info("session_unreachable", rpc="Health.Check", detail=detail)
        return JSONResponse(error_body("UNAVAILABLE", SESSION_UNREACHABLE), status_code=503)
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        status_name = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return JSONResponse(
            error_body("UNAVAILABLE", f"session service is {status_name}"), status_code=503
        )
    return JSONResponse({"status": "ready"})


def may_read_metrics(request: Request, token: str) -> bool:
    """Whether ``request`` may read ``/metrics``: it sends ``Authorization: Bearer
    <token>`` (``CELLWAR_METRICS_TOKEN``, when set), or comes from a loopback address.

    The metrics are for operators, not players (everything a player can read must be a
    function of its own information, docs/architecture/contracts.md): their counters are
    the gateway's totals, so on a quiet server a player reading them before and after an opponent's
    turn would count the opponent's requests, i.e. its hidden units' moves. Behind a
    proxy the client address is the forwarded one (uvicorn's proxy headers), so remote
    players are refused there too; Prometheus scrapes each gateway with the token.
    """
    if token:
        scheme, _, given = (request.headers.get("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@router.get(
    "/metrics",
    summary="Prometheus metrics (operators)",
    response_class=Response,
    responses=errors(403),
)
async def metrics(request: Request) -> Response:
    """Request counter and latency histogram by route template and status, text format;
    403 ``FORBIDDEN`` unless :func:`may_read_metrics`."""
    if not may_read_metrics(request, request.app.state.settings.metrics_token):
        return JSONResponse(
            error_body(
                ErrorCode.FORBIDDEN,
                "metrics are for operators: send Authorization: Bearer <CELLWAR_METRICS_TOKEN>",
            ),
            status_code=403,
        )
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
