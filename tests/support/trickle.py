"""A POST whose body is sent one byte at a time, 10 bytes a second, on a raw connection:
the client the body read timeout is there to cut."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class Trickle:
    """The open connection of a trickled POST; ``sent`` counts the body bytes written."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.sent = 0


@contextlib.asynccontextmanager
async def trickled_post(port: int, path: str, body: bytes) -> AsyncIterator[Trickle]:
    """POST ``body`` (JSON) to 127.0.0.1:``port`` at 10 B/s after the whole head; stops
    the sending and closes the connection on exit."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    trickle = Trickle(reader, writer)

    async def send() -> None:
        for byte in body:
            writer.write(bytes([byte]))
            await writer.drain()
            trickle.sent += 1
            await asyncio.sleep(0.1)  # 10 B/s

    task = asyncio.create_task(send())
    try:
        yield trickle
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await task
        writer.close()
