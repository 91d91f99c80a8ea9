"""The HTTP clients' per-request info lines stay out of service logs unless at debug
(services/common/logging.py)."""

import logging

import pytest

from services.common.logging import QUIET_LOGGERS, configure_logging


@pytest.fixture(autouse=True)
def _restore():
    saved = {name: logging.getLogger(name).level for name in ("", *QUIET_LOGGERS)}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_http_client_lines_are_hidden_at_info():
    configure_logging("json", "info")
    assert logging.getLogger().level == logging.INFO
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
    assert not logging.getLogger("httpcore").isEnabledFor(logging.INFO)


def test_http_client_lines_are_shown_at_debug():
    configure_logging("json", "debug")
    assert logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpcore").isEnabledFor(logging.DEBUG)
