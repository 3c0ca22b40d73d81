"""Records that fit the broker's message limit by construction.

A window's candidate set carries up to ``state.partitions.TEST_URLS`` recent URLs of the site for
validation (Figure 3's test list) next to its rules; with long URLs (3,000 URLs of 351 characters)
the record passes the producer's ``max_request_size`` and the broker's ``message.max.bytes``
(1,000,000 and 1,048,588 bytes by default) and the send fails.  Before any send,
:func:`fit_candidate_set` therefore measures the encoded record and, when it is over the budget,

1. keeps only the head of the error URLs (side information for core/validation/narrow.py), then of the test
   URLs, that fits (the test list is the log's newest first, then listed URLs; the validator samples them),
2. and only if the rules alone are still too big, drops the lowest-ranked rules (within a type
   the list is in rank order: support, then Figure 4's order) a tenth at a time, the types beyond
   the papers first, then parameter rules, substring rules last,

and says so in ``stats["trimmed"]`` (URLs and rules dropped, bytes before and after), so the
dashboard and the validator see that the set was cut.  A set that cannot be made to fit (no URL
and no rule left over the budget: a record of absurd parameters) comes back as None and is a
counted, logged skip at the caller — never a send that raises.  Trimming the test list is the
choice here (not splitting the set in several records): the validator needs one record per window
to decide a round, and a few hundred of the newest URLs already give Figure 3 its N = 40 samples
per rule many times over.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

log = logging.getLogger(__name__)

#: bytes kept free under the message limit for the record's key, headers and Kafka framing
FRAMING_BYTES = 4096
#: the order a candidate set's rules are trimmed in when the rules alone do not fit, by type: the
#: types beyond the papers first, then parameter rules, the substring rules last (each time the
#: last tenth of that type's rules: the lowest ranked)
TRIM_LAST = ("parameter", "substring")


def encoded_size(value: Any) -> int:
    """Bytes of ``value`` as JSON (what Faust's json serializer writes, give or take whitespace)."""
    return len(orjson.dumps(value))


def budget(max_message_bytes: int) -> int:
    """The bytes a record's value may take under a message limit of ``max_message_bytes``."""
    return max(1024, max_message_bytes - FRAMING_BYTES)


def fit_candidate_set(doc: dict[str, Any], max_message_bytes: int) -> dict[str, Any] | None:
    """``doc`` (a candidate set as a JSON object: ``rules``, ``test_urls``, ``stats``...) cut to fit ``max_message_bytes`` (see the module doc); the same
    object when it fits already, None when nothing can make it fit."""
    limit = budget(max_message_bytes)
    before = encoded_size(doc)
    if before <= limit:
        return doc
    out = dict(doc)
    errors = list(doc.get("error_urls") or [])  # side information: cut first
    if "error_urls" in doc:
        out["error_urls"] = _newest_that_fit(errors, before - limit)
    urls = list(doc.get("test_urls") or [])
    out["test_urls"] = _newest_that_fit(urls, encoded_size(out) - limit)
    dropped_rules = 0
    out["rules"] = list(doc.get("rules") or [])
    while encoded_size(out) > limit:
        cut = _trim_tenth(out["rules"])
        if not cut:
            log.warning("%s: a candidate set of %s bytes cannot be cut to fit %s bytes", doc.get("site"), before, limit)
            return None
        dropped_rules += cut
    out["stats"] = dict(doc.get("stats") or {})
    out["stats"]["trimmed"] = {"test_urls": len(urls) - len(out["test_urls"]), "rules": dropped_rules,
                               "bytes_before": before, "bytes_after": 0}
    if errors:
        out["stats"]["trimmed"]["error_urls"] = len(errors) - len(out.get("error_urls", []))
    trimmed = out["stats"]["trimmed"]
    while trimmed["bytes_after"] != (size := encoded_size(out)):  # the figure counts its own digits
        trimmed["bytes_after"] = size
    return out


def _type_of(rule: Any) -> str:
    return str(rule.get("type", "substring")) if isinstance(rule, dict) else ""


def _trim_tenth(rules: list) -> int:
    """Drop (in place) the last tenth (at least one) of the first group of the trim order that has
    rules: every type beyond :data:`TRIM_LAST` together, then each of those; how many were dropped."""
    groups = [lambda t: t not in TRIM_LAST, *((lambda t, k=k: t == k) for k in TRIM_LAST)]
    for in_group in groups:
        at = [i for i, r in enumerate(rules) if in_group(_type_of(r))]
        if at:
            gone = set(at[len(at) - max(1, len(at) // 10):])
            rules[:] = [r for i, r in enumerate(rules) if i not in gone]
            return len(gone)
    return 0


def _newest_that_fit(urls: list[str], excess: int) -> list[str]:
    """The longest head of ``urls`` (newest first) whose tail removed frees ``excess`` bytes."""
    freed, keep = 0, len(urls)
    while keep and freed < excess:
        keep -= 1
        freed += encoded_size(urls[keep]) + 1  # the string and its comma
    return urls[:keep]
