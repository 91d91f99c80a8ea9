"""Event-log files (docs/replays.md "Log files"): read and write a game's log as JSON Lines.

A log file holds one event per line, exactly the objects ``GET /game/{id}/events``
returns, keys in that order::

    {"seq": 1, "type": "GameCreated", "actor": 0, "payload": {...},
     "time": "2025-01-01T00:00:01+00:00", "state_hash": "59…", "engine_version": "2"}

``state_hash`` is absent from a player's fog-filtered log (a hash would leak what the
player may not see). Wherever a log is read, the document ``{"events": [...]}`` that
``GET /game/{id}/events`` answers is accepted too (one line or pretty-printed).

This module knows the file shapes only (no engine, no network), so every tool that reads
or writes logs shares it: ``cellwar export`` writes with :func:`write_jsonl`,
``cellwar verify`` and ``cellwar show`` read with :func:`iter_events` /
:func:`read_events`, and a later ``cellwar import`` can post what :func:`read_events`
returns.

Errors are :class:`LogFormatError` with a machine code (:class:`LogErrorCode`) and the
line (or, in a document, the event index) where the file went wrong.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from services.common.jsonwire import (
    LONG_NUMBER,
    MAX_EVENT_DEPTH,
    STATE_HASH,
    nested_deeper,
    unknown_log_fields,
)

#: Keys of an event object, in the order ``GET /game/{id}/events`` writes them.
EVENT_KEYS = ("seq", "type", "actor", "payload", "time", "state_hash", "engine_version")
#: Keys every event must have (``time``, ``state_hash`` and ``engine_version`` may be
#: missing: ``state_hash`` is left out of a player's filtered log).
REQUIRED_KEYS = ("seq", "type", "actor", "payload")
#: The name that means standard input / output.
STDIO = "-"


class LogErrorCode(StrEnum):
    """Machine codes of a log file that cannot be read."""

    #: The file (or standard input) cannot be opened or read.
    UNREADABLE = "UNREADABLE"
    #: A line (or the document) is not JSON.
    NOT_JSON = "NOT_JSON"
    #: A JSON value that is not an event object of the REST shape.
    MALFORMED = "MALFORMED"
    #: The file holds no event.
    EMPTY = "EMPTY"
    #: A line longer than :data:`MAX_LINE_CHARS`, or a document longer than
    #: :data:`MAX_DOCUMENT_CHARS` (read no further: an endless input such as /dev/zero, a
    #: file that is not a log).
    TOO_LARGE = "TOO_LARGE"


#: Longest line of a JSON Lines log (characters): no event of a game comes near it.
MAX_LINE_CHARS = 64 * 1024 * 1024
#: Longest ``{"events": [...]}`` document (characters), read whole.
MAX_DOCUMENT_CHARS = 512 * 1024 * 1024


class LogFormatError(ValueError):
    """A log file that cannot be read.

    Attributes:
        code: a :class:`LogErrorCode`.
        where: ``"line 5"`` (JSON Lines), ``"event #5"`` (an ``{"events": [...]}``
            document, 1-based) or ``""`` for the file as a whole.
        message: what is wrong, for a person.
        source: the file's name (``"-"`` for standard input), "" when unknown.
    """

    def __init__(self, code: LogErrorCode, message: str, where: str = "", source: str = "") -> None:
        self.code = code
        self.where = where
        self.message = message
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        place = ": ".join(p for p in (self.source, self.where) if p)
        return f"{place}: {self.message}" if place else self.message

    def located(self, source: str) -> LogFormatError:
        """The same error naming ``source`` as its file."""
        return LogFormatError(self.code, self.message, self.where, source)


@dataclass(frozen=True)
class LogLine:
    """One event read from a file, with where it was.

    Attributes:
        where: ``"line n"`` or ``"event #n"`` (for messages).
        index: position in the file, 1-based (the n-th event, blank lines not counted).
        event: the event object (a dict in the REST shape, keys as read).
    """

    where: str
    index: int
    event: dict[str, Any]


def check_event(obj: Any, where: str = "") -> dict[str, Any]:
    """Check that ``obj`` is an event object of the REST shape; return it unchanged.

    Args:
        obj: a parsed JSON value.
        where: ``"line 5"`` or ``"event #5"``, for the error.

    Raises:
        LogFormatError: ``MALFORMED`` naming the field (``seq`` a positive integer,
            ``type`` a non-empty string, ``actor`` an integer >= 0, ``payload`` an object,
            ``time``/``engine_version`` strings, ``state_hash`` 64 hex characters).
    """
    if not isinstance(obj, dict):
        raise LogFormatError(LogErrorCode.MALFORMED, f"an event must be a JSON object, got {_kind(obj)}", where)
    if nested_deeper(obj, MAX_EVENT_DEPTH):
        raise LogFormatError(LogErrorCode.MALFORMED, f"an event nested deeper than {MAX_EVENT_DEPTH} levels", where)
    missing = [k for k in REQUIRED_KEYS if k not in obj]
    if missing:
        raise LogFormatError(LogErrorCode.MALFORMED, f"event without {', '.join(missing)}", where)
    seq, etype, actor, payload = obj["seq"], obj["type"], obj["actor"], obj["payload"]
    if not _is_int(seq) or seq < 1:
        raise LogFormatError(LogErrorCode.MALFORMED, f"seq must be an integer >= 1, got {seq!r}", where)
    if not isinstance(etype, str) or not etype:
        raise LogFormatError(LogErrorCode.MALFORMED, f"type must be a non-empty string, got {etype!r}", where)
    if not _is_int(actor) or actor < 0:
        raise LogFormatError(LogErrorCode.MALFORMED, f"actor must be an integer >= 0, got {actor!r}", where)
    if not isinstance(payload, dict):
        raise LogFormatError(LogErrorCode.MALFORMED, f"payload must be a JSON object, got {_kind(payload)}", where)
    for key in ("time", "engine_version"):
        if key in obj and not isinstance(obj[key], str):
            raise LogFormatError(LogErrorCode.MALFORMED, f"{key} must be a string, got {obj[key]!r}", where)
    if "state_hash" in obj and not (isinstance(obj["state_hash"], str) and STATE_HASH.fullmatch(obj["state_hash"])):
        raise LogFormatError(
            LogErrorCode.MALFORMED, f"state_hash must be 64 hex characters, got {obj['state_hash']!r}", where
        )
    return obj


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _document_events(doc: Any, source: str) -> Iterator[LogLine]:
    events = doc.get("events") if isinstance(doc, dict) else None
    unknown = unknown_log_fields(doc) if isinstance(doc, dict) else None
    if unknown:
        raise LogFormatError(LogErrorCode.MALFORMED, unknown, "", source)
    if not isinstance(events, list):
        raise LogFormatError(
            LogErrorCode.MALFORMED,
            'a JSON document must be {"events": [...]} (the answer of GET /game/{id}/events)',
            "",
            source,
        )
    for i, obj in enumerate(events, start=1):
        where = f"event #{i}"
        try:
            yield LogLine(where, i, check_event(obj, where))
        except LogFormatError as exc:
            raise exc.located(source) from None


def _loads(text: str) -> Any:
    """``json.loads``, with a value nested too deep for Python's parser, or a number too
    long for its int limit, reported as a ``JSONDecodeError`` (a hostile file must give
    the one-line error, not a traceback)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested deeper than {MAX_EVENT_DEPTH} levels", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's int-size limit
        raise json.JSONDecodeError(LONG_NUMBER, text, 0) from None


def _parse_line(text: str, lineno: int, source: str) -> Any:
    try:
        return _loads(text)
    except json.JSONDecodeError as exc:
        raise LogFormatError(
            LogErrorCode.NOT_JSON, f"not JSON: {exc.msg} (column {exc.colno})", f"line {lineno}", source
        ) from None


def _bounded_lines(stream: IO[str], source: str) -> Iterator[str]:
    """The lines of ``stream``, none read past :data:`MAX_LINE_CHARS` characters.

    Raises:
        LogFormatError: ``TOO_LARGE`` for a longer line (its number).
    """
    lineno = 0
    while True:
        raw = stream.readline(MAX_LINE_CHARS + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_CHARS:
            raise LogFormatError(
                LogErrorCode.TOO_LARGE,
                f"a line longer than {MAX_LINE_CHARS:,} characters: not an event log",
                f"line {lineno}",
                source,
            )
        yield raw


def _bounded_rest(stream: IO[str], limit: int, source: str) -> str:
    """The rest of ``stream``, at most ``limit`` characters.

    Raises:
        LogFormatError: ``TOO_LARGE`` when more follows.
    """
    rest = stream.read(max(limit, 0) + 1)
    if len(rest) > limit:
        raise LogFormatError(
            LogErrorCode.TOO_LARGE,
            f"a document longer than {MAX_DOCUMENT_CHARS:,} characters: not an event log",
            "",
            source,
        )
    return rest


def iter_lines(stream: IO[str], source: str = "") -> Iterator[LogLine]:
    """The events of an open text stream, one :class:`LogLine` at a time.

    JSON Lines are read lazily (a long log is never held whole); an ``{"events": [...]}``
    document (its first line is that object, or the first line is not JSON and the
    whole text is) is read at once. Blank lines are skipped.

    Raises:
        LogFormatError: a line that is not JSON (``NOT_JSON``, with its line number),
            not an event (``MALFORMED``), no event at all (``EMPTY``), or a line or
            document too long to be a log (``TOO_LARGE``: :data:`MAX_LINE_CHARS`,
            :data:`MAX_DOCUMENT_CHARS`), read no further than that.
    """
    lineno = 0
    count = 0
    for raw in _bounded_lines(stream, source):
        lineno += 1
        text = raw.strip()
        if not text:
            continue
        if count == 0:
            try:
                first = _loads(text)
            except json.JSONDecodeError:
                first = None
                # Perhaps a pretty-printed {"events": [...]} document: read it whole.
                rest = raw + _bounded_rest(stream, MAX_DOCUMENT_CHARS - len(raw), source)
                try:
                    doc = _loads(rest)
                except json.JSONDecodeError:
                    _parse_line(text, lineno, source)  # raises, naming the first line
                    raise AssertionError("unreachable") from None
                yield from _document_events(doc, source)
                return
            if isinstance(first, dict) and "events" in first and "seq" not in first:
                yield from _document_events(first, source)
                for extra in _bounded_lines(stream, source):  # nothing may follow the document
                    lineno += 1
                    if extra.strip():
                        raise LogFormatError(
                            LogErrorCode.MALFORMED,
                            "text after the {\"events\": [...]} document",
                            f"line {lineno}",
                            source,
                        )
                return
            obj = first
        else:
            obj = _parse_line(text, lineno, source)
        count += 1
        where = f"line {lineno}"
        try:
            yield LogLine(where, count, check_event(obj, where))
        except LogFormatError as exc:
            raise exc.located(source) from None
    if count == 0:
        raise LogFormatError(LogErrorCode.EMPTY, "no event in the file", "", source)


def open_log(path: str | os.PathLike[str]) -> IO[str]:
    """Open a log for reading as UTF-8 text (``"-"``: standard input).

    Raises:
        LogFormatError: ``UNREADABLE`` when the file cannot be opened.
    """
    name = os.fspath(path)
    if name == STDIO:
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="strict")
    try:
        return open(name, encoding="utf-8", errors="strict")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise LogFormatError(LogErrorCode.UNREADABLE, exc.strerror or str(exc), "", name) from None


def iter_events(path: str | os.PathLike[str]) -> Iterator[LogLine]:
    """The events of the log file at ``path`` (``"-"``: standard input), lazily.

    Raises:
        LogFormatError: unreadable file, bad UTF-8, or a bad line (see :func:`iter_lines`).
    """
    name = os.fspath(path)
    stream = open_log(name)
    try:
        yield from iter_lines(stream, name)
    except UnicodeDecodeError as exc:
        raise LogFormatError(LogErrorCode.UNREADABLE, f"not UTF-8 text: {exc.reason}", "", name) from None
    except OSError as exc:
        raise LogFormatError(LogErrorCode.UNREADABLE, exc.strerror or str(exc), "", name) from None
    finally:
        if name == STDIO:
            stream.detach()  # leave standard input open for the process
        else:
            stream.close()


def read_events(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All events of a log file (JSON Lines or ``{"events": [...]}``), in file order.

    Returns:
        The event dicts as read (REST shape), unchanged.

    Raises:
        LogFormatError: see :func:`iter_events`.
    """
    return [line.event for line in iter_events(path)]


def parse_events(text: str, source: str = "") -> list[dict[str, Any]]:
    """The events of a log given as text (a JSON Lines body or a document).

    Raises:
        LogFormatError: see :func:`iter_lines`.
    """
    return [line.event for line in iter_lines(io.StringIO(text), source)]


def event_line(event: dict[str, Any]) -> str:
    """One event as a JSON Lines line (compact JSON, UTF-8 characters kept, keys in
    the order given, ``\\n`` at the end): the format of the golden logs
    (``tools/gen_golden_logs.py``)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_jsonl(events: Iterable[dict[str, Any]], stream: IO[str]) -> int:
    """Write events to an open text stream as JSON Lines; returns how many were written."""
    n = 0
    for event in events:
        stream.write(event_line(event))
        n += 1
    return n


def write_log(events: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write a log file atomically (a temporary file in the target's folder, then renamed
    over it), so an interrupted write never leaves half a log; ``"-"`` writes to standard
    output. A symbolic link is followed (its target is written, the link stays); a path
    that is not a regular file (a device such as ``/dev/stdout``, a FIFO) is written
    straight through, never replaced. A new file gets the usual mode (0666 less the
    umask); a replaced one keeps its mode.

    Returns:
        The number of events written.

    Raises:
        OSError: the folder or the file cannot be written.
    """
    name = os.fspath(path)
    if name == STDIO:
        n = write_jsonl(events, sys.stdout)
        sys.stdout.flush()
        return n
    target = Path(os.path.realpath(name))
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "w", encoding="utf-8", newline="\n") as out:
            return write_jsonl(events, out)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            n = write_jsonl(events, out)
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
