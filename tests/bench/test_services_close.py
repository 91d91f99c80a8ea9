"""The bench's servers (:class:`bench._stack.Services`) never outlive it: a close
interrupted while it waits for one (a second Ctrl-C, SIGTERM taken as an interrupt by
``bench.run``) kills the children it has not stopped yet."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from bench import run
from bench._stack import Child, Services

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_an_interrupted_close_kills_the_children_left(tmp_path: Path, monkeypatch):
    svc = Services(tmp_path)
    older = svc._spawn("older", SLEEPER)
    newer = svc._spawn("newer", SLEEPER)

    def interrupted(self: Child, timeout: float = 10.0) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Child, "stop", interrupted)
    with pytest.raises(KeyboardInterrupt):
        svc.close()
    assert older.proc.poll() == -signal.SIGKILL
    assert newer.proc.poll() == -signal.SIGKILL
    assert svc.children == []


def test_sigterm_is_taken_as_an_interrupt(monkeypatch):
    monkeypatch.setattr(signal, "signal", lambda signum, handler: handlers.update({signum: handler}))
    handlers: dict = {}
    run._interrupt_on_sigterm()
    with pytest.raises(KeyboardInterrupt):
        handlers[signal.SIGTERM](signal.SIGTERM, None)
