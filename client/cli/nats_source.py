"""Read every game's log straight from the NATS JetStream stream ``GAME_EVENTS``
(docs/architecture/index.md "The event model": subjects ``games.<game_id>.events``, one
``cellwar.v1.Event`` protobuf per message), for ``cellwar verify --nats URL --all``.

One ordered consumer reads the whole stream once, in stream order (which is each game's
seq order), up to the last message the stream held when the read began; messages are
grouped by subject. So verifying N games costs one consumer, not N. The consumer is
ephemeral, in memory and without acks: it changes nothing in the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import nats
import nats.errors
import nats.js.errors
from nats.js import api

from cellwar.v1 import events_pb2
from services.common.jsonwire import event_json

#: The event stream and its subjects (services/session/adapters/event_store.py).
STREAM = "GAME_EVENTS"
SUBJECTS = "games.*.events"
#: Seconds to wait for the next message before giving up (the stream said it has more).
NEXT_TIMEOUT_S = 10.0


class NatsReadError(Exception):
    """The stream cannot be read (no server at the URL, no stream, a stalled read)."""


def game_id_of(subject: str) -> str:
    """``games.<game_id>.events`` → ``<game_id>``."""
    parts = subject.split(".")
    return parts[1] if len(parts) == 3 else subject




async def stream_messages(
    url: str, *, game_ids: list[str] | None = None, on_total: Callable[[int], None] | None = None
) -> AsyncIterator[tuple[str, dict[str, Any] | None, str]]:
    """The events of ``GAME_EVENTS`` as ``(game_id, event, error)``, in stream order.

    Args:
        url: NATS server URL, e.g. ``nats://127.0.0.1:4222``.
        game_ids: only these games (None: every game in the stream).
        on_total: called once with the number of messages to read (for a progress bar).

    Yields:
        ``(game_id, event, "")`` (the REST shape: :func:`services.common.jsonwire.event_json`),
        or ``(game_id, None, message)`` for a message that
        is not a readable ``cellwar.v1.Event``.

    Raises:
        NatsReadError: no server, no stream, or the read stalls for ``NEXT_TIMEOUT_S``.
    """
    dropped: list[str] = []

    async def on_error(exc: Exception) -> None:
        # A slow consumer's messages are dropped by the client: the read would have gaps.
        if isinstance(exc, nats.errors.SlowConsumerError):
            dropped.append(str(exc))

    try:
        nc = await nats.connect(
            url, connect_timeout=5, max_reconnect_attempts=1, allow_reconnect=False, error_cb=on_error
        )
    except (OSError, TimeoutError, nats.errors.Error) as exc:
        said = str(exc) or ("no answer in 5 s" if isinstance(exc, TimeoutError) else type(exc).__name__)
        raise NatsReadError(f"cannot connect to NATS at {url}: {said}") from None
    try:
        js = nc.jetstream()
        try:
            info = await js.stream_info(STREAM)
        except nats.js.errors.NotFoundError:
            raise NatsReadError(f"no stream {STREAM} on {url}") from None
        except (TimeoutError, nats.errors.Error) as exc:
            raise NatsReadError(f"cannot read stream {STREAM}: {exc}") from None
        if info.state.messages == 0:
            return
        subjects = [f"games.{g}.events" for g in game_ids] if game_ids else [SUBJECTS]
        try:  # the stream also holds finish notices (games.<id>.finished): the logs end here
            last = (await js.get_last_msg(STREAM, SUBJECTS)).seq
        except nats.js.errors.NotFoundError:
            return
        if on_total is not None:
            on_total(await _events_in_stream(js) if not game_ids else 0)
        for subject in subjects:
            async for item in _read_subject(js, subject, last):
                if dropped:
                    raise NatsReadError(f"the client dropped messages ({dropped[0]}); run again")
                yield item
    finally:
        await nc.drain()


async def _events_in_stream(js) -> int:
    """How many messages of ``GAME_EVENTS`` are events (``games.*.events``; the finish
    notices are not): the pending count of a short-lived consumer on them."""
    info = await js.add_consumer(
        STREAM,
        api.ConsumerConfig(
            filter_subject=SUBJECTS,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_policy=api.AckPolicy.NONE,
            inactive_threshold=5.0,
            mem_storage=True,
        ),
    )
    with contextlib.suppress(nats.errors.Error):
        await js.delete_consumer(STREAM, info.name)
    return int(info.num_pending or 0)


async def _read_subject(js, subject: str, last: int) -> AsyncIterator[tuple[str, dict[str, Any] | None, str]]:
    """One ordered consumer over ``subject`` up to stream sequence ``last``."""
    if subject != SUBJECTS:
        try:  # a single game: stop at its own last message
            last = (await js.get_last_msg(STREAM, subject)).seq
        except nats.js.errors.NotFoundError:
            return
    sub = await js.subscribe(
        subject,
        stream=STREAM,
        ordered_consumer=True,
        deliver_policy=api.DeliverPolicy.ALL,
        idle_heartbeat=2.0,
        inactive_threshold=30.0,
    )
    try:
        read = 0
        while True:
            read += 1
            if read % 256 == 0:
                # Queued messages are taken without a pause; let the client read its
                # socket (heartbeats, flow control) now and then.
                await asyncio.sleep(0)
            try:
                msg = await sub.next_msg(timeout=NEXT_TIMEOUT_S)
            except (TimeoutError, nats.errors.TimeoutError):
                raise NatsReadError(f"no message from {STREAM} for {NEXT_TIMEOUT_S} s") from None
            stream_seq = msg.metadata.sequence.stream
            if stream_seq > last:
                break
            game_id = game_id_of(msg.subject)
            try:
                event = events_pb2.Event.FromString(msg.data)
                yield game_id, event_json(event), ""
            except Exception as exc:  # noqa: BLE001 - any undecodable message is reported, not fatal
                yield game_id, None, f"stream message {stream_seq} is not a cellwar.v1.Event: {exc}"
            if stream_seq >= last:
                break
    finally:
        try:
            await sub.unsubscribe()
        except nats.errors.Error:
            pass
