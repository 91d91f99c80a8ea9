"""Abuse limits of the gateway (docs/security.md):
creates and joins per client address, whatever token they carry; forwarding headers
believed only from configured proxies; costly reads limited per address and in
concurrency; Retry-After computed from the caller's own window only. Pure parts first,
then the real gateway in front of the real stack."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from gateway.limits import (
    BUSY_RETRY_AFTER_S,
    BUSY_RETRY_SPREAD_S,
    COMMAND,
    CREATE,
    JOIN,
    READ,
    ConcurrencyLimit,
    MovingWindow,
    RateLimit,
    TokenBuckets,
    client_address,
    create_path,
    request_class,
)
from gateway.tokens import TokenSigner
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET, serve

LIFE = {"width": 20, "height": 20}
CREATE_BODY = {"kind": "life", "config": LIFE}


class Clock:
    """A settable monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------- pure parts


def test_a_moving_window_allows_the_limit_in_any_60_seconds():
    clock = Clock()
    window = MovingWindow(3, 60.0, clock=clock)
    for _ in range(3):
        assert window.wait("a") == 0.0
        window.hit("a")
        clock.now += 10
    assert window.wait("a") == pytest.approx(30.0)  # the first hit leaves at t=60
    clock.now += 30
    assert window.wait("a") == 0.0


def test_a_read_flood_from_one_address_is_told_to_wait_longer():
    clock = Clock()
    buckets = TokenBuckets(5.0, 2, clock=clock, max_debt_s=60.0)
    assert buckets.take("a") == buckets.take("a") == 0.0
    waits = [buckets.take("a") for _ in range(400)]
    assert waits[0] == pytest.approx(0.4)  # its own refusal counted: 2 tokens short
    assert waits == sorted(waits) and waits[-1] == pytest.approx(60.2)  # capped at 60 s of debt
    assert buckets.take("b") == 0.0  # another address is not touched
    clock.now += 60.2
    assert buckets.take("a") == 0.0  # paid off by waiting as told


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("POST", "/game/create", CREATE),
        ("POST", "/profiles", CREATE),
        ("POST", "/games/import", CREATE),
        ("POST", "/game/abc/fork", CREATE),
        ("POST", "/game/abc/join", JOIN),
        ("POST", "/game/abc/action", COMMAND),
        ("POST", "/game/abc/token", COMMAND),
        ("GET", "/game/abc/replay", READ),
        ("GET", "/game/abc/events", READ),
        ("GET", "/game/abc/state", None),
        ("GET", "/games", None),
    ],
)
def test_requests_fall_into_their_limit_class(method, path, kind):
    assert request_class(method, path) == kind


def test_every_fork_counts_in_one_create_window():
    assert create_path("/game/abc/fork") == create_path("/game/xyz/fork") == "/game/{id}/fork"
    assert create_path("/game/create") == "/game/create"


def test_an_ipv6_client_counts_by_its_64():
    def scope(host: str) -> dict[str, Any]:
        return {"client": (host, 1234)}

    assert client_address(scope("2001:db8:1:2::1")) == client_address(scope("2001:db8:1:2:ffff::9"))
    assert client_address(scope("2001:db8:1:2::1")) != client_address(scope("2001:db8:1:3::1"))
    assert client_address(scope("::ffff:192.0.2.7")) == "192.0.2.7"
    assert client_address(scope("192.0.2.7")) == "192.0.2.7"


async def test_the_concurrency_bound_queues_a_few_and_refuses_the_rest_at_once():
    limit = ConcurrencyLimit(2, max_waiting=1, max_wait_s=30.0)
    assert await limit.acquire() and await limit.acquire()
    waiter = asyncio.create_task(limit.acquire())
    while limit.waiting == 0:
        await asyncio.sleep(0)
    assert await limit.acquire() is False  # the queue (1) is full: refused without waiting
    limit.release()
    assert await waiter is True
    short = ConcurrencyLimit(1, max_waiting=1, max_wait_s=0.05)
    assert await short.acquire()
    assert await short.acquire() is False  # waited its 0.05 s, then refused


async def _status_and_retry_after(app, scope_client: str, path: str = "/game/create") -> tuple[int, str | None]:
    transport = httpx.ASGITransport(app=app, client=(scope_client, 1234))
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
        answer = await client.post(path, json=CREATE_BODY)
    return answer.status_code, answer.headers.get("retry-after")


async def _ok(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 201, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def test_retry_after_depends_on_the_callers_own_creates_only():
    """A's Retry-After is the same whether or not B created games meanwhile."""
    answers = []
    for b_creates in (0, 3):
        clock = Clock()
        limiter = RateLimit(_ok, rate=0, burst=0, signer=TokenSigner(TEST_SECRET), create_per_min=3)
        limiter.windows[CREATE].clock = clock
        for _ in range(3):
            assert (await _status_and_retry_after(limiter, "192.0.2.1"))[0] == 201
        clock.now += 10
        for _ in range(b_creates):
            assert (await _status_and_retry_after(limiter, "198.51.100.2"))[0] == 201
        clock.now += 10
        answers.append(await _status_and_retry_after(limiter, "192.0.2.1"))
    assert answers == [(429, "40"), (429, "40")]


async def test_a_busy_refusal_costs_the_caller_a_burst():
    gate = asyncio.Event()

    async def slow(scope, receive, send) -> None:
        await gate.wait()
        await _ok(scope, receive, send)

    limiter = RateLimit(
        slow, rate=0, burst=0, signer=TokenSigner(TEST_SECRET), read_rate=5.0, read_burst=3,
        read_concurrency=1,
    )
    limiter.reads.max_waiting = 0
    transport = httpx.ASGITransport(app=limiter, client=("192.0.2.1", 1))
    other = httpx.ASGITransport(app=limiter, client=("192.0.2.2", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client, httpx.AsyncClient(
        transport=other, base_url="http://gw"
    ) as second:
        running = asyncio.create_task(second.get("/game/g/replay?seq=1"))
        while not limiter.reads._slots.locked():
            await asyncio.sleep(0.01)
        assert (await client.get("/game/g/replay?seq=1")).status_code == 503
        again = await client.get("/game/g/replay?seq=1")  # at once: its bucket was charged
        gate.set()
        assert (await running).status_code == 201
    assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1


async def test_busy_reads_answer_a_retry_after_that_tells_nothing_of_other_readers():
    gate = asyncio.Event()

    async def slow(scope, receive, send) -> None:
        await gate.wait()
        await _ok(scope, receive, send)

    limiter = RateLimit(slow, rate=0, burst=0, signer=TokenSigner(TEST_SECRET), read_concurrency=1)
    transport = httpx.ASGITransport(app=limiter, client=("192.0.2.1", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
        running = [asyncio.create_task(client.get("/game/g/replay?seq=1")) for _ in range(2)]
        while limiter.reads.waiting == 0:  # one reads, one waits
            await asyncio.sleep(0.01)
        busy = await client.get("/game/g/replay?seq=1")
        gate.set()
        assert [r.status_code for r in await asyncio.gather(*running)] == [201, 201]
    assert busy.status_code == 503
    assert busy.json()["error"]["code"] == "BUSY"
    assert BUSY_RETRY_AFTER_S <= int(busy.headers["retry-after"]) < BUSY_RETRY_AFTER_S + BUSY_RETRY_SPREAD_S


# --------------------------------------------------------------------------- on the stack


@contextlib.asynccontextmanager
async def _gateway(stack, **settings: Any) -> AsyncIterator[str]:
    app = create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET, **settings))
    async with serve(app) as url:
        yield url


@pytest.fixture
async def default_gateway(stack) -> AsyncIterator[str]:
    """A gateway with the default limits (30 creates a minute per address)."""
    async with _gateway(stack) as url:
        yield url


@pytest.fixture
async def proxied_gateway(stack) -> AsyncIterator[str]:
    """A gateway behind a trusted proxy on 127.0.0.1, 5 creates a minute per client."""
    async with _gateway(stack, trusted_proxies="127.0.0.1, 10.0.0.0/8", create_limit_per_min=5) as url:
        yield url


async def _creates(url: str, headers: list[dict[str, str]]) -> list[httpx.Response]:
    """POST /game/create once per header set, all at once."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        return list(
            await asyncio.gather(*(http.post("/game/create", json=CREATE_BODY, headers=h) for h in headers))
        )


def _assert_limited(answers: list[httpx.Response], allowed: int) -> None:
    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == allowed, [a.status_code for a in answers]
    assert {a.status_code for a in refused} <= {429}
    for answer in refused:
        assert answer.json()["error"]["code"] == "RATE_LIMITED"
        assert 1 <= int(answer.headers["retry-after"]) <= 60


@pytest.mark.integration
async def test_300_concurrent_creates_from_one_client_give_exactly_the_limit(default_gateway):
    _assert_limited(await _creates(default_gateway, [{}] * 300), 30)


@pytest.mark.integration
async def test_forwarding_headers_are_ignored_without_trusted_proxies(default_gateway):
    rotating = [{"X-Forwarded-For": f"203.0.113.{i}, 198.18.{i}.1"} for i in range(100)]
    _assert_limited(await _creates(default_gateway, rotating), 30)


@pytest.mark.integration
async def test_a_trusted_proxy_names_the_client_by_its_rightmost_untrusted_address(proxied_gateway):
    # Each real client (the proxy appends it last) has its own window ...
    distinct = [{"X-Forwarded-For": f"198.51.100.{i}"} for i in range(8)]
    _assert_limited(await _creates(proxied_gateway, distinct), 8)
    # ... a client cannot pick its address by sending its own header first ...
    spoofing = [{"X-Forwarded-For": f"1.2.3.{i}, 203.0.113.9"} for i in range(8)]
    _assert_limited(await _creates(proxied_gateway, spoofing), 5)
    # ... and a chain of trusted proxies (10.0.0.0/8) is skipped to reach the client.
    chained = [{"X-Forwarded-For": f"9.9.9.{i}, 192.0.2.44, 10.1.2.3"} for i in range(8)]
    _assert_limited(await _creates(proxied_gateway, chained), 5)


@pytest.mark.integration
async def test_a_player_token_does_not_move_creates_or_joins_out_of_the_address_window(stack):
    async with _gateway(stack, create_limit_per_min=2, join_limit_per_min=3) as url:
        async with AsyncCellWarClient(url, timeout=30) as api, httpx.AsyncClient(base_url=url, timeout=30) as http:
            game_id = await api.create_game("life", LIFE)
            seats = [await api.join(game_id, "alice"), await api.join(game_id, "bob")]
            other = await api.create_game("cellwar", {"players": 3})
            auth = {"Authorization": f"Bearer {seats[0].token}"}
            create = await http.post("/game/create", json=CREATE_BODY, headers=auth)
            assert create.status_code == 429 and create.json()["error"]["code"] == "RATE_LIMITED"
            assert (await http.post(f"/game/{other}/join", json={"name": "c"}, headers=auth)).status_code == 200
            join = await http.post(f"/game/{other}/join", json={"name": "d"}, headers=auth)
            assert join.status_code == 429 and 1 <= int(join.headers["retry-after"]) <= 60
            # Commands keep their own bucket per player: the seat still plays.
            assert (await api.place(game_id, seats[0].token, [(1, 1)]))["seq"] > 0


@pytest.mark.integration
async def test_costly_reads_are_limited_per_address(stack):
    async with _gateway(
        stack, trusted_proxies="127.0.0.1", read_limit_per_s=0.01, read_limit_burst=3
    ) as url:
        async with AsyncCellWarClient(url, timeout=30) as api, httpx.AsyncClient(base_url=url, timeout=30) as http:
            game_id = await api.create_game("life", LIFE)
            alice = await api.join(game_id, "alice")
            await api.join(game_id, "bob")
            auth = {"Authorization": f"Bearer {alice.token}", "X-Forwarded-For": "192.0.2.10"}
            for path in ("events", "replay?seq=1", "events"):
                assert (await http.get(f"/game/{game_id}/{path}", headers=auth)).status_code == 200
            limited = await http.get(f"/game/{game_id}/replay?seq=1", headers=auth)
            assert limited.status_code == 429 and limited.json()["error"]["code"] == "RATE_LIMITED"
            # 1 token at 0.01/s plus its own debt, stretched by the jitter (x1..2)
            assert 1 <= int(limited.headers["retry-after"]) <= 320
            elsewhere = {**auth, "X-Forwarded-For": "192.0.2.11"}
            assert (await http.get(f"/game/{game_id}/replay?seq=1", headers=elsewhere)).status_code == 200
            # The player's view and actions are not costly reads.
            assert (await http.get(f"/game/{game_id}/state", headers=auth)).status_code == 200
            assert (await api.place(game_id, alice.token, [(2, 2)]))["seq"] > 0
