"""A CellWar bot that plays only through the public API (client/sdk/; the seed's rules).

:class:`CellWarBot` joins a game, follows it on its seat's WebSocket, which also carries
its commands (REST when the socket cannot be opened or closes; with a polling fallback
for the views: every ``poll_s`` seconds without a message, and for good once the stream
ends), and on its turn acts with every unit that still has to, then ends the turn:

- for each unit (combat units first, then factories, by id) it asks its legal moves
  (a ``valid_actions`` frame on the command socket, ``GET /game/{id}/valid_actions?unit_id=...``
  without one) and picks one of the answers:

  * **attack** when it can: a unit or factory first; a fortification (whose first hit
    kills the attacker) only half the time when something else is possible;
  * a **factory produces** (toward the nearest enemy it knows of, else at random);
  * a **fortification** holds (``stand``, on to a factory at 3) while an enemy is in
    sight or, otherwise, half the time; else it moves out like infantry;
  * **infantry** fortifies now and then (``fortify_chance``, only when no enemy is in
    sight), else **moves toward the nearest visible enemy**, else toward the nearest
    cell where it last saw one, else toward the middle of the board; ties and
    everything else are broken by the bot's own seeded ``random.Random``;

- then ends the turn (``end_turn``). The turn is played on the view that showed it (no
  one else acts in it), then on each command's answer; a view no newer than what the
  bot has played on (the frames of its own commands) calls for nothing. A 409 (a stale
  view: the turn moved on, a unit was removed) is not an error: the next view decides
  again, one of the same ``seq`` too (the refusal changed nothing; a bot that waited for
  a newer one would wait for ever on its own turn).

A view is the REST view (docs/api/index.md "Views and `seq`"); the bot reads ``phase, turn,
you, round, width, height, units, visible``. Other players' units carry no id; the bot never
needs one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from cellwar.v1 import board_codec
from client.bot_base import ApiBot, OnCommand
from client.bots.heuristic import Cell, chebyshev, choose_action
from client.sdk import ApiError, AsyncCellWarClient

OnView = Callable[["CellWarBot", dict[str, Any]], Awaitable[None] | None]

#: Order in which a player's units act: combat units before factories (seed "Раунд").
_TYPE_ORDER = {"infantry": 0, "fortification": 0, "factory": 1}

__all__ = ["CellWarBot", "chebyshev", "visible_cells"]


def visible_cells(view: dict[str, Any]) -> set[Cell]:
    """The cells of the view's ``visible`` mask (two-state RLE, ``o`` visible; decoded by
    ``cellwar.v1.board_codec``); none for a view without the field.

    Raises:
        cellwar.v1.board_codec.BoardFormatError: a malformed text (a ``ValueError``).
    """
    w = int(view["width"])
    cells = board_codec.decode_board(str(view.get("visible") or "!"), w, int(view["height"]))
    return {(i % w, i // w) for i, state in enumerate(cells) if state}


class CellWarBot(ApiBot):
    """A CellWar player driven by the public API.

    Args:
        api: the client (shared between bots is fine).
        game_id: the game to join.
        name: the player name shown to others.
        seed: seeds the bot's own ``random.Random`` (a seed replays the same choices
            against the same opponents).
        fortify_chance: chance (0..1) that an infantry with no enemy in sight fortifies.
        poll_s: seconds without a stream message after which the state is polled.
        on_view: called with (bot, view) for every view seen (progress display).
        commands / on_command: as :class:`client.bot_base.ApiBot` (``socket``: the
            commands go over the seat's stream socket).
    """

    def __init__(
        self,
        api: AsyncCellWarClient,
        game_id: str,
        name: str,
        *,
        seed: int = 0,
        fortify_chance: float = 0.1,
        poll_s: float = 2.0,
        on_view: OnView | None = None,
        commands: str = "socket",
        on_command: OnCommand | None = None,
    ) -> None:
        super().__init__(
            api, game_id, name, seed=seed, poll_s=poll_s, on_view=on_view, commands=commands, on_command=on_command
        )
        self.fortify_chance = fortify_chance
        self.turns_played = 0
        #: Cells where the bot last saw an enemy unit (forgotten once seen empty).
        self.remembered: set[Cell] = set()
        #: The newest ``seq`` the bot has played on (a turn's view, its commands' answers).
        self.played_seq = -1

    # -- the loop

    async def play(self) -> dict[str, Any]:
        """Play every turn of the bot until the game is finished (or the bot is out of
        it); returns the last view."""
        return await self._follow(await self.join(), self._on_view, out=self._out, ended_poll_s=0.2)

    async def _on_view(self, view: dict[str, Any]) -> None:
        """Play the turn a view shows, unless the bot has played on a newer one."""
        if view.get("phase") == "playing" and view.get("turn") == view.get("you") and not self._seen(view):
            await self.play_turn(view)

    def _seen(self, view: dict[str, Any]) -> bool:
        """Whether ``view`` is no newer than what the bot has played on already (the views
        its own commands made come after their answers): it calls for nothing."""
        seq = view.get("seq")
        return isinstance(seq, int) and seq <= self.played_seq

    @staticmethod
    def _out(view: dict[str, Any]) -> bool:
        you = view.get("you")
        return any(p.get("id") == you and p.get("out") for p in view.get("players") or ())

    # -- one turn

    async def play_turn(self, view: dict[str, Any] | None = None) -> None:
        """Act with every unit that still has to (asking valid_actions for each), then end
        the turn. Returns early when the view shows the turn is no longer the bot's.

        Args:
            view: the newest view of the bot's turn (from its stream: no one else acts in
                it); None asks ``GET /game/{id}/state``.
        """
        token = self.seat.token
        try:
            if view is None:
                view = await self.api.state(self.game_id, token)
            self._played(view)
            while view.get("phase") == "playing" and view.get("turn") == view.get("you"):
                self.remember(view)
                acted = False
                for unit in self.pending_units(view):
                    actions = await (
                        self.cmds.valid_actions(unit["id"])  # on the command socket, in order
                        if self.cmds is not None
                        else self.api.valid_actions(self.game_id, token, unit["id"])
                    )
                    if not actions:  # a blocked factory: it dies at the end of the turn
                        continue
                    choice = self.choose(view, unit, actions)
                    answer = await self.command({"unit_id": unit["id"], "dx": choice["dx"], "dy": choice["dy"]})
                    view = answer["view"]
                    self._played(answer)
                    acted = True
                    break
                if not acted:
                    answer = await self.command(None)
                    self.turns_played += 1
                    view = answer.get("view") or {}
                    if view.get("phase") == "playing" and view.get("turn") == view.get("you"):
                        # The answer already shows the bot's next turn: an end_turn retried
                        # after a fault is answered with the game as it is now. Play it;
                        # its frames are no newer than this answer and would be skipped.
                        continue
                    self._played(answer)
                    return
        except ApiError as err:
            if err.status != 409:
                raise
            # Refused on this view (the session knew better; it has caught up since): the
            # next view decides again, even one of the same seq, which shows that nothing
            # changed (else the bot would wait on it for ever).
            seq = view.get("seq") if view else None
            if isinstance(seq, int):
                self.played_seq = min(self.played_seq, seq - 1)

    def _played(self, seen: dict[str, Any]) -> None:
        seq = seen.get("seq")
        if isinstance(seq, int):
            self.played_seq = max(self.played_seq, seq)

    @staticmethod
    def pending_units(view: dict[str, Any]) -> list[dict[str, Any]]:
        """The bot's units that have not acted this turn, combat units first, by id."""
        you = view.get("you")
        mine = [u for u in view.get("units") or () if u.get("owner") == you and not u.get("acted")]
        return sorted(mine, key=lambda u: (_TYPE_ORDER.get(u.get("type"), 0), u.get("id") or 0))

    def remember(self, view: dict[str, Any]) -> None:
        """Update the cells where enemies were last seen: add the visible ones, forget
        visible cells that are empty now."""
        you = view.get("you")
        seen = visible_cells(view)
        enemies = {(u["x"], u["y"]) for u in view.get("units") or () if u.get("owner") != you}
        self.remembered = (self.remembered - seen) | enemies

    # -- decisions

    def choose(self, view: dict[str, Any], unit: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
        """One of ``actions`` (``{"unit_id", "dx", "dy", "kind"}``) for ``unit``
        (:func:`client.bots.heuristic.choose_action`)."""
        return dict(
            choose_action(
                self.rng,
                you=view.get("you"),
                units=view.get("units") or (),
                here=(int(unit["x"]), int(unit["y"])),
                actions=actions,
                width=int(view["width"]),
                height=int(view["height"]),
                remembered=self.remembered,
                fortify_chance=self.fortify_chance,
            )
        )
