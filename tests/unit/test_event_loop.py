"""The services' event loop choice (services/common/loop.py, ``CELLWAR_EVENT_LOOP``)."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from services.common import loop
from services.common.settings import Settings


async def _loop_type() -> type:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


def test_auto_runs_on_uvloop_when_installed_and_asyncio_on_request():
    assert loop.loop_name("auto") == "uvloop"
    assert loop.run(_loop_type(), "auto") is uvloop.Loop
    assert loop.run(_loop_type(), "uvloop") is uvloop.Loop
    assert not issubclass(loop.run(_loop_type(), "asyncio"), uvloop.Loop)


def test_an_unknown_choice_is_refused_by_the_settings_and_the_helper(monkeypatch):
    monkeypatch.setenv("CELLWAR_EVENT_LOOP", "trio")
    with pytest.raises(ValueError, match="event_loop"):
        Settings()
    with pytest.raises(ValueError, match="CELLWAR_EVENT_LOOP"):
        loop.loop_name("trio")
    monkeypatch.setenv("CELLWAR_EVENT_LOOP", "asyncio")
    assert Settings().event_loop == "asyncio"


def test_a_refused_setting_is_named_by_its_variable(monkeypatch):
    from services.common.settings import SettingsError, load_settings

    monkeypatch.setenv("CELLWAR_EVENT_LOOP", "uv-loop")
    monkeypatch.setenv("CELLWAR_GENERATIONS_PER_SECOND", "-1")
    with pytest.raises(SettingsError) as err:
        load_settings()
    message = str(err.value)
    assert "CELLWAR_EVENT_LOOP='uv-loop': Input should be 'auto', 'uvloop' or 'asyncio'" in message
    assert "CELLWAR_GENERATIONS_PER_SECOND='-1': Input should be greater than 0" in message
