"""``cellwar import``: a log file into a new game through the REST API (docs/replays.md;
internals: docs/architecture/replay-tools.md "`cellwar import`").

The file is read with :mod:`client.logfile` (JSON Lines or the ``{"events": [...]}``
document) and posted to ``POST /games/import`` as ``{"events": [...]}`` with its origin
(``origin_file`` = the file's name, ``origin_game_id`` when given). The server re-decides
every event through the engine and refuses a log the rules do not reproduce with 409
``LOG_MISMATCH`` naming the first bad seq (:attr:`client.sdk.ApiError.seq`); nothing is
written then. A finished log becomes a finished game with the same events; a log that
stops early becomes a fork of its last state with free seats.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

from client.logfile import STDIO, read_events
from client.sdk import CellWarClient

#: Seconds to wait for the server's answer: the whole log is decided again first.
TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ImportResult:
    """What the server made of the file.

    Attributes:
        game_id: the new game.
        events: events it recorded.
        finished: the log was finished (else the game is a fork of its last state).
        sent: events read from the file and sent.
    """

    game_id: str
    events: int
    finished: bool
    sent: int


def import_file(
    base_url: str,
    path: str,
    *,
    origin_game_id: str | None = None,
    idempotency_key: str | None = None,
) -> ImportResult:
    """Import the log at ``path`` (``-`` = standard input) into a new game on ``base_url``.

    Raises:
        client.logfile.LogFormatError: the file cannot be read as a log.
        client.sdk.ApiError: the server refused (``LOG_MISMATCH`` with ``seq``, ...).
        httpx.HTTPError: the server cannot be reached.
    """
    events = read_events(path)
    origin_file = None if path == STDIO else os.path.basename(path)[:255] or None
    with CellWarClient(base_url, timeout=TIMEOUT_S) as api:
        answer = api.import_log(
            events,
            origin_game_id=origin_game_id,
            origin_file=origin_file,
            idempotency_key=idempotency_key or str(uuid.uuid4()),
        )
    return ImportResult(str(answer["game_id"]), int(answer["events"]), bool(answer["finished"]), len(events))
