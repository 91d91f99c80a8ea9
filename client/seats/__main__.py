"""``python -m client.seats``: the bot runner (docs/bot-seats.md).

Listens on ``CELLWAR_BOTS_ADDR`` (127.0.0.1:50054) for the gateway's requests and plays
through ``CELLWAR_BOTS_API_URL`` (default: the gateway at
``CELLWAR_HTTP_HOST:CELLWAR_HTTP_PORT``); at most ``CELLWAR_BOTS_MAX_SEATS`` bots; the
``llm`` policy asks ``CELLWAR_BOTS_LLM_URL`` (model ``CELLWAR_BOTS_LLM_MODEL``).
``make run`` and ``make run-cluster`` start and supervise it (deploy/topology.py).
"""

from __future__ import annotations

import sys

import uvicorn

from client.seats.app import create_runner_app
from client.seats.runner import SeatRunner
from services.common.logging import configure_logging
from services.common.settings import Settings, grpc_addresses, settings_or_exit


def api_url(settings: Settings) -> str:
    """The public API the bots play through (``bots_api_url``, else the gateway)."""
    if settings.bots_api_url:
        return settings.bots_api_url
    host = "127.0.0.1" if settings.http_host in ("0.0.0.0", "", "::") else settings.http_host
    return f"http://{host}:{settings.http_port}"


def main() -> int:
    """Serve until SIGINT/SIGTERM. Returns the exit code (2: bad settings)."""
    settings = settings_or_exit("bot runner")
    configure_logging(settings.log_format, settings.log_level, service="bots")
    try:
        (addr,) = grpc_addresses(settings.bots_addr)
        host, _, port = addr.rpartition(":")
    except ValueError as exc:
        sys.stderr.write(f"bot runner: CELLWAR_BOTS_ADDR={settings.bots_addr!r}: {exc}\n")
        return 2
    runner = SeatRunner(
        api_url(settings),
        max_seats=settings.bots_max_seats,
        llm_url=settings.bots_llm_url,
        llm_model=settings.bots_llm_model,
    )
    uvicorn.run(
        create_runner_app(runner), host=host, port=int(port), log_config=None, access_log=False,
        lifespan="on",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
