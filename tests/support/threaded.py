"""A whole stack served from a daemon thread, for the synchronous tests (Playwright,
schemathesis): engine + session (:func:`tests.support.stack.start_stack`), the
matchmaker and the gateway under uvicorn (:func:`tests.support.serve.serve`), all on one
event loop of their own."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any


class ThreadedStack:
    """The stack on its own event loop in a daemon thread; ``url`` once started.

    Args:
        nats_url: the NATS the stack uses.
        generations_per_second: the session's Life tick rate.
        gateway: settings the gateway gets on top of the stack's (e.g. limits off).
        name: the thread's name.
        bots: when given, a bot runner (client/seats) is served too, with these
            :class:`client.seats.SeatRunner` options (``max_seats``), and the gateway
            forwards ``POST /game/{id}/bots`` to it (docs/bot-seats.md).
    """

    def __init__(
        self,
        nats_url: str,
        *,
        generations_per_second: float,
        gateway: dict[str, Any] | None = None,
        name: str = "cellwar-live-stack",
        bots: dict[str, Any] | None = None,
    ) -> None:
        self.nats_url = nats_url
        self.generations_per_second = generations_per_second
        self.gateway = dict(gateway or {})
        self.bots = bots
        self.runner: Any = None
        self.url = ""
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self, timeout: float = 60.0) -> None:
        """Start and wait until the gateway answers (seconds). Raises what startup raised."""
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"stack + gateway not up after {timeout} s")
        if self._error is not None:
            raise self._error

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the gateway, then the matchmaker and the stack (seconds to wait)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to the starting thread
            self._error = self._error or exc
            self._ready.set()

    async def _main(self) -> None:
        from gateway.app import create_app
        from services.matchmaker.server import create_server
        from tests.support.serve import serve
        from tests.support.stack import start_stack

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        stack = await start_stack(self.nats_url, generations_per_second=self.generations_per_second)
        matchmaker = None
        try:
            mm_settings = stack.settings.model_copy(
                update={"session_addr": stack.session_target, "matchmaker_interval_s": 0.05}
            )
            _, _, matchmaker = await create_server(
                "127.0.0.1:0",
                nats_url=self.nats_url,
                session_target=stack.session_target,
                settings=mm_settings,
            )
            async with contextlib.AsyncExitStack() as running:
                bots_url = ""
                if self.bots is not None:
                    from client.seats.app import create_runner_app
                    from client.seats.runner import SeatRunner

                    self.runner = SeatRunner("http://unset.invalid", **self.bots)
                    bots_url = await running.enter_async_context(serve(create_runner_app(self.runner)))
                settings = stack.settings.model_copy(
                    update={
                        "session_addr": stack.session_target,
                        "matchmaker_addr": f"127.0.0.1:{matchmaker.port}",
                        "bots_url": bots_url,
                        **self.gateway,
                    }
                )
                url = await running.enter_async_context(serve(create_app(settings)))
                if self.runner is not None:
                    self.runner.api_url = url  # the bots play through this gateway
                self.url = url
                self._ready.set()
                await self._stop.wait()
        finally:
            if matchmaker is not None:
                await matchmaker.stop(grace=0.2)
            await stack.stop()
