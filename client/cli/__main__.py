"""``python -m client.cli``: the ``cellwar`` tool."""

from client.cli.main import run

run()
