"""Access log (structlog) and Prometheus metrics of every HTTP request, as one ASGI middleware.

Requests are labelled by route template (``/game/{game_id}/action``), never by raw
path, so the metrics' cardinality stays bounded. Each app has its own registry (tests
build several apps in one process).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("gateway.access")

#: Latency buckets (seconds): the action round trip targets p99 ≤ 50 ms (docs/benchmarks.md).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The gateway's Prometheus metrics in their own registry.

    Attributes:
        registry: what /metrics exports.
        requests: ``cellwar_http_requests_total{method, route, status}``.
        latency: ``cellwar_http_request_duration_seconds{method, route}`` (seconds).
        ws_messages: ``cellwar_ws_messages_total{type}`` messages pushed to WebSocket viewers.
        ws_dropped: ``cellwar_ws_frames_dropped_total`` view frames skipped for slow
            viewers (gateway/fanout.py).
        ws_upstreams: ``cellwar_ws_upstream_watches`` Session.Watch calls open now, one
            per (game, player) watched through this gateway.
        ws_inbound: ``cellwar_ws_inbound_messages_total`` client messages passed to a
            WebSocket route (gateway/limits.py ``WebSocketLimits``).
        ws_limit_closes: ``cellwar_ws_limit_closes_total{reason}`` sockets closed with
            1008 by a limit (``RATE_LIMITED``, ``PAYLOAD_TOO_LARGE``).
        ws_refused: ``cellwar_ws_refused_total`` sockets refused past the per-address cap.
        ws_commands: ``cellwar_ws_commands_total{type, status}`` command frames of the
            game stream answered (``type``: ``action`` / ``end_turn`` / ``valid_actions``
            / ``invalid``; ``status``: 200 for a result or an answer, else the error
            frame's status).
        ws_command_latency: ``cellwar_ws_command_duration_seconds{type}`` from a command
            frame's turn in its socket's order to its reply sent (seconds).
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "cellwar_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "cellwar_http_request_duration_seconds",
            "HTTP request latency in seconds, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ws_messages = Counter(
            "cellwar_ws_messages",
            "Messages pushed to WebSocket viewers, by type.",
            ["type"],
            registry=self.registry,
        )
        self.ws_dropped = Counter(
            "cellwar_ws_frames_dropped",
            "View frames skipped for WebSocket viewers that fell behind.",
            registry=self.registry,
        )
        self.ws_inbound = Counter(
            "cellwar_ws_inbound_messages",
            "Client messages passed to a WebSocket route (within the limits).",
            registry=self.registry,
        )
        self.ws_limit_closes = Counter(
            "cellwar_ws_limit_closes",
            "WebSockets closed with 1008 by a limit, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.ws_refused = Counter(
            "cellwar_ws_refused",
            "WebSockets refused before the handshake: too many open from one address.",
            registry=self.registry,
        )
        self.ws_commands = Counter(
            "cellwar_ws_commands",
            "Command frames of the game stream answered, by type and status.",
            ["type", "status"],
            registry=self.registry,
        )
        self.ws_command_latency = Histogram(
            "cellwar_ws_command_duration_seconds",
            "Game stream command latency in seconds (session call to reply sent), by type.",
            ["type"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ws_upstreams = Gauge(
            "cellwar_ws_upstream_watches",
            "Session.Watch calls open now (one per game and player watched).",
            registry=self.registry,
        )


def route_template(scope: Scope, status: int = 200) -> str:
    """The matched route's path template; ``"static"`` for a file of the web client,
    ``"unmatched"`` for anything else (unknown path, wrong method)."""
    route = scope.get("route")
    if route is None:
        return "static" if status < 400 else "unmatched"
    if isinstance(route, Mount):
        return "static"
    return str(getattr(route, "path", "unmatched"))


class AccessLogMiddleware:
    """Log one structlog line per HTTP request (method, route, path, status, duration,
    game_id, player_id) and update the metrics. WebSockets pass through untouched."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status_holder: dict[str, Any] = {"status": 500}
        request_id = uuid.uuid4().hex[:16]
        structlog.contextvars.bind_contextvars(request_id=request_id)

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            elapsed = time.perf_counter() - start
            status = status_holder["status"]
            route = route_template(scope, status)
            method = scope.get("method", "GET")
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(elapsed)
            state = scope.get("state") or {}
            fields: dict[str, Any] = {
                "method": method,
                "path": scope.get("path"),
                "route": route,
                "status": status,
                "duration_ms": round(elapsed * 1000, 2),
            }
            game_id = state.get("game_id") or (scope.get("path_params") or {}).get("game_id")
            if game_id:
                fields["game_id"] = game_id
            if state.get("player_id"):
                fields["player_id"] = state["player_id"]
            if state.get("limited"):
                # Refused by gateway/limits.py: a refused flood must not become a log
                # flood (counted in the metrics, logged at debug).
                log.debug("http_request", **fields)
            elif route not in ("/healthz", "/readyz", "/metrics"):
                log.info("http_request", **fields)
            structlog.contextvars.unbind_contextvars("request_id", "game_id", "player_id")
