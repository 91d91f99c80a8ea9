"""The whole platform as containers (NATS, engine, session, matchmaker, gateway, nginx on
one Docker network): nginx serves the client and proxies the API, two tickets are matched; a bot game plays to the end
through nginx while the session container is killed and started again; the log stays
contiguous, every hash equals the in-process fold, and no command is applied twice."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from typing import Any

import httpx
import nats
import pytest

import engine
from cellwar.v1 import events_pb2
from client.bots import LifeBot
from client.sdk import ApiError, AsyncCellWarClient
from deploy.containers import ContainerStack

pytestmark = pytest.mark.integration

GAME = {"width": 48, "height": 48, "players": 2, "budget": 80, "max_generations": 3000}


class RetryingTransport(httpx.AsyncBaseTransport):
    """What a careful client does across a backend restart: a request answered 502, 503
    or 504, or whose connection failed, is sent again (same body, same
    ``Idempotency-Key``) every ``pause_s`` until ``deadline_s`` seconds have passed.

    ``keys`` holds the Idempotency-Key of every POST that got a 2xx answer;
    ``retries`` counts the requests sent again."""

    def __init__(self, deadline_s: float = 120.0, pause_s: float = 0.3) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.deadline_s = deadline_s
        self.pause_s = pause_s
        self.retries = 0
        self.keys: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.deadline_s
        while True:
            try:
                response = await self._inner.handle_async_request(request)
            except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError):
                if time.monotonic() > deadline:
                    raise
            else:
                if response.status_code not in (502, 503, 504) or time.monotonic() > deadline:
                    if request.method == "POST" and response.status_code < 300:
                        self.keys.add(request.headers.get("Idempotency-Key", ""))
                    return response
                await response.aclose()
            self.retries += 1
            await asyncio.sleep(self.pause_s)

    async def aclose(self) -> None:
        await self._inner.aclose()


def sent_key(command_id: str) -> str:
    """The Idempotency-Key in an event's ``command_id``: the session records
    ``[p<player>:]<key>#<digest of the command>`` (services/session/service_layer/cache.py)."""
    key = command_id.rpartition("#")[0] or command_id
    return re.sub(r"^p\d+:", "", key)


async def read_stream(nats_url: str, game_id: str, count: int) -> list[events_pb2.Event]:
    """The game's events as stored in JetStream (``games.<id>.events``)."""
    nc = await nats.connect(nats_url)
    try:
        sub = await nc.jetstream().subscribe(f"games.{game_id}.events", ordered_consumer=True)
        out: list[events_pb2.Event] = []
        while len(out) < count:
            msg = await sub.next_msg(timeout=10)
            event = events_pb2.Event()
            event.ParseFromString(msg.data)
            out.append(event)
        await sub.unsubscribe()
        return out
    finally:
        await nc.close()


async def wait_for_view(api: AsyncCellWarClient, game_id: str, token: str, ok, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        view = await api.state(game_id, token)
        if ok(view):
            return view
        assert view["phase"] != "finished", f"the game finished before the condition: {view['generation']}"
        assert time.monotonic() < deadline, f"condition not met in {timeout} s: {view['phase']}"
        await asyncio.sleep(0.1)


def test_nginx_serves_the_client_and_proxies_the_api(stack: ContainerStack):
    with httpx.Client(base_url=stack.url, timeout=10) as http:
        page = http.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert page.headers["cache-control"] == "no-cache"
        assert page.headers["server"] == "nginx"
        script = http.get("/js/api.js")
        assert script.status_code == 200
        assert script.headers["cache-control"] == "max-age=3600, public"
        assert "expires" in script.headers
        health = http.get("/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        patterns = http.get("/patterns")
        assert patterns.status_code == 200 and "glider" in patterns.text
        missing = http.get("/game/nope/state")
        assert missing.status_code in (401, 404)
        assert "error" in missing.json()


async def test_two_tickets_are_matched_through_nginx(stack: ContainerStack):
    async with AsyncCellWarClient(stack.url) as api:
        tickets = [
            await api.create_ticket("life", 2, name, {"width": 32, "height": 32}) for name in ("ann", "bob")
        ]
        deadline = time.monotonic() + 60
        while True:
            states = [await api.ticket(t["ticket_id"], t["ticket_token"]) for t in tickets]
            if all(s["status"] == "matched" for s in states):
                break
            assert time.monotonic() < deadline, [s["status"] for s in states]
            await asyncio.sleep(0.2)
        matches = [s["match"] for s in states]
        assert matches[0]["game_id"] == matches[1]["game_id"]
        assert sorted(m["player_id"] for m in matches) == [1, 2]
        view = await api.state(matches[0]["game_id"], matches[0]["player_token"])
        assert view["kind"] == "life" and view["width"] == 32


def test_gateway_trusts_forwarded_addresses_from_nginx_only(stack: ContainerStack):
    nginx = stack.containers["nginx"].get_wrapped_container()
    nginx.reload()
    address = nginx.attrs["NetworkSettings"]["Networks"][stack.network.name]["IPAddress"]
    env = stack.containers["gateway"].exec(["printenv", "CELLWAR_TRUSTED_PROXIES"])
    assert env.output.decode().strip() == address


def test_images_run_as_a_non_root_user(stack: ContainerStack):
    for service in ("engine", "session", "matchmaker", "gateway", "nginx"):
        result = stack.containers[service].exec(["id", "-u"])
        assert result.exit_code == 0
        assert result.output.decode().strip() == "10001", service


async def test_bot_game_survives_a_killed_session(stack: ContainerStack):
    transport = RetryingTransport()
    async with AsyncCellWarClient(stack.url, transport=transport) as api:
        game_id = await api.create_game("life", GAME)
        def sent(bot, timing) -> None:
            # a command answered over the seat's socket: its key is the frame's id
            if timing.status == 200:
                transport.keys.add(timing.key)

        red = LifeBot(api, game_id, "red", seed=21, speed=8, on_command=sent)
        green = LifeBot(api, game_id, "green", seed=22, speed=8, on_command=sent)
        await red.join()
        await green.join()
        game = asyncio.gather(red.play(), green.play())

        # In the middle of the running game: SIGKILL the session container.
        before = await wait_for_view(
            api, game_id, red.seat.token,
            lambda v: v["phase"] in ("running", "redraw") and v["generation"] >= 100,
        )
        await asyncio.to_thread(stack.kill, "session")

        # While it is down the API says so (never a wrong answer) ...
        async with httpx.AsyncClient(base_url=stack.url, timeout=60) as plain:
            down = await plain.get(
                f"/game/{game_id}/state", headers={"Authorization": f"Bearer {red.seat.token}"}
            )
        assert down.status_code in (502, 503, 504), down.text
        # ... and a command sent now is retried until the session is back, then applied once.
        key = f"speed-{uuid.uuid4()}"
        during = asyncio.create_task(api.speed(game_id, red.seat.token, 4, idempotency_key=key))
        await asyncio.sleep(1.0)
        assert not during.done()

        await asyncio.to_thread(stack.start_again, "session")
        applied = await asyncio.wait_for(during, timeout=120)
        again = await api.speed(game_id, red.seat.token, 4, idempotency_key=key)
        assert again["seq"] == applied["seq"]
        with contextlib.suppress(ApiError):  # back to the bots' pace (unless it just ended)
            await api.speed(game_id, red.seat.token, 8)

        finals = await asyncio.wait_for(game, timeout=300)
        events = await api.events(game_id, red.seat.token)

    assert all(view["phase"] == "finished" for view in finals)
    assert finals[0]["generation"] > before["generation"]
    assert transport.retries > 0

    # A contiguous log from GameCreated to GameFinished; the game went on after the kill.
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "GameCreated" and events[-1]["type"] == "GameFinished"

    # Every recorded hash equals the state of the in-process fold after that event.
    state = None
    for event in events:
        state = engine.apply_event(state, event["type"], event["actor"], event["payload"])
        assert engine.state_hash(state) == event["state_hash"], f"seq {event['seq']}"

    # JetStream holds the same log; each command's events are one run (never applied twice).
    stored = await read_stream(stack.nats_url, game_id, len(events))
    assert [(e.seq, e.type, e.state_hash) for e in stored] == [
        (e["seq"], e["type"], e["state_hash"]) for e in events
    ]
    runs: dict[str, list[int]] = {}
    for event in stored:
        if event.command_id:
            runs.setdefault(sent_key(event.command_id), []).append(event.seq)
    assert runs and set(runs) <= transport.keys
    for key_sent, seqs in runs.items():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"{key_sent} applied twice: {seqs}"
    # The command sent during the outage is one event (its answer's seq is the player's own
    # numbering, engine version 2), and the game ticked on after it.
    assert len(runs[key]) == 1
    assert any(e["type"] == "GenerationsTicked" and e["seq"] > runs[key][0] for e in events)
