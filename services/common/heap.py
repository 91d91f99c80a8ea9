"""The garbage collector's settings of a service process, applied once it has started.

CPython frees most objects by reference counting; its cyclic collector
(https://docs.python.org/3/library/gc.html) finds the rest by walking the tracked
objects, generation by generation. A young collection runs every ``threshold0`` net
allocations of container objects (700 by default) and every tenth one collects the middle
generation too; a full collection, every tenth of those (and only when the objects
promoted since the last one pass a quarter of the old generation), walks every tracked
object of the process. A service's old generation is mostly what it built at start and
keeps to its end: its modules, FastAPI's routes and pydantic's models, gRPC and protobuf.
That is ~90,000 objects in the gateway and ~55,000 in a session or an engine instance, and
a full collection walks them all while it blocks the event loop.

:func:`settle` is called by each service's entry point once its server is built, before
it serves:

* ``gc.collect()`` then ``gc.freeze()``: what survived the start moves to the permanent
  generation, which later collections skip (``gc.freeze``'s documentation);
* ``gc.set_threshold(YOUNG_THRESHOLD, 10, 10)``: a young collection every 10,000 net
  allocations instead of 700. It walks the same young objects in fewer, larger steps and
  promotes fewer of the short-lived objects of a request still in flight, so the middle
  and old generations fill more slowly. The other two ratios keep their defaults.

What it saves, per process and phase of ``make bench``'s ``actions`` row (a full
collection had paused the event loop for 40-90 ms): docs/architecture/batching.md,
"Garbage collection".

Reference counting still frees a frozen object that nothing refers to any more, but a
frozen object left in a reference cycle is never collected. So :func:`settle` is for a
process's entry point, after its start, never for a library or a test process that
builds and drops many apps.
"""

from __future__ import annotations

import gc

#: Net allocations of container objects between two young collections (CPython's default
#: is 700).
YOUNG_THRESHOLD = 10_000


def settle() -> int:
    """Collect, freeze what survived the start, and raise the young threshold
    (module docstring). Returns the number of objects frozen."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    return gc.get_freeze_count()
