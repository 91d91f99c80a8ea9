"""Life games set up over the REST API for the browser tests (httpx), and the saved-game
record that makes the browser client resume such a game as a hot-seat game.

A test that only needs to *look* at a game in a given state (a finished game and why it
ended, a replay) builds it here in a few requests instead of clicking it together."""

from __future__ import annotations

import json
import time
import uuid

import httpx

from tests.browser.conftest import HTTP_TIMEOUT_S

#: Times a request cut on the way is sent again.
RETRIES = 3

BLOCK = [(0, 0), (1, 0), (0, 1), (1, 1)]
GLIDER = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]


def at(cells: list[tuple[int, int]], x: int, y: int) -> list[list[int]]:
    """``cells`` moved by (x, y), as the JSON body of a ``place`` action."""
    return [[x + dx, y + dy] for dx, dy in cells]


def post(client: httpx.Client, path: str, token: str | None = None, body: dict | None = None) -> dict:
    """POST with an idempotency key; a request cut on the way (the server closed a
    kept-alive connection as it was reused, a reset under load) is sent again with the
    same key, so it is applied once whatever happened to the first try. Returns the
    JSON answer; asserts a 200/201."""
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    for attempt in range(RETRIES + 1):
        try:
            r = client.post(path, json=body if body is not None else {}, headers=headers)
            break
        except httpx.TransportError:
            if attempt == RETRIES:
                raise
            time.sleep(0.2 * (attempt + 1))
    assert r.status_code in (200, 201), f"{path}: {r.status_code} {r.text}"
    return r.json()


class LifeGame:
    """A Life game created and joined over REST (every seat's token held here; ``seats``
    joins only that many)."""

    def __init__(
        self, base: str, config: dict | None = None, *, kind: str = "life", seats: int | None = None
    ) -> None:
        self.base = base.rstrip("/")
        self.client = httpx.Client(base_url=self.base, timeout=HTTP_TIMEOUT_S)
        cfg = {"width": 16, "height": 16, "players": 2, "budget": 10, **(config or {})}
        self.config = cfg
        self.id = self.post("/game/create", body={"kind": kind, "config": cfg})["game_id"]
        self.tokens: dict[int, str] = {}
        for pid in range(1, (cfg["players"] if seats is None else seats) + 1):
            seat = self.post(f"/game/{self.id}/join", body={"name": f"p{pid}"})
            self.tokens[seat["player_id"]] = seat["player_token"]

    def post(self, path: str, token: str | None = None, body: dict | None = None) -> dict:
        """POST with an idempotency key, sent again when cut on the way (:func:`post`)."""
        return post(self.client, path, token, body)

    def act(self, pid: int, action: dict) -> dict:
        return self.post(f"/game/{self.id}/action", self.tokens[pid], action)

    def place(self, pid: int, cells: list[list[int]]) -> dict:
        return self.act(pid, {"type": "place", "cells": cells})

    def end_turn(self, pid: int) -> dict:
        return self.post(f"/game/{self.id}/end_turn", self.tokens[pid])

    def get(self, path: str, **kwargs) -> httpx.Response:
        """GET, sent again when the request was cut on the way (see ``post``)."""
        for attempt in range(RETRIES + 1):
            try:
                return self.client.get(path, **kwargs)
            except httpx.TransportError:
                if attempt == RETRIES:
                    raise
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    def state(self, pid: int = 1) -> dict:
        r = self.get(
            f"/game/{self.id}/state", headers={"Authorization": f"Bearer {self.tokens[pid]}"}
        )
        assert r.status_code == 200, r.text
        return r.json()

    def wait_phase(self, *phases: str, timeout: float = 60.0) -> dict:
        """Poll the state until its phase is one of ``phases`` (seconds); the view."""
        deadline = time.monotonic() + timeout
        while True:
            view = self.state()
            if view["phase"] in phases:
                return view
            assert time.monotonic() < deadline, f"phase {view['phase']}, wanted {phases}"
            time.sleep(0.05)

    def events(self) -> list[dict]:
        r = self.get(f"/game/{self.id}/events", params={"from_seq": 0})
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


def paused_game(base: str, size: int) -> LifeGame:
    """A ``size``×``size`` torus game whose simulation started and was paused at once:
    a glider (player 1) and a block (player 2) — the glider never settles, so the pause
    can never come after the simulation stopped by itself, however slow the machine."""
    game = LifeGame(base, {"width": size, "height": size, "budget": 20, "torus": True})
    game.place(1, at(GLIDER, size // 5, size // 2))
    game.end_turn(1)
    game.place(2, at(BLOCK, size * 4 // 5, size * 4 // 5))
    game.end_turn(2)
    game.act(1, {"type": "pause"})
    return game


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
