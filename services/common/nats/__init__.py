"""The one place that reaches into nats.py beyond its public API.

nats.py keeps a few things private that the services need: the bucket name and the
JetStream context of a :class:`nats.js.kv.KeyValue` (a per-message TTL on a KV key,
which ``KeyValue.put`` does not take), the connection and API prefix of a
:class:`nats.js.client.JetStreamContext` (the batched direct get of NATS 2.11, which
nats.py does not wrap). Every such access is a small function of this package, so an
upgrade of nats-py is checked here and nowhere else: ``tests/unit/test_nats_pin.py``
pins the versions this code was written for (:data:`NATS_PY_WRITTEN_FOR`) and the
private attributes it reads.

- :mod:`services.common.nats.kv`: buckets (create or open), the bucket name, the
  ``msg_ttl`` put, :class:`~services.common.nats.kv.KvMirror` (a live local copy of a
  bucket), shared by the session and the matchmaker.
- :mod:`services.common.nats.direct`: the batched direct get of a stream's messages.
- :mod:`services.common.nats.subjects`: subject filter matching (``*``, ``>``), for the
  in-memory stand-ins of NATS (no nats.py involved).

The connection itself (deadlines, pings, reconnects) is :mod:`services.common.natsconn`.
"""

from __future__ import annotations

#: nats-py versions the private access here was written and checked for: ``(lowest,
#: first one not checked)`` as ``(major, minor)``. An upgrade past it: read the private
#: attributes this package uses in nats-py's ``js/kv.py`` and ``js/client.py`` again,
#: then move the bound (tests/unit/test_nats_pin.py fails until then).
NATS_PY_WRITTEN_FOR: tuple[tuple[int, int], tuple[int, int]] = ((2, 16), (2, 17))
