"""Bots that find their games through matchmaking (``python -m client.play
--matchmaking``): each bot creates a profile (unless anonymous), queues a ticket of the
same kind, player count and config, waits for its seat, plays its game to the end, and
reports its rating afterwards.

Bots are usually matched with each other, but a person searching in the same queue with
a compatible config may take a seat: each bot plays whatever game it was given.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from client.bot_base import RETRY_UNAVAILABLE_S, ApiBot, said_retry
from client.bots import LifeBot
from client.cellwar_bot import CellWarBot
from client.sdk import AsyncCellWarClient, Seat


async def _rating(api: AsyncCellWarClient, token: str, kind: str, players: int) -> dict[str, Any] | None:
    ratings = (await api.profile(token)).get("ratings") or []
    return next((r for r in ratings if (r["kind"], r["players"]) == (kind, players)), None)


async def play_matchmaking(
    url: str,
    *,
    kind: str = "life",
    players: int = 2,
    config: dict[str, Any] | None = None,
    seed: int = 1,
    rated: bool = True,
    match_timeout: float = 120.0,
    rating_timeout: float = 30.0,
    quiet: bool = False,
) -> dict[str, Any]:
    """``players`` bots queue for ``kind`` × ``players`` with ``config`` (partial) and
    play the games they are given.

    Returns:
        ``{"games": {game_id: {"winner", "result", "players": [names]}}, "bots": [{"name",
        "game_id", "player_id", "wait_s", "rating_before", "rating_after"}]}``; ratings
        are None for anonymous bots (and ``rating_after`` when the ratings did not move
        within ``rating_timeout`` seconds).

    Raises:
        ApiError: the server refused a request (e.g. the ticket expired).
        httpx.HTTPError: the server cannot be reached.
    """
    async with AsyncCellWarClient(url, retry_unavailable_s=RETRY_UNAVAILABLE_S, on_retry=said_retry) as api:

        async def one(i: int) -> dict[str, Any]:
            name = f"mm-bot-{i}"
            token = (await api.create_profile(name))["profile_token"] if rated else None
            before = await _rating(api, token, kind, players) if token else None
            started = time.monotonic()
            seat: Seat = await api.find_match(kind, players, name, config, profile_token=token, timeout=match_timeout)
            waited = time.monotonic() - started
            if not quiet:
                sys.stderr.write(f"{name}: matched in {waited:.2f} s → game {seat.game_id} as player {seat.player_id}\n")
            bot: ApiBot
            if kind == "cellwar":
                bot = CellWarBot(api, seat.game_id, name, seed=seed * 1000 + i)
            else:
                bot = LifeBot(api, seat.game_id, name, seed=seed * 1000 + i, speed=8)
            bot.seat = seat  # the matchmaker already seated the bot
            final = await bot.play()
            after = None
            if token:
                deadline = time.monotonic() + rating_timeout
                games_before = before["games"] if before else 0
                while time.monotonic() < deadline:
                    after = await _rating(api, token, kind, players)
                    if after and after["games"] > games_before:
                        break
                    await asyncio.sleep(0.25)
            return {
                "name": name,
                "game_id": seat.game_id,
                "player_id": seat.player_id,
                "wait_s": waited,
                "final": final,
                "rating_before": before["rating"] if before else (1500.0 if token else None),
                "rating_after": after["rating"] if after else None,
            }

        bots = await asyncio.gather(*(one(i) for i in range(1, players + 1)))
    return {"games": game_results(bots), "bots": bots}


def game_results(bots: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each game's ``{"winner", "result", "players"}`` from its bots' last views (their
    ``final``, taken out of each bot's entry): the view of a bot that saw the end, not of
    one that was out and stopped before it (its view has no result)."""
    games: dict[str, dict[str, Any]] = {}
    for b in bots:
        final = b.pop("final")
        known = games.get(b["game_id"])
        if known is not None and known["result"] is not None:
            continue
        games[b["game_id"]] = {
            "winner": final.get("winner"),
            "result": final.get("result"),
            "players": [p.get("name") for p in final.get("players") or ()],
        }
    return games


def print_matchmaking(result: dict[str, Any]) -> int:
    """The summary of :func:`play_matchmaking` on stdout; exit code 0."""
    for game_id, game in result["games"].items():
        names = game["players"]
        winner = game["winner"]
        who = f"player {winner} ({names[winner - 1]})" if winner else "draw"
        print(f"game {game_id}: {', '.join(names)} → {who}")
    for b in result["bots"]:
        rating = (
            "anonymous"
            if b["rating_before"] is None
            else f"rating {b['rating_before']:.0f} → "
            + ("?" if b["rating_after"] is None else f"{b['rating_after']:.0f}")
        )
        print(f"{b['name']}: waited {b['wait_s']:.2f} s, player {b['player_id']}, {rating}")
    return 0
