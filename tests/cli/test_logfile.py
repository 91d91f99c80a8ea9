"""Log files (client/logfile.py; docs/replays.md "Log files"): JSON Lines of the REST event
objects, the ``{"events": [...]}`` document accepted wherever a log is read, clear errors
with line numbers, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.logfile import (
    EVENT_KEYS,
    LogErrorCode,
    LogFormatError,
    parse_events,
    read_events,
    write_log,
)
from tests.cli.conftest import GOLDEN, LOGS, read

LIFE = LOGS / "v2" / "life-2p-redraw.jsonl"


def test_a_golden_log_reads_as_its_rest_objects_and_writes_back_byte_for_byte(tmp_path: Path):
    for path in GOLDEN:
        events = read_events(path)
        assert events == read(path)
        assert all(tuple(e) == EVENT_KEYS for e in events)
        out = tmp_path / path.name
        assert write_log(events, out) == len(events)
        assert out.read_bytes() == path.read_bytes(), path.name


def test_the_events_document_is_read_on_one_line_and_pretty_printed(tmp_path: Path):
    events = read(LIFE)
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps({"events": events}), "utf-8")
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps({"events": events}, indent=2), "utf-8")
    assert read_events(one_line) == events
    assert read_events(pretty) == events
    assert parse_events(json.dumps({"events": events[:3]})) == events[:3]


def test_blank_lines_are_skipped():
    events = read(LIFE)[:3]
    text = "\n" + "\n\n".join(json.dumps(e) for e in events) + "\n\n"
    assert parse_events(text) == events


@pytest.mark.parametrize(
    ("text", "code", "where", "words"),
    [
        ('{"seq": 1, "type": "GameCreated", "actor": 0, "payload": {}}\n{"seq": 2,\n', "NOT_JSON", "line 2", "not JSON"),
        ('{"seq": 1, "type": "GameCreated", "actor": 0}\n', "MALFORMED", "line 1", "without payload"),
        ('\n\n{"seq": 0, "type": "GameCreated", "actor": 0, "payload": {}}\n', "MALFORMED", "line 3", "seq must be"),
        ('{"seq": 1, "type": "", "actor": 0, "payload": {}}\n', "MALFORMED", "line 1", "type must be"),
        ('{"seq": 1, "type": "X", "actor": -1, "payload": {}}\n', "MALFORMED", "line 1", "actor must be"),
        ('{"seq": 1, "type": "X", "actor": 0, "payload": []}\n', "MALFORMED", "line 1", "payload must be"),
        ('{"seq": 1, "type": "X", "actor": 0, "payload": {}, "state_hash": "abc"}\n', "MALFORMED", "line 1", "64 hex"),
        ('[1, 2]\n', "MALFORMED", "line 1", "must be a JSON object"),
        ('{"events": [{"seq": 1, "type": "X", "actor": 0, "payload": {}}, 7]}', "MALFORMED", "event #2", "JSON object"),
        ('{"events": 5}', "MALFORMED", "", '{"events": [...]}'),
        ('{"events": []}\n{"seq": 1}\n', "MALFORMED", "line 2", "after the"),
        ("", "EMPTY", "", "no event"),
        ("\n  \n", "EMPTY", "", "no event"),
        ("[" * 5000 + "]" * 5000 + "\n", "NOT_JSON", "line 1", "nested deeper than 32"),
        ('{"events":' + "[" * 5000 + "]" * 5000 + "}", "NOT_JSON", "line 1", "nested deeper than 32"),
        ('{"seq": 1, "type": "X", "actor": 0, "payload": {"a": ' + "[" * 40 + "]" * 40 + "}}\n",
         "MALFORMED", "line 1", "nested deeper than 32"),
    ],
)
def test_a_malformed_log_is_refused_naming_the_line(text: str, code: str, where: str, words: str):
    with pytest.raises(LogFormatError) as err:
        parse_events(text, source="game.jsonl")
    assert err.value.code == code
    assert err.value.where == where
    assert words in err.value.message
    assert str(err.value).startswith("game.jsonl")


def test_a_missing_file_and_bad_utf8_are_unreadable(tmp_path: Path):
    with pytest.raises(LogFormatError) as err:
        read_events(tmp_path / "nope.jsonl")
    assert err.value.code == LogErrorCode.UNREADABLE
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"seq": 1, "type": "\xff", "actor": 0, "payload": {}}\n')
    with pytest.raises(LogFormatError) as err:
        read_events(bad)
    assert err.value.code == LogErrorCode.UNREADABLE and "UTF-8" in err.value.message


def test_an_interrupted_write_leaves_no_file(tmp_path: Path):
    events = read(LIFE)

    def broken():
        yield events[0]
        raise ConnectionError("the server went away")

    target = tmp_path / "out.jsonl"
    with pytest.raises(ConnectionError):
        write_log(broken(), target)
    assert list(tmp_path.iterdir()) == []


def test_a_line_or_document_too_long_to_be_a_log_is_refused_unread(tmp_path: Path, monkeypatch):
    import client.logfile as logfile

    monkeypatch.setattr(logfile, "MAX_LINE_CHARS", 1000)
    monkeypatch.setattr(logfile, "MAX_DOCUMENT_CHARS", 5000)
    good = read(GOLDEN[0])[:2]
    lines = tmp_path / "long-line.jsonl"
    lines.write_text(json.dumps(good[0]) + "\n" + "x" * 1001 + "\n", "utf-8")
    with pytest.raises(LogFormatError) as err:
        read_events(lines)
    assert (err.value.code, err.value.where) == (LogErrorCode.TOO_LARGE, "line 2")
    assert "longer than 1,000 characters" in err.value.message
    document = tmp_path / "doc.json"
    document.write_text(json.dumps({"events": good * 40}, indent=1), "utf-8")
    assert len(document.read_text("utf-8")) > 5000
    with pytest.raises(LogFormatError) as err:
        read_events(document)
    assert err.value.code == LogErrorCode.TOO_LARGE and "document longer than 5,000" in err.value.message
    document.write_text(json.dumps({"events": good}, indent=1), "utf-8")  # a short one reads
    assert read_events(document) == good


def test_an_endless_input_is_refused_not_read_for_ever(cellwar):
    run = cellwar("verify", "/dev/zero")
    assert run.code == 2, run.err
    assert "/dev/zero: ERROR TOO_LARGE: line 1: a line longer than 67,108,864 characters" in run.out + run.err


def test_a_write_follows_links_and_never_replaces_what_is_not_a_regular_file(tmp_path: Path):
    import os
    import stat
    import threading

    events = read(GOLDEN[0])
    target = tmp_path / "target.txt"
    target.write_text("old", "utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    write_log(events, link)
    assert link.is_symlink() and read_events(target) == events  # the link stays, its target is written
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # a replaced file keeps its mode
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text("utf-8")))
    reader.start()
    write_log(events, fifo)
    reader.join(10)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and parse_events(got[0]) == events
    with pytest.raises(OSError):
        write_log(events, "/dev/full")  # written through: the device says it is full
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    fresh = tmp_path / "new.jsonl"
    write_log(events, fresh)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask


def test_a_number_too_long_for_python_is_not_json_not_a_traceback():
    line = '{"seq": ' + "9" * 5000 + ', "type": "GameCreated", "actor": 0, "payload": {}}\n'
    with pytest.raises(LogFormatError) as err:
        parse_events(line + line)
    assert err.value.code == LogErrorCode.NOT_JSON
    assert "a number of more than 4,300 digits" in err.value.message


def test_a_document_with_unknown_fields_is_refused_as_the_import_refuses_it():
    good = read(GOLDEN[0])[:2]
    with pytest.raises(LogFormatError) as err:
        parse_events(json.dumps({"events": good, "x": 1}))
    assert err.value.code == LogErrorCode.MALFORMED
    assert "unknown fields in the log document: ['x'] (it has events and origin)" in err.value.message
    assert parse_events(json.dumps({"events": good, "origin": {"file": "a.jsonl"}})) == good
