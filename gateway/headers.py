"""Security headers on every HTTP answer of the gateway (OWASP Secure Headers Project).

=================================  ================================================
header                             value
=================================  ================================================
``Content-Security-Policy``        :data:`CONTENT_SECURITY_POLICY`: scripts, styles,
                                   fetches and sockets from this origin only, no
                                   inline script, no plugin, no framing
``X-Frame-Options``                ``DENY`` (browsers without ``frame-ancestors``)
``X-Content-Type-Options``         ``nosniff``
``Referrer-Policy``                ``no-referrer`` (a game's URL never leaves)
=================================  ================================================

A route may set its own ``Content-Security-Policy`` (``/docs``: Swagger UI's one inline
script by its hash); the middleware only adds what the answer does not already carry.
nginx in front sends the same set (deploy/nginx.conf), on its own answers too.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # no import at run time: deploy/nginx.py reads the values in the nginx image
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The browser client's policy: everything from this origin ('self' covers ws:/wss: of
#: the same host, CSP Level 3), images also as data: URLs (the favicon, canvas
#: snapshots); no inline script or style element, no eval, no plugin, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)

#: Every header and its value, as ASGI (lower-case bytes) pairs.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


def inline_script_policy(html: str) -> str:
    """A policy for a page whose inline ``<script>`` elements (without ``src``) are
    allowed by their SHA-256 (CSP Level 2 hash sources); its styles may be inline too
    (Swagger UI sets them). Used by ``/docs``."""
    hashes = []
    rest = html
    while "<script>" in rest:
        _, _, rest = rest.partition("<script>")
        body, _, rest = rest.partition("</script>")
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        hashes.append(f"'sha256-{digest}'")
    return (
        f"default-src 'self'; script-src 'self' {' '.join(hashes)}; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    )


class SecurityHeaders:
    """ASGI middleware: add :data:`SECURITY_HEADERS` to every HTTP answer (and to a
    WebSocket refused before its handshake) that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Wrap ``send`` to complete the answer's headers."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(pair for pair in SECURITY_HEADERS if pair[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
