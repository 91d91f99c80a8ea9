"""Bot seats: the bot runner (``python -m client.seats``) takes a seat of an open game
when the gateway asks (``POST /game/{id}/bots``) and plays it through the public API
like any player (docs/bot-seats.md).

- :class:`~client.seats.runner.SeatRunner`: the bounded set of bots one runner plays.
- :func:`~client.seats.app.create_runner_app`: its internal HTTP API.
"""

from client.seats.runner import KIND_POLICIES, SeatError, SeatRunner

__all__ = ["KIND_POLICIES", "SeatError", "SeatRunner"]
