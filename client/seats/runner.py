"""The bots one runner plays: :class:`SeatRunner` (docs/bot-seats.md).

A bot is an ordinary player of the public API (client/sdk/): it joins through
``POST /game/{id}/join`` and plays through the REST API and its own WebSocket, with the
existing bots and policies:

- Life: ``heuristic`` and ``random`` are :class:`client.bots.LifeBot` (seeded figures in
  its zone), ``llm`` is :class:`client.bots.llm.LLMLifeBot` (a chat model places);
- CellWar: every name of :data:`client.bots.ALL_POLICY_NAMES` through
  :func:`client.bots.load_policy`, played by the remote environment (the
  remote environment: the policy sees the observations it was trained on) in a thread
  of the runner's own pool, one per seat (:func:`play_policy_seat`).

Bounded: at most ``max_seats`` bots at once (one more is :class:`SeatError` 429
``BOT_SEATS_FULL``). Supervised: a bot whose game ends, or whose play fails, frees its
slot (logged ``bot_finished`` / ``bot_failed`` with ``game_id`` and ``player_id``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import structlog

from client.bot_base import RETRY_UNAVAILABLE_S
from client.bots import ALL_POLICY_NAMES
from client.sdk import ApiError, AsyncCellWarClient, CellWarClient, Seat

log = structlog.get_logger("bots")

#: The policies that play each game kind (a Life bot places figures; CellWar policies
#: act on the env's observations). The campaign plays against its own level AI.
KIND_POLICIES: dict[str, tuple[str, ...]] = {
    "life": ("heuristic", "random", "llm"),
    "cellwar": ALL_POLICY_NAMES,
}

#: Codes of the runner's own refusals (the same members as gateway/errors.py ``Code``).
SEATS_FULL = "BOT_SEATS_FULL"
POLICY_UNAVAILABLE = "BOT_POLICY_UNAVAILABLE"
POLICY_NOT_FOR_KIND = "POLICY_NOT_FOR_KIND"


class BotStopped(Exception):
    """The runner stopped a bot (it is shutting down): raised by :class:`StoppableClient`."""


class StoppableClient(CellWarClient):
    """The blocking client of a CellWar policy thread: every request, and every retry of
    a server that is restarting, first checks ``stop`` and raises :class:`BotStopped`
    once it is set, so a thread waiting for the other players (polling) ends at once."""

    def __init__(self, base_url: str, stop: threading.Event, **kwargs: Any) -> None:
        super().__init__(base_url, on_retry=self._retrying, **kwargs)
        self.stop = stop

    def _retrying(self, reason: str, wait_s: float) -> None:
        """Between two tries of a server that is restarting: stop here when told to."""
        if self.stop.is_set():
            raise BotStopped("the bot runner stopped this bot")
        log.info("bot_waits_for_server", reason=reason, wait_s=round(wait_s, 2))

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        if self.stop.is_set():
            raise BotStopped("the bot runner stopped this bot")
        return super()._call(method, path, **kwargs)


def play_policy_seat(
    url: str,
    game_id: str,
    seat: int,
    token: str,
    policy: Any,
    *,
    width: int,
    height: int,
    players: int,
    stop: threading.Event,
    wait_s: float = 600.0,
) -> dict[str, Any]:
    """Play one joined CellWar seat with ``policy`` through the remote environment
    (:func:`client.rl.cellwar_env` ``backend="remote"``: the observations the policies
    were trained on) until the game is over for it; blocking (a thread). ``wait_s``:
    longest wait for the other players (seconds; then ``TimeoutError``). ``stop`` ends it
    at the next request (:class:`BotStopped`). Returns ``{"reward", "actions"}``."""
    from client.play import play_policy_seat as play_seat

    return play_seat(
        url, game_id, seat, token, policy, width=width, height=height, players=players,
        client=StoppableClient(url, stop, retry_unavailable_s=RETRY_UNAVAILABLE_S), timeout_s=wait_s, poll_s=0.2,
    )


class SeatError(Exception):
    """A request the runner refuses: HTTP ``status`` + machine ``code`` + ``message``
    (429 ``BOT_SEATS_FULL``, 409 ``BOT_POLICY_UNAVAILABLE`` / ``POLICY_NOT_FOR_KIND`` /
    ``GAME_FULL`` / ``WRONG_PHASE``, 422 ``MALFORMED``, 404 ``GAME_NOT_FOUND``, or what
    the public API answered the bot's join)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass
class BotSeat:
    """One bot the runner plays.

    Attributes:
        game_id / player_id / policy / kind / name: the seat.
        started: ``time.monotonic()`` of the join (seconds).
        task: the asyncio task playing it.
        stop: set to stop a CellWar policy thread between two moves.
    """

    game_id: str
    player_id: int
    policy: str
    kind: str
    name: str
    started: float
    task: asyncio.Task | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def public(self) -> dict[str, Any]:
        """``{"game_id", "player_id", "policy", "kind", "name"}``."""
        return {
            "game_id": self.game_id, "player_id": self.player_id, "policy": self.policy,
            "kind": self.kind, "name": self.name,
        }


class SeatRunner:
    """Takes seats on request and plays them to the end.

    Args:
        api_url: the public API the bots play through (the gateway, or nginx).
        max_seats: most bots at once (>= 1).
        llm_url / llm_model: the chat model server of ``llm`` (empty URL: ``llm`` is
            refused with 409 ``BOT_POLICY_UNAVAILABLE``).
        api: a client to use instead of one made from ``api_url`` (tests).
        seed: first seed of the bots' own random generators (each bot gets the next).
        wait_s: longest wait of a bot for the other players (seconds): a game that
            stays open, or a player who never moves, frees the bot's slot after it.
    """

    def __init__(
        self,
        api_url: str,
        *,
        max_seats: int = 8,
        llm_url: str = "",
        llm_model: str = "smollm2",
        api: AsyncCellWarClient | None = None,
        seed: int = 1,
        wait_s: float = 600.0,
    ) -> None:
        if max_seats < 1:
            raise ValueError("max_seats must be >= 1")
        self.api_url = api_url.rstrip("/")
        self.max_seats = max_seats
        self.llm_url = llm_url
        self.llm_model = llm_model
        self._api = api
        self._seeds = itertools.count(seed)
        self.wait_s = wait_s
        # One thread per seat: asyncio's default pool (cores + 4) would queue the 7th
        # CellWar bot behind six that wait for their opponents.
        self._threads = ThreadPoolExecutor(max_workers=max_seats, thread_name_prefix="bot-seat")
        self.seats: dict[tuple[str, int], BotSeat] = {}
        self._pending = 0
        self.finished = 0
        self.failed = 0

    @property
    def api(self) -> AsyncCellWarClient:
        """The bots' client (made on first use; waits out a restarting server)."""
        if self._api is None:
            self._api = AsyncCellWarClient(self.api_url, retry_unavailable_s=RETRY_UNAVAILABLE_S)
        return self._api

    def policies(self) -> dict[str, list[str]]:
        """Policies available now, by game kind (``llm`` only with a model server)."""
        return {
            kind: [p for p in names if p != "llm" or self.llm_url] for kind, names in KIND_POLICIES.items()
        }

    def status(self) -> dict[str, Any]:
        """``{"seats", "max_seats", "finished", "failed", "bots": [...], "policies"}``."""
        return {
            "seats": len(self.seats),
            "max_seats": self.max_seats,
            "finished": self.finished,
            "failed": self.failed,
            "bots": [b.public() for b in self.seats.values()],
            "policies": self.policies(),
        }

    # -- taking a seat

    def _check_policy(self, policy: str, kind: str | None) -> None:
        if policy not in ALL_POLICY_NAMES:
            raise SeatError(422, "MALFORMED", f"unknown policy {policy!r}; known: {', '.join(ALL_POLICY_NAMES)}")
        if policy == "llm" and not self.llm_url:
            raise SeatError(
                409, POLICY_UNAVAILABLE,
                "the llm policy needs a chat model server: this runner has none (CELLWAR_BOTS_LLM_URL)",
            )
        if kind is not None and policy not in KIND_POLICIES.get(kind, ()):
            fits = ", ".join(KIND_POLICIES.get(kind, ())) or "none"
            raise SeatError(409, POLICY_NOT_FOR_KIND, f"policy {policy!r} does not play {kind} games; these do: {fits}")

    async def _lobby_entry(self, game_id: str) -> dict[str, Any]:
        for game in await self.api.games():
            if game.get("game_id") == game_id:
                return game
        raise SeatError(404, "GAME_NOT_FOUND", f"no open game {game_id}")

    async def add(self, game_id: str, policy: str) -> dict[str, Any]:
        """Take the next free seat of ``game_id`` with a bot of ``policy`` and start
        playing it.

        Returns:
            ``{"game_id", "player_id", "policy", "kind", "name"}`` of the new seat.

        Raises:
            SeatError: 422 an unknown policy (the known ones listed), 409 ``llm``
                without a model server, a policy that does not play the game's kind, a
                game that no longer waits for players or has no free seat, 429
                ``BOT_SEATS_FULL`` beyond ``max_seats``, 404 no such open game, or the
                API's own answer to the join.
        """
        self._check_policy(policy, None)
        if len(self.seats) + self._pending >= self.max_seats:
            raise SeatError(
                429, SEATS_FULL,
                f"this bot runner plays {self.max_seats} bot seats already (CELLWAR_BOTS_MAX_SEATS); "
                "one frees when its game ends",
            )
        self._pending += 1
        try:
            lobby = await self._lobby_entry(game_id)
            kind = str(lobby.get("kind"))
            self._check_policy(policy, kind)
            if lobby.get("phase") != "waiting":
                raise SeatError(409, "WRONG_PHASE", f"game {game_id} no longer waits for players")
            if int(lobby.get("players_joined", 0)) >= int(lobby.get("max_players", 0)):
                raise SeatError(409, "GAME_FULL", f"game {game_id} has no free seat")
            name = f"bot-{policy}"
            try:
                seat = await self.api.join(game_id, name)
            except ApiError as err:
                raise SeatError(err.status, err.code, err.message) from None
        finally:
            self._pending -= 1
        bot = BotSeat(game_id, seat.player_id, policy, kind, name, time.monotonic())
        self.seats[(game_id, seat.player_id)] = bot
        bot.task = asyncio.create_task(self._run(bot, seat, lobby.get("config") or {}))
        log.info("bot_seated", game_id=game_id, player_id=seat.player_id, policy=policy, kind=kind)
        return bot.public()

    # -- playing

    async def _run(self, bot: BotSeat, seat: Seat, config: dict[str, Any]) -> None:
        """Play the seat to the end; the slot is freed whatever happens."""
        bound = log.bind(game_id=bot.game_id, player_id=bot.player_id, policy=bot.policy)
        try:
            if bot.kind == "cellwar":
                result = await self._play_cellwar(bot, seat, config)
            else:
                result = await self._play_life(bot, seat)
            self.finished += 1
            bound.info("bot_finished", seconds=round(time.monotonic() - bot.started, 3), **result)
        except asyncio.CancelledError:
            bot.stop.set()
            bound.info("bot_stopped")
            raise
        except Exception as exc:  # a failed bot frees its slot; the others go on
            self.failed += 1
            bound.warning("bot_failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.seats.pop((bot.game_id, bot.player_id), None)

    async def _play_life(self, bot: BotSeat, seat: Seat) -> dict[str, Any]:
        from client.bots import LifeBot

        seed = next(self._seeds)
        last = {"seq": None, "at": time.monotonic()}

        def seen(_bot: Any, view: dict[str, Any]) -> None:
            if view.get("seq") != last["seq"]:
                last["seq"], last["at"] = view.get("seq"), time.monotonic()

        if bot.policy == "llm":
            from client.bots.llm import LifePlacer, LLMLifeBot

            placer = LifePlacer(self.llm_url, self.llm_model, seed=seed)
            player: Any = LLMLifeBot(
                self.api, bot.game_id, bot.name, placer=placer, seed=seed, speed=8, on_view=seen
            )
        else:
            placer = None
            player = LifeBot(self.api, bot.game_id, bot.name, seed=seed, speed=8, on_view=seen)
        player.seat = seat  # joined by the runner already
        play = asyncio.create_task(player.play())
        try:
            # A game that stays open, or whose other players never move, frees the slot
            # after wait_s seconds without a new event.
            while not play.done():
                await asyncio.wait({play}, timeout=min(1.0, self.wait_s))
                if not play.done() and time.monotonic() - last["at"] > self.wait_s:
                    play.cancel()
                    raise TimeoutError(f"no new event in game {bot.game_id} for {self.wait_s:g} s")
            final = play.result()
        finally:
            if not play.done():
                play.cancel()
            if placer is not None:
                placer.close()
        return {"winner": final.get("winner"), "actions": player.actions_sent}

    async def _play_cellwar(self, bot: BotSeat, seat: Seat, config: dict[str, Any]) -> dict[str, Any]:
        from client.bots import load_policy

        seed = next(self._seeds)
        if bot.policy == "llm":
            policy = load_policy("llm", url=self.llm_url, model=self.llm_model, seed=seed)
        elif bot.policy in ("random", "heuristic", "search"):
            policy = load_policy(bot.policy, seed=seed)
        else:
            policy = load_policy(bot.policy)
        try:
            play = functools.partial(
                play_policy_seat, self.api_url, bot.game_id, seat.player_id, seat.token, policy,
                width=int(config.get("width", 16)), height=int(config.get("height", 16)),
                players=int(config.get("players", 2)), stop=bot.stop, wait_s=self.wait_s,
            )
            result = await asyncio.get_running_loop().run_in_executor(self._threads, play)
        finally:
            close = getattr(policy, "close", None)
            if callable(close):
                close()
        return {"reward": result["reward"], "actions": result["actions"]}

    async def aclose(self) -> None:
        """Stop every bot (their seats stay in their games) and close the client."""
        tasks = [b.task for b in self.seats.values() if b.task is not None]
        for bot in self.seats.values():
            bot.stop.set()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._api is not None:
            await self._api.aclose()
        self._threads.shutdown(wait=False, cancel_futures=True)
