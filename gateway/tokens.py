"""Player tokens: signed, bound to one game and one player, dated, checkable by any replica.

A token is ``itsdangerous.URLSafeTimedSerializer(secret, salt="cellwar-player")`` over
``{"g": game_id, "p": player_id}`` with its issue time (whole seconds) under the same
HMAC (SHA-1, itsdangerous' default), so any gateway replica holding the same secret
verifies it without shared state. A token older than ``CELLWAR_TOKEN_MAX_AGE_S`` (7 days)
is refused with 401 ``TOKEN_EXPIRED``; ``POST /game/{id}/token`` trades a live token for
a fresh one. Tokens of the earlier, undated shape (before tokens were dated) are refused with
``TOKEN_EXPIRED`` too: their holders join again or, once the game is finished, read it
without a token (a finished game is public).

A signer never holds a publicly known key (services/common/signing_key.py), so a token
signed with one (``dev-secret-change-me``, ``change-me``, ...) never verifies.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadData, TimestampSigner, URLSafeSerializer, URLSafeTimedSerializer

from gateway.errors import ApiError, Code
from services.common.signing_key import check_secret

#: itsdangerous salt: separates player tokens from any other use of the same secret.
TOKEN_SALT = "cellwar-player"
#: Default largest age of a player token (seconds): 7 days.
DEFAULT_TOKEN_MAX_AGE_S = 7 * 24 * 3600.0
#: A token dated this far ahead of the verifier's clock is still taken (seconds): the
#: clocks of two gateway machines differ a little.
CLOCK_SKEW_S = 300.0
#: Well-signed tokens remembered with their payload, so a token sent again is not
#: HMAC-checked and decoded again (each request checks its token twice: rate-limit key,
#: then the route). Their age is checked on every use all the same.
VERIFIED_CACHE_SIZE = 4096


@dataclass(frozen=True)
class Player:
    """The caller of a request, from a verified token.

    Attributes:
        game_id: the game the token was issued for.
        player_id: the seat (ids start at 1).
    """

    game_id: str
    player_id: int


def _signer_with_clock(clock: Callable[[], float]) -> type[TimestampSigner]:
    """A ``TimestampSigner`` class that dates tokens by ``clock`` (seconds since the epoch)."""

    class _ClockSigner(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(clock())

    return _ClockSigner


def _player(data: Any) -> Player | None:
    if (
        isinstance(data, dict)
        and isinstance(data.get("g"), str)
        and type(data.get("p")) is int
        and data["p"] >= 1
    ):
        return Player(game_id=data["g"], player_id=data["p"])
    return None


class TokenSigner:
    """Issues and verifies player tokens with one secret.

    Args:
        secret: the HMAC key; a publicly known default is refused.
        max_age_s: largest accepted age of a token (seconds).
        clock: seconds since the epoch (tests pass a fake one).

    Raises:
        services.common.signing_key.SecretError: ``secret`` is a known default.
    """

    def __init__(
        self,
        secret: str,
        max_age_s: float = DEFAULT_TOKEN_MAX_AGE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_secret(secret, "the token secret")
        self.max_age_s = max_age_s
        self.clock = clock
        self._serializer = URLSafeTimedSerializer(
            secret, salt=TOKEN_SALT, signer=_signer_with_clock(clock)
        )
        self._undated = URLSafeSerializer(secret, salt=TOKEN_SALT)
        self._secret = secret
        self._verified: dict[str, tuple[Player | None, float]] = {}

    def issue(self, game_id: str, player_id: int, issued_at: float | None = None) -> str:
        """A URL-safe token for ``player_id`` in ``game_id``, dated now, or ``issued_at``
        (Unix seconds; whole seconds count): the same arguments give the same token, as
        a matched ticket's seat needs (gateway/routes/matchmaking.py)."""
        payload = {"g": game_id, "p": int(player_id)}
        if issued_at is None:
            return str(self._serializer.dumps(payload))
        dated = URLSafeTimedSerializer(
            self._secret, salt=TOKEN_SALT, signer=_signer_with_clock(lambda: issued_at)
        )
        return str(dated.dumps(payload))

    def _load(self, token: str) -> Player:
        """The player of a well-signed, unexpired token.

        Raises:
            ApiError: 401 ``TOKEN_EXPIRED`` (too old, or undated), 401 ``UNAUTHORIZED``.
        """
        known = self._verified.get(token)
        if known is None:
            try:
                data, issued = self._serializer.loads(token, return_timestamp=True)
            except BadData as exc:
                if self._is_undated(token):
                    raise ApiError(
                        401, Code.TOKEN_EXPIRED, "the player token has no issue time (an old "
                        "token): join again",
                    ) from exc
                raise ApiError(401, Code.UNAUTHORIZED, "the player token is not valid") from exc
            known = (_player(data), issued.timestamp())
            if len(self._verified) >= VERIFIED_CACHE_SIZE:
                self._verified.pop(next(iter(self._verified)))  # the oldest remembered
            self._verified[token] = known
        player, issued_at = known
        age = self.clock() - issued_at
        if age > self.max_age_s:
            raise ApiError(
                401, Code.TOKEN_EXPIRED,
                f"the player token is older than {self.max_age_s:g} s; renew tokens before "
                "they expire (POST /game/{id}/token)",
            )
        if age < -CLOCK_SKEW_S:
            raise ApiError(401, Code.UNAUTHORIZED, "the player token is not valid")
        if player is None:
            raise ApiError(401, Code.UNAUTHORIZED, "the player token is not valid")
        return player

    def _is_undated(self, token: str) -> bool:
        try:
            return _player(self._undated.loads(token)) is not None
        except BadData:
            return False

    def player_of(self, token: str) -> Player | None:
        """The player of a well-signed, unexpired ``token`` of any game, None for
        anything else (used to key the rate limit; a route still checks the game with
        :meth:`verify`)."""
        try:
            return self._load(token)
        except ApiError:
            return None

    def verify(self, token: str | None, game_id: str) -> Player:
        """The player of ``token`` for a request on ``game_id``.

        Raises:
            ApiError: 401 ``UNAUTHORIZED`` when the token is missing, garbled or forged
                (signed with another key, a known default included); 401
                ``TOKEN_EXPIRED`` when older than ``max_age_s`` or undated; 403
                ``FORBIDDEN`` when valid but issued for another game.
        """
        if not token:
            raise ApiError(
                401, Code.UNAUTHORIZED, "a player token is required (Authorization: Bearer <token>)"
            )
        player = self._load(token)
        if player.game_id != game_id:
            raise ApiError(403, Code.FORBIDDEN, "the player token belongs to another game")
        return player


#: itsdangerous salt of profile tokens: a player token is never a valid profile token.
PROFILE_TOKEN_SALT = "cellwar-profile"


class ProfileSigner:
    """Issues and verifies campaign profile tokens (``{"pr": profile_id}`` signed with the
    same secret as player tokens, salt :data:`PROFILE_TOKEN_SALT`). They do not expire:
    the token is the profile (it reaches no game's seat, and a lost one cannot be
    replaced). A known default secret is refused as for player tokens."""

    def __init__(self, secret: str) -> None:
        check_secret(secret, "the token secret")
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
            raise ApiError(401, Code.UNAUTHORIZED, "a profile token is required")
        try:
            data = self._serializer.loads(token)
        except BadData as exc:
            raise ApiError(401, Code.UNAUTHORIZED, "the profile token is not valid") from exc
        if not isinstance(data, dict) or not isinstance(data.get("pr"), str) or not data["pr"]:
            raise ApiError(401, Code.UNAUTHORIZED, "the profile token is not valid")
        return data["pr"]
