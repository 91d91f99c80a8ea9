"""Matchmaking ticket tokens: ``POST /matchmaking/tickets`` answers one, and only its
holder may read, watch or cancel the ticket.

A token is ``itsdangerous.URLSafeTimedSerializer(secret, salt="cellwar-ticket")`` over
``{"t": ticket_id}`` with its issue time, so any gateway replica with the same
``CELLWAR_SECRET`` checks it and neither a player token nor a profile token passes for
one (other salts). It expires with its ticket: a ticket searches ``CELLWAR_TICKET_TTL_S``
(300 s) at most, and its holder has :data:`TICKET_TOKEN_GRACE_S` more to read the final
status; an older token is 401 ``TOKEN_EXPIRED`` (the undated tokens of earlier versions
too).

The player token of a matched ticket's seat is signed by the gateway (the
:class:`gateway.tokens.TokenSigner`) when the ticket's holder reads it: the matchmaker
only knows ``(game_id, player_id)`` and never holds the signing key. It is dated at the
ticket's creation, so every read of the ticket, through any gateway, answers the same one
token for the seat (:func:`seat_token`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer

from gateway.errors import ApiError, Code

#: itsdangerous salt of ticket tokens.
TICKET_TOKEN_SALT = "cellwar-ticket"
#: Seconds a ticket token outlives the longest search, to read the final status.
TICKET_TOKEN_GRACE_S = 120.0


class TicketSigner:
    """Issues and verifies ticket tokens with one secret.

    Args:
        secret: the HMAC key.
        ticket_ttl_s: the longest search of a ticket (seconds); a token is valid for it
            plus :data:`TICKET_TOKEN_GRACE_S`.
        clock: Unix seconds (tests pass a fake one).
    """

    def __init__(
        self, secret: str, ticket_ttl_s: float = 300.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.max_age_s = ticket_ttl_s + TICKET_TOKEN_GRACE_S
        self.clock = clock
        self._serializer = URLSafeTimedSerializer(secret, salt=TICKET_TOKEN_SALT)

    def issue(self, ticket_id: str) -> str:
        """A URL-safe token for ``ticket_id``, dated now."""
        return str(self._serializer.dumps({"t": ticket_id}))

    def verify(self, token: str | None, ticket_id: str) -> str:
        """The ticket id of ``token`` for a request on ``ticket_id``.

        Raises:
            ApiError: 401 ``UNAUTHORIZED`` (missing, garbled or forged token), 401
                ``TOKEN_EXPIRED`` (older than the ticket can live, or undated), 403
                ``FORBIDDEN`` (a valid token of another ticket).
        """
        if not token:
            raise ApiError(401, "UNAUTHORIZED", "a ticket token is required (Authorization: Bearer <token>)")
        try:
            data, issued = self._serializer.loads(token, return_timestamp=True)
        except BadSignature as exc:
            raise ApiError(401, "UNAUTHORIZED", "the ticket token is not valid") from exc
        if not isinstance(data, dict) or not isinstance(data.get("t"), str) or not data["t"]:
            raise ApiError(401, "UNAUTHORIZED", "the ticket token is not valid")
        if self.clock() - issued.timestamp() > self.max_age_s:
            raise ApiError(
                401, Code.TOKEN_EXPIRED,
                f"the ticket token has expired with its ticket (older than {self.max_age_s:g} s)",
            )
        if data["t"] != ticket_id:
            raise ApiError(403, "FORBIDDEN", "the ticket token belongs to another ticket")
        return data["t"]


def seat_token(signer: Any, game_id: str, player_id: int, created_at: float) -> str:
    """The one player token of a matched ticket's seat: signed by ``signer``
    (:class:`gateway.tokens.TokenSigner`) and dated at the ticket's creation
    ``created_at`` (Unix seconds), so it is the same on every read; a ticket without a
    creation time gets one dated now."""
    if created_at > 0:
        return signer.issue(game_id, player_id, issued_at=int(created_at))
    return signer.issue(game_id, player_id)
