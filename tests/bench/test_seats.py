"""The benches' game setup (:func:`bench.roundtrip.platform_seats`) against a gateway
that refuses with 429: the refused create or join is sent again after its Retry-After,
any other error status raises (no servers: an httpx mock transport)."""

from __future__ import annotations

import httpx
import pytest

from bench import roundtrip


def _gateway(refuse: set[int], status: int = 429) -> tuple[httpx.MockTransport, list[str]]:
    """A mock gateway answering the n-th request (0-based) in ``refuse`` with ``status``
    (Retry-After 2), creates with ``g<n>`` and joins with ``t<n>``; the paths it saw."""
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        n = len(seen)
        seen.append(request.url.path)
        if n in refuse:
            return httpx.Response(status, headers={"Retry-After": "2"}, json={"error": "RATE_LIMITED"})
        if request.url.path == "/game/create":
            return httpx.Response(200, json={"game_id": f"g{n}"})
        return httpx.Response(200, json={"player_token": f"t{n}"})

    return httpx.MockTransport(answer), seen


async def test_platform_seats_waits_out_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(roundtrip.asyncio, "sleep", sleep)
    transport, seen = _gateway(refuse={0, 2})  # the first create, the first game's first join
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
        seats = await roundtrip.platform_seats(client, "http://gw", 2)
    assert seats == [("g1", "t3"), ("g5", "t6")]
    assert waits == [2.0, 2.0]
    assert seen == [
        "/game/create", "/game/create", "/game/g1/join", "/game/g1/join", "/game/g1/join",
        "/game/create", "/game/g5/join", "/game/g5/join",
    ]


async def test_platform_seats_raises_other_errors() -> None:
    transport, seen = _gateway(refuse={0}, status=503)
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
        with pytest.raises(httpx.HTTPStatusError) as err:
            await roundtrip.platform_seats(client, "http://gw", 1)
    assert err.value.response.status_code == 503
    assert seen == ["/game/create"]
