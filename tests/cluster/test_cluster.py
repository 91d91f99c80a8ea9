"""``make run-cluster`` (docs/hosting.md): cluster.json lists 3 NATS nodes, 2 engines,
2 sessions, 2 gateways, 2 bot runners and nginx on the documented ports; nginx answers /healthz, serves
the browser client itself and carries a game's WebSocket; JetStream keeps three replicas."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from client.sdk import AsyncCellWarClient
from deploy.harness import RunnerProcess, http_get, pid_alive
from deploy.topology import has_bots, has_matchmaker

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_cluster_json_lists_every_process_on_its_port(cluster: RunnerProcess):
    table = cluster.table()
    b = cluster.bases
    assert table["mode"] == "cluster"
    assert table["url"] == f"http://127.0.0.1:{b.http}"
    roles = Counter(p["role"] for p in table["processes"])
    expected = {"nats": 3, "engine": 2, "session": 2, "gateway": 2, "nginx": 1}
    if has_matchmaker():
        expected["matchmaker"] = 2
    if has_bots():  # the bot runners (docs/bot-seats.md)
        expected["bots"] = 2
    assert dict(roles) == expected
    addrs = {p["name"]: p["addr"] for p in table["processes"]}
    assert addrs["nginx"] == f"127.0.0.1:{b.http}"
    for k in (1, 2):
        assert addrs[f"gateway-{k}"] == f"127.0.0.1:{b.http + k}"
        assert addrs[f"engine-{k}"] == b.grpc_addr("engine", k)
        assert addrs[f"session-{k}"] == b.grpc_addr("session", k)
        if has_matchmaker():
            assert addrs[f"matchmaker-{k}"] == b.grpc_addr("matchmaker", k)
        if has_bots():
            assert addrs[f"bots-{k}"] == b.grpc_addr("bots", k)
    for k in (1, 2, 3):
        assert addrs[f"nats-{k}"] == f"127.0.0.1:{b.nats + k - 1}"
        assert (cluster.data_dir / "cluster" / f"nats-{k}" / "jetstream").is_dir()
    for p in table["processes"]:
        assert p["state"] == "up" and pid_alive(p["pid"]), p
        assert p["log"].startswith(str(cluster.data_dir / "cluster" / "logs"))


def test_nginx_answers_health_and_serves_the_client_itself(cluster: RunnerProcess):
    status, body = http_get(cluster.url + "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert http_get(cluster.url + "/readyz")[0] == 200
    import urllib.request

    with urllib.request.urlopen(cluster.url + "/", timeout=10) as response:  # noqa: S310 - loopback
        assert response.headers["Server"].startswith("nginx")
        assert response.headers["Cache-Control"] == "no-cache"
        assert b"<!doctype html>" in response.read().lower()
    for gateway in (p for p in cluster.processes() if p["role"] == "gateway"):
        assert http_get(f"http://{gateway['addr']}/healthz")[0] == 200


async def test_a_websocket_through_nginx_streams_a_game(cluster: RunnerProcess):
    async with AsyncCellWarClient(cluster.url, timeout=30) as api:
        game_id = await api.create_game("life", {"width": 16, "height": 16, "players": 2, "budget": 8})
        alice = await api.join(game_id, "alice")
        await api.join(game_id, "bob")

        async def first_view():
            async for message in api.stream(game_id, alice.token):
                if message["type"] == "view":
                    return message

        message = await asyncio.wait_for(first_view(), timeout=30)
    # The upgrade went through nginx and a gateway to a session: a view of this game for
    # this seat. (That every instance's frames are current is tested with the session.)
    assert message["view"]["game_id"] == game_id
    assert message["view"]["you"] == alice.player_id == 1
    assert (message["view"]["width"], message["view"]["height"]) == (16, 16)


def test_jetstream_keeps_three_replicas_of_the_log(cluster: RunnerProcess):
    status, body = http_get(f"http://127.0.0.1:{cluster.bases.nats_monitor_port(1)}/jsz?streams=true&config=true")
    assert status == 200
    streams = {
        s["name"]: s
        for account in json.loads(body)["account_details"]
        for s in account["stream_detail"]
    }
    assert streams["GAME_EVENTS"]["config"]["num_replicas"] == 3
    assert len(streams["GAME_EVENTS"]["cluster"]["replicas"]) == 2  # + the leader
    assert json.loads(body)["config"]["sync_always"] is True


@pytest.mark.skipif(not has_matchmaker(), reason="no matchmaker service in this checkout")
async def test_two_tickets_through_nginx_meet_in_one_game(cluster: RunnerProcess):
    async with AsyncCellWarClient(cluster.url, timeout=30) as api:
        tickets = [await api.create_ticket("life", 2, name) for name in ("ann", "ben")]
        matches = []
        for t in tickets:
            deadline = asyncio.get_running_loop().time() + 60
            while (status := await api.ticket(t["ticket_id"], t["ticket_token"]))["status"] == "searching":
                assert asyncio.get_running_loop().time() < deadline, status
                await asyncio.sleep(0.2)
            matches.append(status)
    assert [m["status"] for m in matches] == ["matched", "matched"]
    assert matches[0]["match"]["game_id"] == matches[1]["match"]["game_id"]
    assert {m["match"]["player_id"] for m in matches} == {1, 2}


async def test_the_trained_policy_plays_a_game_through_nginx(cluster: RunnerProcess):
    """Read-your-writes across the two gateways and sessions: nginx sends one game's
    requests to one gateway (deploy/nginx.conf). With round robin the policy's
    ``valid_actions`` right after its move reached the other session instance, not yet
    caught up, and offered the unit that had just acted (409 UNIT_ALREADY_ACTED)."""
    from client.play import play_cellwar_policy

    result = await play_cellwar_policy(cluster.url, bot="trained", quiet=True)
    assert result["final_view"]["phase"] == "finished", result["final_view"]
    assert result["winner"] in (1, 2) and result["policy_reward"] in (1.0, -1.0)
    assert result["events"][-1]["state_hash"] == result["state_hash"]
