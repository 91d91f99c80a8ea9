"""Life games set up over the REST API for the browser tests (httpx), and the saved-game
record that makes the browser client resume such a game as a hot-seat game.

A test that only needs to *look* at a game in a given state (a finished game and why it
ended, a replay) builds it here in a few requests instead of clicking it together."""

from __future__ import annotations

import json
import time
import uuid

import httpx

BLOCK = [(0, 0), (1, 0), (0, 1), (1, 1)]
GLIDER = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]


def at(cells: list[tuple[int, int]], x: int, y: int) -> list[list[int]]:
    """``cells`` moved by (x, y), as the JSON body of a ``place`` action."""
    return [[x + dx, y + dy] for dx, dy in cells]


class LifeGame:
    """A Life game created and joined over REST (every seat's token held here)."""

    def __init__(self, base: str, config: dict | None = None, *, kind: str = "life") -> None:
        self.base = base.rstrip("/")
        self.client = httpx.Client(base_url=self.base, timeout=15)
        cfg = {"width": 16, "height": 16, "players": 2, "budget": 10, **(config or {})}
        self.config = cfg
        self.id = self.post("/game/create", body={"kind": kind, "config": cfg})["game_id"]
        self.tokens: dict[int, str] = {}
        for pid in range(1, cfg["players"] + 1):
            seat = self.post(f"/game/{self.id}/join", body={"name": f"p{pid}"})
            self.tokens[seat["player_id"]] = seat["player_token"]

    def post(self, path: str, token: str | None = None, body: dict | None = None) -> dict:
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        r = self.client.post(path, json=body if body is not None else {}, headers=headers)
        assert r.status_code in (200, 201), f"{path}: {r.status_code} {r.text}"
        return r.json()

    def act(self, pid: int, action: dict) -> dict:
        return self.post(f"/game/{self.id}/action", self.tokens[pid], action)

    def place(self, pid: int, cells: list[list[int]]) -> dict:
        return self.act(pid, {"type": "place", "cells": cells})

    def end_turn(self, pid: int) -> dict:
        return self.post(f"/game/{self.id}/end_turn", self.tokens[pid])

    def state(self, pid: int = 1) -> dict:
        r = self.client.get(
            f"/game/{self.id}/state", headers={"Authorization": f"Bearer {self.tokens[pid]}"}
        )
        assert r.status_code == 200, r.text
        return r.json()

    def wait_phase(self, *phases: str, timeout: float = 20.0) -> dict:
        """Poll the state until its phase is one of ``phases`` (seconds); the view."""
        deadline = time.monotonic() + timeout
        while True:
            view = self.state()
            if view["phase"] in phases:
                return view
            assert time.monotonic() < deadline, f"phase {view['phase']}, wanted {phases}"
            time.sleep(0.05)

    def events(self) -> list[dict]:
        r = self.client.get(f"/game/{self.id}/events", params={"from_seq": 0})
        assert r.status_code == 200, r.text
        return r.json()["events"]

    def save_record(self) -> str:
        """The browser client's ``localStorage['cellwar.v1']`` value that resumes this
        game as a hot-seat game (every seat on the device)."""
        return json.dumps(
            {
                "game": {
                    "mode": "hotseat",
                    "gameId": self.id,
                    "tokens": {str(k): v for k, v in self.tokens.items()},
                    "config": self.config,
                }
            }
        )

    def close(self) -> None:
        self.client.close()


def seed_storage(page, key: str, value: str, tag: str) -> None:
    """Put ``localStorage[key] = value`` before the page's scripts run, once per tab
    (``tag`` names the seeding), so the client starts with it without a reload (a
    reload would cut the requests of the first load)."""
    page.add_init_script(
        f"""if (!sessionStorage.getItem({json.dumps('seeded:' + tag)})) {{
            localStorage.setItem({json.dumps(key)}, {json.dumps(value)});
            sessionStorage.setItem({json.dumps('seeded:' + tag)}, '1');
        }}"""
    )


def open_saved(page, base: str, game: LifeGame, *, lang: str | None = None) -> None:
    """Load the client with ``game`` saved as the current hot-seat game (it resumes)."""
    record = json.loads(game.save_record())
    if lang:
        record["prefs"] = {"lang": lang}
    seed_storage(page, "cellwar.v1", json.dumps(record), game.id)
    page.goto(base + "/")
