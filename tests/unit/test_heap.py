"""The garbage collector's settings of a service process (services/common/heap.py).

Each check runs in a child interpreter: a frozen object left in a reference cycle is
never collected, so the test process itself is not settled.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json, weakref
from services.common import heap

class Node:
    pass

kept = [Node() for _ in range(1000)]       # alive at the start: frozen
old = gc.get_threshold()
frozen = heap.settle()
tracked = {id(o) for o in gc.get_objects()}

a, b = Node(), Node()                      # garbage made after the start: a cycle
a.other, b.other = b, a
gone = weakref.ref(a)
del a, b
gc.collect()
print(json.dumps({
    "old": old,
    "threshold": gc.get_threshold(),
    "frozen": frozen,
    "freeze_count": gc.get_freeze_count(),
    "kept_tracked": sum(id(o) in tracked for o in kept),
    "cycle_freed": gone() is None,
}))
"""


def _probe() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout)


def test_settle_freezes_the_start_and_raises_only_the_young_threshold():
    got = _probe()
    assert got["old"] == [700, 10, 10]  # CPython's defaults
    assert got["threshold"] == [10_000, 10, 10]
    # Everything alive at the start (the 1,000 nodes, the modules) is frozen: later
    # collections do not walk it.
    assert got["frozen"] == got["freeze_count"]
    assert got["frozen"] > 1000
    assert got["kept_tracked"] == 0
    # Garbage made after the start is still collected.
    assert got["cycle_freed"] is True
