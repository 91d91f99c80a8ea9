"""A ``CELLWAR_*`` variable no program reads is warned about at start, with the closest
known name; pydantic-settings alone would ignore it silently."""

from __future__ import annotations

import subprocess
import sys

from services.common.settings import known_variables, unknown_variables


def test_a_typo_names_the_closest_setting() -> None:
    lines = unknown_variables({"CELLWAR_HTTP_PROT": "8001", "CELLWAR_HTTP_PORT": "8000", "PATH": "/bin"})
    assert lines == ["CELLWAR_HTTP_PROT is not a CellWar setting (ignored); did you mean CELLWAR_HTTP_PORT?"]


def test_a_name_far_from_any_gets_no_guess() -> None:
    assert unknown_variables({"CELLWAR_ZZZZZZZZZZZZ": "1"}) == ["CELLWAR_ZZZZZZZZZZZZ is not a CellWar setting (ignored)"]


def test_known_names_are_quiet() -> None:
    env = {name: "x" for name in known_variables()}
    assert unknown_variables(env) == []
    assert "CELLWAR_NATS_URL" in known_variables() and "CELLWAR_TEST_NATS_URL" in known_variables()


def test_a_service_start_prints_the_warning() -> None:
    code = "from services.common.settings import load_settings; load_settings()"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={"CELLWAR_HTTP_PROT": "8001", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=True,
    )
    assert "warning: CELLWAR_HTTP_PROT is not a CellWar setting (ignored); did you mean CELLWAR_HTTP_PORT?" in proc.stderr


def test_the_log_cli_warns_too() -> None:
    """The ``cellwar`` CLI reads ``CELLWAR_URL``: a misspelt one is named, not ignored."""
    proc = subprocess.run(
        [sys.executable, "-m", "client.cli", "verify", "--help"],
        env={"CELLWAR_URLL": "http://localhost:8400", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0
    # --help exits inside the parser: the warning comes with any real command instead
    proc = subprocess.run(
        [sys.executable, "-m", "client.cli", "verify", "/nonexistent-cellwar-log.jsonl"],
        env={"CELLWAR_URLL": "http://localhost:8400", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60,
    )
    assert "warning: CELLWAR_URLL is not a CellWar setting (ignored); did you mean CELLWAR_URL?" in proc.stderr
