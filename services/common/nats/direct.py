"""The batched direct get (``$JS.API.DIRECT.GET.<stream>`` with ``next_by_subj`` and
``batch``, NATS server >= 2.11; ADR-31 of nats-io/nats-architecture-and-design), which
nats.py does not wrap: it reads a stream's messages without creating a consumer, so
any number of concurrent readers stays clear of the server's consumer limit.

It needs the connection and the API prefix of a :class:`JetStreamContext`, private in
nats.py (``_nc``, ``_prefix``): this module is the only reader of them.
"""

from __future__ import annotations

import json

import nats.js.errors
from nats.aio.client import Client
from nats.js.client import JetStreamContext


def connection(js: JetStreamContext) -> Client:
    """The NATS connection ``js`` was made from (nats.py: ``JetStreamContext._nc``)."""
    return js._nc


def api_prefix(js: JetStreamContext) -> str:
    """The JetStream API subject prefix of ``js``: ``"$JS.API"``, or ``"$JS.<domain>.API"``
    with a domain (nats.py: ``JetStreamContext._prefix``)."""
    return js._prefix


async def direct_get_batch(
    js: JetStreamContext,
    stream: str,
    subject: str,
    start: int,
    *,
    batch: int,
    max_bytes: int,
    timeout: float,
) -> tuple[list[tuple[int, bytes]], int]:
    """One batched direct get: up to ``batch`` messages (``max_bytes`` bytes in all) of
    ``subject`` in ``stream`` from stream sequence ``start`` on.

    Args:
        timeout: seconds to wait for each message of the answer.

    Returns:
        ``([(stream sequence, data)], messages of the subject still pending after them)``;
        ``([], 0)`` or a short list with 0 when nothing (more) is there.

    Raises:
        nats.js.errors.APIError: the server refused (its status and description).
        nats.errors.Error / TimeoutError: NATS did not answer.
    """
    nc = connection(js)
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    try:
        request = {"seq": start, "next_by_subj": subject, "batch": batch, "max_bytes": max_bytes}
        await nc.publish(
            f"{api_prefix(js)}.DIRECT.GET.{stream}", json.dumps(request).encode(), reply=inbox
        )
        out: list[tuple[int, bytes]] = []
        while True:
            msg = await sub.next_msg(timeout=timeout)
            headers = msg.headers or {}
            status = headers.get("Status")
            if status == "404":  # nothing (more) on this subject
                return out, 0
            if status == "204":  # end of batch
                return out, int(headers.get("Nats-Num-Pending", 0) or 0)
            if status:
                raise nats.js.errors.APIError(
                    code=int(status), description=str(headers.get("Description", ""))
                )
            out.append((int(headers["Nats-Sequence"]), msg.data))
    finally:
        await sub.unsubscribe()
