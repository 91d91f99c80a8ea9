"""Player tokens: signed, bound to one game and one player, checkable by any replica.

A token is ``itsdangerous.URLSafeSerializer(secret, salt="cellwar-player")`` over
``{"g": game_id, "p": player_id}`` (HMAC-SHA1 by itsdangerous' default signer), so any
gateway replica holding the same ``CELLWAR_SECRET`` verifies it without shared state.
Tokens do not expire: a seat belongs to its player for the life of the game.
"""

from __future__ import annotations

from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeSerializer

from gateway.errors import ApiError

#: itsdangerous salt: separates player tokens from any other use of the same secret.
TOKEN_SALT = "cellwar-player"


@dataclass(frozen=True)
class Player:
    """The caller of a request, from a verified token.

    Attributes:
        game_id: the game the token was issued for.
        player_id: the seat (ids start at 1).
    """

    game_id: str
    player_id: int


class TokenSigner:
    """Issues and verifies player tokens with one secret."""

    def __init__(self, secret: str) -> None:
        self._serializer = URLSafeSerializer(secret, salt=TOKEN_SALT)

    def issue(self, game_id: str, player_id: int) -> str:
        """A URL-safe token for ``player_id`` in ``game_id``."""
        return str(self._serializer.dumps({"g": game_id, "p": int(player_id)}))

    def player_of(self, token: str) -> Player | None:
        """The player of a well-signed ``token`` of any game, None for anything else
        (used to key the rate limit; a route still checks the game with :meth:`verify`)."""
        try:
            data = self._serializer.loads(token)
        except BadSignature:
            return None
        if (
            isinstance(data, dict)
            and isinstance(data.get("g"), str)
            and isinstance(data.get("p"), int)
            and data["p"] >= 1
        ):
            return Player(game_id=data["g"], player_id=data["p"])
        return None

    def verify(self, token: str | None, game_id: str) -> Player:
        """The player of ``token`` for a request on ``game_id``.

        Raises:
            ApiError: 401 ``UNAUTHORIZED`` when the token is missing, garbled or forged;
                403 ``FORBIDDEN`` when it is valid but was issued for another game.
        """
        if not token:
            raise ApiError(401, "UNAUTHORIZED", "a player token is required (Authorization: Bearer <token>)")
        try:
            data = self._serializer.loads(token)
        except BadSignature as exc:
            raise ApiError(401, "UNAUTHORIZED", "the player token is not valid") from exc
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("g"), str)
            or not isinstance(data.get("p"), int)
            or data["p"] < 1
        ):
            raise ApiError(401, "UNAUTHORIZED", "the player token is not valid")
        if data["g"] != game_id:
            raise ApiError(403, "FORBIDDEN", "the player token belongs to another game")
        return Player(game_id=data["g"], player_id=data["p"])


#: itsdangerous salt of profile tokens: a player token is never a valid profile token.
PROFILE_TOKEN_SALT = "cellwar-profile"


class ProfileSigner:
    """Issues and verifies campaign profile tokens (``{"pr": profile_id}`` signed with the
    same secret as player tokens, salt :data:`PROFILE_TOKEN_SALT`). They do not expire:
    the token is the profile."""

    def __init__(self, secret: str) -> None:
        self._serializer = URLSafeSerializer(secret, salt=PROFILE_TOKEN_SALT)

    def issue(self, profile_id: str) -> str:
        """A URL-safe token for ``profile_id``."""
        return str(self._serializer.dumps({"pr": profile_id}))

    def verify(self, token: str | None) -> str:
        """The profile id of ``token``.

        Raises:
            ApiError: 401 ``UNAUTHORIZED`` when the token is missing, garbled or forged.
        """
        if not token:
            raise ApiError(401, "UNAUTHORIZED", "a profile token is required")
        try:
            data = self._serializer.loads(token)
        except BadSignature as exc:
            raise ApiError(401, "UNAUTHORIZED", "the profile token is not valid") from exc
        if not isinstance(data, dict) or not isinstance(data.get("pr"), str) or not data["pr"]:
            raise ApiError(401, "UNAUTHORIZED", "the profile token is not valid")
        return data["pr"]
