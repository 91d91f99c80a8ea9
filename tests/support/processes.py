"""Processes below this one, from Linux ``/proc`` (no dependency): which ``nats-server``
processes the tests started (``make test-fast`` checks none does)."""

from __future__ import annotations

import os
from pathlib import Path


def descendants(root: int | None = None) -> dict[int, str]:
    """``{pid: command name}`` of every process descending from ``root`` (default this
    one), ``root`` excluded; empty where ``/proc`` is not there."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        names[pid] = stat[stat.index("(") + 1 : stat.rindex(")")]
        parents[pid] = int(stat[stat.rindex(")") + 2 :].split()[1])
    top = os.getpid() if root is None else root
    found = {top}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    found.discard(top)
    return {pid: names.get(pid, "") for pid in sorted(found)}


def nats_servers() -> list[int]:
    """Pids of the ``nats-server`` processes descending from this one."""
    return [pid for pid, name in descendants().items() if name == "nats-server"]
