"""Matchmaking ticket tokens: ``POST /matchmaking/tickets`` answers one, and only its
holder may read, watch or cancel the ticket.

A token is ``itsdangerous.URLSafeSerializer(secret, salt="cellwar-ticket")`` over
``{"t": ticket_id}``, so any gateway replica with the same ``CELLWAR_SECRET`` checks it
and neither a player token nor a profile token passes for one (other salts).

The player token of a matched ticket's seat is minted by the gateway (the
:class:`gateway.tokens.TokenSigner`) when the ticket's holder reads it: the matchmaker
only knows ``(game_id, player_id)`` and never holds the signing key.
"""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeSerializer

from gateway.errors import ApiError

#: itsdangerous salt of ticket tokens.
TICKET_TOKEN_SALT = "cellwar-ticket"


class TicketSigner:
    """Issues and verifies ticket tokens with one secret."""

    def __init__(self, secret: str) -> None:
        self._serializer = URLSafeSerializer(secret, salt=TICKET_TOKEN_SALT)

    def issue(self, ticket_id: str) -> str:
        """A URL-safe token for ``ticket_id``."""
        return str(self._serializer.dumps({"t": ticket_id}))

    def verify(self, token: str | None, ticket_id: str) -> str:
        """The ticket id of ``token`` for a request on ``ticket_id``.

        Raises:
            ApiError: 401 ``UNAUTHORIZED`` (missing, garbled or forged token), 403
                ``FORBIDDEN`` (a valid token of another ticket).
        """
        if not token:
            raise ApiError(401, "UNAUTHORIZED", "a ticket token is required (Authorization: Bearer <token>)")
        try:
            data = self._serializer.loads(token)
        except BadSignature as exc:
            raise ApiError(401, "UNAUTHORIZED", "the ticket token is not valid") from exc
        if not isinstance(data, dict) or not isinstance(data.get("t"), str) or not data["t"]:
            raise ApiError(401, "UNAUTHORIZED", "the ticket token is not valid")
        if data["t"] != ticket_id:
            raise ApiError(403, "FORBIDDEN", "the ticket token belongs to another ticket")
        return data["t"]
