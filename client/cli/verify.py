"""Offline verification of event logs: fold every event through the engine library and
check every recorded ``state_hash`` (``cellwar verify``, docs/replays.md "Log files").

Each event is folded on its own, under its own ``engine_version``
(:func:`engine.apply_event`), and the hash of the state after it is compared with the
hash the event recorded. ``engine.fold`` would sum a run of ``GenerationsTicked`` into
one tick, which is faster but skips the hashes inside the run; here every
``GenerationsTicked`` is one tick of its own count, so no recorded hash goes unchecked.

A log passes when its seqs run 1, 2, 3, ... with no gap, every event folds and every
hash matches. The first event that breaks one of these is named by its seq:

- a seq out of place (a line dropped, lines swapped): the seq that should be there;
- an event the rules refuse (a payload changed into an illegal action);
- a hash that differs from the one recorded.

A log whose events carry no ``state_hash`` (a player's fog-filtered log) cannot be
verified and is reported as such, never as OK.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import engine
from cellwar.v1.codes import EventType
from client.logfile import LogFormatError, LogLine, iter_events


class Status(StrEnum):
    """Outcome of one log."""

    #: Every event folded and every recorded hash matched.
    OK = "OK"
    #: An event does not fold to its recorded hash, the rules refuse it, or its seq is
    #: out of place.
    FAIL = "FAIL"
    #: The log cannot be verified: unreadable, malformed, empty, or without hashes.
    ERROR = "ERROR"


class FailReason(StrEnum):
    """Why a log failed at a seq."""

    HASH_MISMATCH = "HASH_MISMATCH"
    REFUSED = "REFUSED"
    OUT_OF_ORDER = "OUT_OF_ORDER"
    NO_HASH = "NO_HASH"
    PAYLOAD_MISMATCH = "PAYLOAD_MISMATCH"


@dataclass(frozen=True)
class LogResult:
    """The verification of one log.

    Attributes:
        source: the file name, or ``nats:<game_id>`` for a game read from NATS.
        status: :class:`Status`.
        events: events folded (the whole log when OK; up to the failing one otherwise).
        checked: recorded hashes compared (== ``events`` when OK).
        seq: the first bad seq (FAIL, or ERROR of a log without hashes), else None.
        reason: a :class:`FailReason` (FAIL), an error code (ERROR), else None.
        message: the line printed after the status (``""`` when OK).
        seconds: wall time spent folding and hashing this log (s).
    """

    source: str
    status: Status
    events: int
    checked: int
    seq: int | None = None
    reason: str | None = None
    message: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        """The report line: ``<source>: OK (n events, all hashes checked)``,
        ``<source>: FAIL seq 17: hash … != recorded …`` or ``<source>: ERROR …``."""
        if self.status is Status.OK:
            return f"{self.source}: OK ({self.events} events, all hashes checked)"
        if self.status is Status.FAIL:
            return f"{self.source}: FAIL seq {self.seq}: {self.message}"
        return f"{self.source}: ERROR {self.message}"


class LogVerifier:
    """Fold a log event by event and check each recorded hash; stops at the first fault.

    Feed events in log order with :meth:`feed` (it returns False once the log has
    failed), then read :meth:`result`. Holds one state, not the log, so a log of any
    length (or every game of a NATS stream at once) can be checked as it is read.

    Args:
        source: the name shown in the report line.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.state: Any = None
        self.events = 0
        self.checked = 0
        self.finishes = 0  # GameFinished events seen
        self.failure: tuple[Status, int | None, str, str] | None = None
        self.seconds = 0.0

    @property
    def failed(self) -> bool:
        """True once an event has failed (further events are ignored)."""
        return self.failure is not None

    def feed(self, event: dict[str, Any], where: str = "") -> bool:
        """Fold one event (a REST-shaped dict) and check its hash.

        Args:
            event: ``{"seq", "type", "actor", "payload", "state_hash", "engine_version", ...}``.
            where: ``"line 5"``/``"event #5"`` for the out-of-order message.

        Returns:
            False when the log has failed (at this event or before).
        """
        if self.failure is not None:
            return False
        start = time.perf_counter()
        try:
            return self._feed(event, where)
        finally:
            self.seconds += time.perf_counter() - start

    def _fail(self, status: Status, seq: int | None, reason: str, message: str) -> bool:
        self.failure = (status, seq, reason, message)
        return False

    def _feed(self, event: dict[str, Any], where: str) -> bool:
        expected = self.events + 1
        seq = event.get("seq")
        if seq != expected:
            at = f"{where} holds" if where else "found"
            return self._fail(
                Status.FAIL,
                expected,
                FailReason.OUT_OF_ORDER,
                f"missing or out of order: {at} seq {seq} (a log runs 1, 2, 3, ...)",
            )
        recorded = event.get("state_hash")
        if not recorded:
            return self._fail(
                Status.ERROR,
                seq,
                FailReason.NO_HASH,
                f"seq {seq} records no state_hash: a player's filtered log cannot be verified "
                "(export the game without --token once it is finished)",
            )
        try:
            self.state = engine.apply_event(
                self.state,
                str(event["type"]),
                int(event["actor"]),
                event["payload"],
                engine_version=event.get("engine_version") or None,
            )
        except engine.GameError as exc:
            return self._fail(
                Status.FAIL, seq, FailReason.REFUSED, f"the engine refuses the event: {exc.code}: {exc.message}"
            )
        except Exception as exc:  # noqa: BLE001 - a payload the engine cannot read (missing fields, wrong types)
            return self._fail(
                Status.FAIL, seq, FailReason.REFUSED, f"the engine cannot fold the event: {type(exc).__name__}: {exc}"
            )
        self.events += 1
        computed = engine.state_hash(self.state)
        self.checked += 1
        if computed != recorded:
            return self._fail(
                Status.FAIL, seq, FailReason.HASH_MISMATCH, f"hash {computed} != recorded {recorded}"
            )
        if event["type"] == EventType.GAME_FINISHED:
            # not part of the state (so not of its hash): what the rules record is checked
            self.finishes += 1
            if self.finishes > 1:
                return self._fail(Status.FAIL, seq, FailReason.PAYLOAD_MISMATCH, "a second GameFinished")
            expected_payload = engine.api.finished_payload(self.state)
            if dict(event["payload"]) != expected_payload:
                return self._fail(
                    Status.FAIL,
                    seq,
                    FailReason.PAYLOAD_MISMATCH,
                    f"GameFinished records {event['payload']}, the rules {expected_payload}",
                )
        return True

    def error(self, code: str, message: str) -> None:
        """Mark the log unreadable (a :class:`~client.logfile.LogFormatError` met while
        reading it); it is reported as ERROR."""
        if self.failure is None:
            self.failure = (Status.ERROR, None, code, message)

    def result(self) -> LogResult:
        """The outcome so far (an empty log is an ERROR)."""
        if self.failure is not None:
            status, seq, reason, message = self.failure
            return LogResult(self.source, status, self.events, self.checked, seq, reason, message, self.seconds)
        if self.events == 0:
            return LogResult(self.source, Status.ERROR, 0, 0, None, "EMPTY", "no event in the log", self.seconds)
        return LogResult(self.source, Status.OK, self.events, self.checked, seconds=self.seconds)


def verify_events(events: Iterable[dict[str, Any] | LogLine], source: str = "") -> LogResult:
    """Verify a whole log given as event dicts (or :class:`~client.logfile.LogLine`).

    Returns:
        The :class:`LogResult`; never raises for a bad log.
    """
    verifier = LogVerifier(source)
    for item in events:
        if isinstance(item, LogLine):
            ok = verifier.feed(item.event, item.where)
        else:
            ok = verifier.feed(item)
        if not ok:
            break
    return verifier.result()


def verify_file(path: str | os.PathLike[str]) -> LogResult:
    """Verify the log file at ``path`` (JSON Lines or ``{"events": [...]}``; ``"-"``:
    standard input), reading it lazily.

    Returns:
        The :class:`LogResult`: ERROR (code from :class:`~client.logfile.LogErrorCode`)
        when the file cannot be read, with the line that is wrong.
    """
    name = os.fspath(path)
    verifier = LogVerifier(name)
    try:
        for line in iter_events(name):
            if not verifier.feed(line.event, line.where):
                break
    except LogFormatError as exc:
        where = f"{exc.where}: " if exc.where else ""
        verifier.error(str(exc.code), f"{exc.code}: {where}{exc.message}")
    return verifier.result()


def is_finished(events: list[dict[str, Any]]) -> bool:
    """True when the log ends with ``GameFinished``."""
    return bool(events) and events[-1].get("type") == EventType.GAME_FINISHED
