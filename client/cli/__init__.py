"""``cellwar``, the event-log command-line tool (docs/replays.md): ``export``, ``verify``,
``show``. Entry point :func:`client.cli.main.main`; run as ``cellwar`` (console script)
or ``python -m client.cli``.

Unlike the SDK, this package imports the engine library: verifying and showing a log
means folding it offline.
"""

from client.cli.main import ExitCode, main

__all__ = ["ExitCode", "main"]
