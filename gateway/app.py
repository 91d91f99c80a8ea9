"""The one place that wires the gateway: :func:`create_app`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import structlog
import swagger_ui_bundle
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import BaseRoute
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from cellwar.v1 import matchmaker_pb2_grpc
from gateway.deps import session_client, session_stub
from gateway.errors import install_error_handlers
from gateway.fanout import FanoutHub
from gateway.headers import SecurityHeaders, inline_script_policy
from gateway.limits import (
    BodyReadTimeout,
    BodySizeLimit,
    RateLimit,
    WebSocketLimits,
    command_buckets,
)
from gateway.observability import AccessLogMiddleware, Metrics
from gateway.redact import install_log_redaction
from gateway.routes import bots, campaign, games, health, matchmaking, patterns, replay, stream
from gateway.session_stub import close_streams
from gateway.shared_limits import SharedWindows
from gateway.ticket_tokens import TicketSigner
from gateway.tokens import ProfileSigner, TokenSigner
from gateway.web import WebFiles
from services.common.grpcutil import GRPC_OPTIONS
from services.common.settings import Settings
from services.common.signing_key import resolve_secret

log = structlog.get_logger("gateway")

#: The browser client shipped with the package (client/web).
PACKAGED_WEB_DIR = Path(__file__).resolve().parent.parent / "client" / "web"
#: Swagger UI's files (PyPI ``swagger-ui-bundle``), served at :data:`DOCS_ASSETS`: /docs
#: works offline, without a CDN.
SWAGGER_UI_DIR = Path(swagger_ui_bundle.swagger_ui_path)
#: URL prefix of the Swagger UI files.
DOCS_ASSETS = "/_docs"

DESCRIPTION = """
REST + WebSocket API of CellWar: territorial Game of Life (`life`), its campaign
(`campaign`) and the fog-of-war strategy game (`cellwar`).

1. `POST /game/create` → `game_id`; 2. `POST /game/{id}/join` → `player_token`;
3. send `Authorization: Bearer <token>` to `/state`, `/action`, `/end_turn`, ...;
4. watch `WS /game/{id}/stream?token=…` for views after every change.

Errors are `{"error": {"code", "message"}}`: 401 bad token, 403 token of another game,
404 unknown game, 409 a rule refuses (`NOT_YOUR_TURN`, `OUT_OF_ZONE`, ...), 422 a body
that does not fit the schema (`MALFORMED`), 429 rate limited, 503 a backend is down.
413 a body above the size limit (`PAYLOAD_TOO_LARGE`).
A `POST` with an `Idempotency-Key` header is applied once however often it is retried;
a key belongs to one game and one player, and the same key with another body is refused
(422 `IDEMPOTENCY_KEY_REUSED`).
"""


def _web_dir(settings: Settings) -> Path | None:
    """The folder served at ``/``: ``settings.web_dir`` or the packaged client; None if absent."""
    path = Path(settings.web_dir) if settings.web_dir else PACKAGED_WEB_DIR
    return path if path.is_dir() else None


def create_app(
    settings: Settings,
    session_channel: grpc.aio.Channel | None = None,
    matchmaker_channel: grpc.aio.Channel | None = None,
) -> FastAPI:
    """Build the gateway app.

    Args:
        settings: ``session_addr`` (used when no channel is given), ``secret`` (token
            signing key; unset: the one kept in ``data_dir``), ``token_max_age_s``,
            ``trusted_proxies``, the limits, ``web_dir`` (browser client folder; empty =
            ``client/web``).
        session_channel: a grpc.aio channel to the session service; when None the
            lifespan opens one to ``settings.session_addr`` and closes it at shutdown.
        matchmaker_channel: the same for the matchmaker (``settings.matchmaker_addr``).

    Returns:
        The FastAPI app: API routes, ``/docs`` (Swagger UI served from ``/_docs``, no
        CDN; no ReDoc), then the browser client mounted at ``/``. Middlewares, outermost
        first: forwarded headers of trusted proxies (only when ``trusted_proxies`` is
        set; serve the app with uvicorn's own ``proxy_headers`` off), security headers
        (gateway/headers.py), access log, WebSocket limits, rate limits, body read
        timeout, body size limit (docs/security.md). Log records of uvicorn and websockets are redacted
        (gateway/redact.py).

    Raises:
        services.common.signing_key.SecretError: the secret is a known default, or the
            data folder's secret file is unusable.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = session_channel is None
        if owned:  # one channel per session instance, calls moved off a silent one
            app.state.session, channels = session_client(settings)
        else:
            app.state.session, channels = session_stub(session_channel, settings), [session_channel]
        channel = channels[0]
        app.state.session_channel = channel
        # One upstream Session.Watch per (game, player) shared by all sockets (docs/architecture/gateway.md).
        app.state.fanout = FanoutHub(app.state.session, app.state.metrics)
        mm_owned = matchmaker_channel is None
        mm_channel = (
            grpc.aio.insecure_channel(settings.matchmaker_addr, options=GRPC_OPTIONS)
            if mm_owned
            else matchmaker_channel
        )
        app.state.matchmaker = matchmaker_pb2_grpc.MatchmakerStub(mm_channel)
        app.state.bots_http = bots.runner_client()  # one client to the bot runner
        if app.state.shared_windows is not None:
            app.state.shared_windows.start()
        log.info("gateway_started", session_addr=settings.session_addr if owned else "given")
        try:
            yield
        finally:
            await app.state.fanout.aclose()
            await close_streams(app.state.session)  # before the channels close
            await app.state.bots_http.aclose()
            if app.state.shared_windows is not None:
                await app.state.shared_windows.close()
            if owned:
                for each in channels:
                    await each.close(grace=1.0)
            if mm_owned:
                await mm_channel.close(grace=1.0)
            log.info("gateway_stopped")

    app = FastAPI(
        title="CellWar",
        version="1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_tags=[
            {"name": "games", "description": "Create, join and play games; event log and replay."},
            {"name": "stream", "description": "WebSocket views (documented in the description)."},
            {
                "name": "replay",
                "description": "Fork a game at an event; import a game from its log (JSON Lines).",
            },
            {"name": "library", "description": "The Life stamp library (pattern catalogue)."},
            {
                "name": "campaign",
                "description": "Campaign levels and profiles (progress kept server-side).",
            },
            {
                "name": "matchmaking",
                "description": "Tickets, queue statistics, leaderboard (ratings: OpenSkill).",
            },
            {"name": "operations", "description": "Liveness, readiness, Prometheus metrics."},
        ],
    )
    secret = resolve_secret(settings.secret, settings.data_dir)
    install_log_redaction()
    app.state.settings = settings
    app.state.signer = TokenSigner(secret, max_age_s=settings.token_max_age_s)
    app.state.profile_signer = ProfileSigner(secret)
    app.state.ticket_signer = TicketSigner(secret, ticket_ttl_s=settings.ticket_ttl_s)
    app.state.metrics = Metrics()
    app.state.shared_windows = SharedWindows(settings) if settings.shared_limits else None
    # One command bucket per seat for its REST commands and its stream's command frames.
    app.state.command_buckets = command_buckets(settings.rate_limit_per_s, settings.rate_limit_burst)
    install_error_handlers(app)
    # add_middleware wraps: the last added runs first.
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(BodyReadTimeout, timeout_s=settings.body_read_timeout_s)
    app.add_middleware(
        RateLimit,
        rate=settings.rate_limit_per_s,
        burst=settings.rate_limit_burst,
        signer=app.state.signer,
        create_per_min=settings.create_limit_per_min,
        join_per_min=settings.join_limit_per_min,
        read_rate=settings.read_limit_per_s,
        read_burst=settings.read_limit_burst,
        read_concurrency=settings.read_concurrency,
        read_global_per_s=settings.read_global_per_s,
        shared=app.state.shared_windows,
        buckets=app.state.command_buckets,
    )
    app.add_middleware(
        WebSocketLimits,
        max_message_bytes=settings.ws_max_message_bytes,
        messages_per_s=settings.ws_messages_per_s,
        burst=settings.ws_message_burst,
        max_per_address=settings.ws_max_per_address,
        metrics=app.state.metrics,
    )
    app.add_middleware(AccessLogMiddleware, metrics=app.state.metrics)
    app.add_middleware(SecurityHeaders)
    if settings.trusted_proxies.strip():
        # uvicorn's middleware: with the peer in the list, the client becomes the rightmost
        # X-Forwarded-For entry that is not a trusted proxy (tests/api/test_limits.py).
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)
    app.mount(DOCS_ASSETS, StaticFiles(directory=SWAGGER_UI_DIR), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        """Swagger UI of the API, its JS and CSS served by this gateway."""
        page = get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="CellWar API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
        )
        # Swagger UI starts from one inline script: allowed by its hash, nothing else.
        page.headers["Content-Security-Policy"] = inline_script_policy(bytes(page.body).decode())
        return page

    routers = (
        health.router,
        games.router,
        replay.router,
        stream.router,
        patterns.router,
        campaign.router,
        matchmaking.router,
        bots.router,
    )
    for router in routers:
        app.include_router(router)
    web = _web_dir(settings)
    if web is not None:
        # Mounted last: every API route above wins over a file of the same path, and a
        # path of an API route with another method is that route's 405 (gateway/web.py).
        def api_routes() -> list[BaseRoute]:
            return [*app.router.routes, *(route for r in routers for route in r.routes)]

        app.mount("/", WebFiles(directory=web, html=True, api_routes=api_routes), name="web")
    return app
