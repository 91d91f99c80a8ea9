"""The constructors of services/session/domain/commands.py spell each command's payload
byte for byte as the gRPC servicer, the disconnect clocks, the turn timers and the expiry
wrote it by hand before (compact, key-sorted JSON: a command's idempotency digest
compares bytes, so a retry recorded under the old spelling is still recognised)."""

from __future__ import annotations

import pytest

from cellwar.v1.codes import CommandType, RemovalReason
from services.session.domain.commands import Command
from services.session.domain.idempotency import command_digest

GAME = "0123456789ab"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            Command.join(GAME, "alice", command_id="k1"),
            Command(GAME, CommandType.JOIN, 0, b'{"name":"alice"}', "k1"),
        ),
        (
            Command.join(GAME, "bob", "prof_1-x", "k2"),
            Command(GAME, CommandType.JOIN, 0, b'{"name":"bob","profile_id":"prof_1-x"}', "k2"),
        ),
        (
            Command.join(GAME, "\u00e9ve"),
            Command(GAME, CommandType.JOIN, 0, b'{"name":"\\u00e9ve"}', ""),
        ),
        (
            Command.act(GAME, 2, {"type": "place", "cells": [[1, 1], [2, 3]]}, "a1"),
            Command(GAME, CommandType.ACTION, 2, b'{"cells":[[1,1],[2,3]],"type":"place"}', "a1"),
        ),
        (
            Command.end_turn(GAME, 1, "e1"),
            Command(GAME, CommandType.END_TURN, 1, b"{}", "e1"),
        ),
        (
            Command.leave(GAME, 3, "l1"),
            Command(GAME, CommandType.REMOVE_PLAYER, 3, b'{"player_id":3,"reason":"left"}', "l1"),
        ),
        (
            Command.disconnect(GAME, 2),
            Command(
                GAME,
                CommandType.REMOVE_PLAYER,
                0,
                b'{"player_id":2,"reason":"disconnected"}',
                "disconnect:p2",
            ),
        ),
        (
            Command.remove_player(GAME, 4, RemovalReason.RESIGNED, actor=4, command_id="r1"),
            Command(GAME, CommandType.REMOVE_PLAYER, 4, b'{"player_id":4,"reason":"resigned"}', "r1"),
        ),
        (
            Command.time_out(GAME, 17),
            Command(GAME, CommandType.TIME_OUT, 0, b'{"turn_seq":17}', "timeout:17"),
        ),
        (
            Command.expire(GAME),
            Command(GAME, CommandType.EXPIRE, 0, b"{}", "expire"),
        ),
    ],
    ids=["join", "join-profile", "join-non-ascii", "act", "end_turn", "leave", "disconnect",
         "remove_player", "time_out", "expire"],
)
def test_each_constructor_writes_the_payload_bytes_of_the_old_call_site(command, expected):
    assert command == expected
    assert command.payload == expected.payload  # bytes, not an equal JSON value
    assert isinstance(command.type, CommandType)


def test_the_digest_of_a_constructed_command_is_the_recorded_one():
    # the digest a log written with the hand-built payload recorded for this disconnect
    old = command_digest("remove_player", b'{"player_id":2,"reason":"disconnected"}')
    new = Command.disconnect(GAME, 2)
    assert command_digest(new.type, new.payload) == old
    assert len(old) == 16 and int(old, 16) >= 0
