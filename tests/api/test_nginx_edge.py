"""nginx in front of two real gateways (deploy/nginx.conf as rendered by deploy/nginx.py,
docs/security.md): the security headers on nginx's own answers and on proxied ones (a
route's own CSP kept), 40 creates through nginx and both gateways meeting the one
window of the client's address (NATS KV), a body trickled at 10 B/s cut with the
gateway's 408, and the upstream keep-alive shorter than the gateway's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from deploy import nginx
from deploy.topology import _static_owner
from gateway.app import PACKAGED_WEB_DIR, create_app
from gateway.headers import CONTENT_SECURITY_POLICY
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.serve import serve
from tests.support.trickle import trickled_post

pytestmark = pytest.mark.integration

CREATE_BODY = {"kind": "life", "config": {"width": 20, "height": 20}}
SECURITY = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def _edge(
    stack, nats_url: str, tmp_path: Path, nginx_options: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[str]:
    """nginx on a free port in front of two gateways sharing their windows; its URL."""
    try:
        binary = nginx.nginx_binary()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    async with contextlib.AsyncExitStack() as exits:
        apps = [
            create_app(
                Settings(
                    session_addr=stack.session_target,
                    secret=TEST_SECRET,
                    trusted_proxies="127.0.0.1",
                    shared_limits=True,
                    nats_url=nats_url,
                    **settings,
                )
            )
            for _ in range(2)
        ]
        urls = [await exits.enter_async_context(serve(app)) for app in apps]
        async with asyncio.timeout(30):
            while not all(a.state.shared_windows.ready for a in apps):
                await asyncio.sleep(0.05)
        port = _free_port()
        run = nginx.prepare_run_dir(tmp_path / "nginx")
        conf = run / "nginx.conf"
        conf.write_text(
            nginx.render_config(
                listen=f"127.0.0.1:{port}",
                gateways=[u.removeprefix("http://") for u in urls],
                static_dir=PACKAGED_WEB_DIR,
                run_dir=run,
                workers=1,
                user=_static_owner(PACKAGED_WEB_DIR),
                **(nginx_options or {}),
            )
        )
        proc = subprocess.Popen([binary, "-p", str(run), "-c", str(conf), "-e", str(run / "error.log")])
        try:
            base = f"http://127.0.0.1:{port}"
            async with asyncio.timeout(30):
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        async with httpx.AsyncClient(timeout=5) as http:
                            if (await http.get(base + "/healthz")).status_code == 200:
                                break
                    assert proc.poll() is None, (run / "error.log").read_text()
                    await asyncio.sleep(0.05)
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _client() -> str:
    return f"100.65.{random.randrange(256)}.{random.randrange(1, 255)}"


async def test_nginx_and_the_gateways_answer_with_the_security_headers(stack, nats_url, tmp_path):
    async with _edge(stack, nats_url, tmp_path) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        answers = {
            "page": await http.get("/"),  # nginx, from disk
            "script": await http.get("/js/main.js"),  # nginx, from disk
            "api": await http.get("/healthz"),  # a gateway
            "missing": await http.get("/game/no-such-game/state"),  # a gateway's 404
            "too large": await http.post(  # nginx's own 413
                "/game/create", content=b"x" * (9 * 1024 * 1024), headers={"Content-Type": "application/json"}
            ),
        }
        assert {k: a.status_code for k, a in answers.items()} == {
            "page": 200, "script": 200, "api": 200, "missing": 404, "too large": 413,
        }
        for what, answer in answers.items():
            for name, value in SECURITY.items():
                assert answer.headers.get_list(name) == [value], (what, name)
        assert answers["page"].headers["cache-control"] == "no-cache"
        # /docs keeps its own policy (Swagger UI's inline script by its hash).
        docs = await http.get("/docs")
        assert docs.headers.get_list("content-security-policy")[0].count("'sha256-") == 1


async def test_40_creates_through_nginx_and_two_gateways_meet_the_one_window(stack, nats_url, tmp_path):
    async with _edge(stack, nats_url, tmp_path) as base:
        client = {"X-Forwarded-For": _client()}  # nginx appends 127.0.0.1, a trusted proxy
        limits = httpx.Limits(max_connections=40, max_keepalive_connections=40)
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
            answers = await asyncio.gather(
                *(http.post("/game/create", json=CREATE_BODY, headers=client) for _ in range(40))
            )
        log = (Path(tmp_path) / "nginx" / "access.log").read_text()
    assert sorted(a.status_code for a in answers) == [201] * 30 + [429] * 10
    # Both gateways answered creates (nginx spreads them by client port).
    upstreams = set(re.findall(r'POST /game/create HTTP/1.1" 201 .* "(127\.0\.0\.1:\d+)"', log))
    assert len(upstreams) == 2, log


async def test_nginx_caps_the_sockets_of_an_address_over_all_gateways(stack, nats_url, tmp_path):
    async with _edge(stack, nats_url, tmp_path, nginx_options={"ws_per_address": 3}) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            client = {"X-Forwarded-For": _client()}
            games = [
                (await http.post("/game/create", json=CREATE_BODY, headers=client)).json()["game_id"]
                for _ in range(5)
            ]
        ws = base.replace("http", "ws")
        opened = [await websockets.connect(f"{ws}/game/{g}/stream") for g in games[:3]]
        try:
            # Other games (whichever gateway they hash to): the address's cap is nginx's.
            for game in games[3:]:
                with pytest.raises(InvalidStatus) as info:
                    await websockets.connect(f"{ws}/game/{game}/stream")
                assert info.value.response.status_code == 429
            await opened.pop().close()
            for _ in range(100):  # nginx frees the place once it has seen the close
                try:
                    opened.append(await websockets.connect(f"{ws}/game/{games[4]}/stream"))
                    break
                except InvalidStatus:
                    await asyncio.sleep(0.05)
            assert len(opened) == 3
        finally:
            for socket_ in opened:
                await socket_.close()


async def test_a_body_trickled_through_nginx_is_cut_with_408(stack, nats_url, tmp_path):
    async with _edge(stack, nats_url, tmp_path, body_read_timeout_s=1.0) as base:
        port = int(base.rsplit(":", 1)[1])
        body = json.dumps(CREATE_BODY).encode().ljust(1000)
        async with trickled_post(port, "/game/create", body) as trickle:
            head = await asyncio.wait_for(trickle.reader.readuntil(b"\r\n\r\n"), 60)
            assert head.startswith(b"HTTP/1.1 408"), head
            assert trickle.sent < len(body)


def test_nginx_drops_idle_gateway_connections_before_the_gateway_does(tmp_path):
    conf = nginx.render_config(listen="127.0.0.1:1", gateways=["127.0.0.1:2"], static_dir=tmp_path, run_dir=tmp_path)
    upstream = conf[conf.index("upstream cellwar_gateways"):]
    upstream = upstream[: upstream.index("}")]
    seconds = float(re.search(r"keepalive_timeout (\d+)s;", upstream).group(1))
    assert seconds < Settings().http_keep_alive_s
    for directive in ("client_header_timeout", "client_body_timeout", "send_timeout"):
        assert re.search(rf"\n  {directive} \d+s;", conf), directive


def test_the_nginx_socket_cap_follows_the_setting(tmp_path, monkeypatch):
    def rendered() -> str:
        return nginx.render_config(listen="127.0.0.1:1", gateways=["127.0.0.1:2"], static_dir=tmp_path, run_dir=tmp_path)

    monkeypatch.delenv("CELLWAR_WS_MAX_PER_ADDRESS", raising=False)
    assert "limit_conn cellwar_ws 64;" in rendered()
    monkeypatch.setenv("CELLWAR_WS_MAX_PER_ADDRESS", "7")
    assert "limit_conn cellwar_ws 7;" in rendered()
    monkeypatch.setenv("CELLWAR_WS_MAX_PER_ADDRESS", "0")
    assert "limit_conn cellwar_ws" not in rendered()
