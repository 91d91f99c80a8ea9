"""Ticket tokens expire with their ticket, and a matched seat has one player token
(gateway/ticket_tokens.py, docs/security.md): the real gateway, matchmaker, session and
NATS for the seat's token, a fake clock for the expiry."""

from __future__ import annotations

import time

import httpx
import pytest

from client.sdk import AsyncCellWarClient
from gateway.errors import ApiError
from gateway.ticket_tokens import TICKET_TOKEN_GRACE_S, TicketSigner
from tests.api.conftest import TEST_SECRET
from tests.matchmaker.conftest import eventually, private_config


class Clock:
    """A settable Unix clock (seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_ticket_token_expires_with_its_ticket():
    clock = Clock()
    signer = TicketSigner(TEST_SECRET, ticket_ttl_s=300.0, clock=clock)
    token = signer.issue("t1")
    # itsdangerous dates the token by the real clock: move the fake one there.
    clock.now = time.time()
    assert signer.verify(token, "t1") == "t1"
    clock.now += 300.0 + TICKET_TOKEN_GRACE_S - 1
    assert signer.verify(token, "t1") == "t1"
    clock.now += 2
    with pytest.raises(ApiError) as info:
        signer.verify(token, "t1")
    assert (info.value.status, info.value.code) == (401, "TOKEN_EXPIRED")


def test_an_undated_ticket_token_of_an_earlier_version_is_refused():
    from itsdangerous import URLSafeSerializer

    old = URLSafeSerializer(TEST_SECRET, salt="cellwar-ticket").dumps({"t": "t1"})
    with pytest.raises(ApiError) as info:
        TicketSigner(TEST_SECRET).verify(old, "t1")
    assert info.value.status == 401


@pytest.mark.integration
async def test_every_read_of_a_matched_ticket_answers_the_one_seat_token(
    mm_api: AsyncCellWarClient, mm_url: str
):
    config = private_config()
    alice = await mm_api.create_ticket("life", 2, "alice", config)
    bob = await mm_api.create_ticket("life", 2, "bob", config)

    async def matched() -> dict | None:
        t = await mm_api.ticket(alice["ticket_id"], alice["ticket_token"])
        return t if t["status"] == "matched" else None

    first = await eventually(matched, what="alice matched")
    auth = {"Authorization": f"Bearer {alice['ticket_token']}"}
    async with httpx.AsyncClient(base_url=mm_url, timeout=30) as http:
        reads = [(await http.get(f"/matchmaking/tickets/{alice['ticket_id']}", headers=auth)).json()
                 for _ in range(3)]
    tokens = {first["match"]["player_token"], *(r["match"]["player_token"] for r in reads)}
    assert len(tokens) == 1
    view = await mm_api.state(first["match"]["game_id"], tokens.pop())
    assert view["you"] == first["match"]["player_id"]
    assert bob["ticket_id"] != alice["ticket_id"]
