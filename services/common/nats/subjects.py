"""NATS subject filters, for the in-memory stand-ins of NATS (a KV watch's keys, a
subscription's subjects): services/matchmaker/memory.py matches with it.

Source: NATS docs, "Subject-Based Messaging" -> "Wildcards": tokens are separated by
``.``; ``*`` matches exactly one token; ``>``, the last token of a filter, matches one
or more tokens.
"""

from __future__ import annotations


def subject_matches(pattern: str, subject: str) -> bool:
    """True when ``subject`` (e.g. ``"t.abc"``) matches the filter ``pattern`` (e.g.
    ``"t.>"``, ``"r.*.p"``): tokens split on ``.``, ``*`` one token, a final ``>`` one
    or more."""
    want, have = pattern.split("."), subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(have) > i
        if i >= len(have) or (token != "*" and token != have[i]):
            return False
    return len(want) == len(have)
