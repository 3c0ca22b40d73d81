"""Typed Faust records for the topics, with pinned namespaces (docs/topics.md).  JSON on the wire.

The raw topic is consumed as bytes and decoded here with :func:`decode_raw`, so junk on the topic
(binary, wrong JSON, wrong types, oversize) becomes a counted reject with a reason, never a crash.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional

import faust

from dust.errors import ParseError


class RawBatch(faust.Record, namespace="dustbuster.raw.v1", serializer="json"):
    """Access-log lines of one site (key = site).  ``seq`` numbers a producer's batches."""

    site: str
    lines: List[str]
    format: str = "auto"
    scheme: str = "http"
    source: str = ""
    seq: int = 0
    header: str = ""  #: the file's header row, for formats that need one (tsv)


class CandidateSet(faust.Record, namespace="dustbuster.candidates.v1", serializer="json"):
    """Likely rules of one site at one window (key = site)."""

    site: str
    window: int
    rules: List[Any]
    param_rules: List[Any]
    stats: Any
    params: Any
    test_urls: List[str] = []  #: recent URLs of the site, for validation (Figure 3's test list)


class RuleSet(faust.Record, namespace="dustbuster.ruleset.v1", serializer="json"):
    """The validated rules of one site, in canonization order (key = site; compacted topic)."""

    site: str
    version: int
    created: float
    rules: List[Any]
    schema: str = "dustbuster/ruleset@1"
    stats: Any = None


class Reject(faust.Record, namespace="dustbuster.rejects.v1", serializer="json"):
    """A dead letter: what was rejected, where from, and why."""

    reason: str
    detail: str = ""
    site: Optional[str] = None
    line: str = ""
    topic: str = ""
    partition: int = -1
    offset: int = -1


class CanonicalURL(faust.Record, namespace="dustbuster.canonical.v1", serializer="json"):
    """One frontier URL, canonicalized (the output topic; key = site)."""

    url: str
    canonical: str
    site: Optional[str]
    rules: List[str]  #: display form of each rule that changed it, in order
    version: Optional[int]  #: the site's rule-set version used (None: no rule set)
    seen: bool  #: the canonical URL was already passed on from this frontier partition
    signature: str  #: xxhash64 of the canonical URL, hex
    normalized: bool = True


MAX_URL_CHARS = 8192


def decode_frontier(key: bytes | None, data: bytes | None, max_urls: int) -> tuple[str | None, list[str], list[tuple[str, str]]]:
    """A frontier message: ``(site or None, good urls, [(bad url, reason)])``.  The value is a JSON object ``{"url": ...}`` or
    ``{"urls": [...]}`` (with an optional ``"site"``), or plain UTF-8 text with one URL a line.
    The key, when present, names the site.  Raises ParseError with a reason."""
    if data is None:
        raise ParseError("empty_message", "no value")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("bad_encoding", "the message is not UTF-8") from None
    site = None
    if key:
        try:
            site = key.decode("utf-8").strip().lower() or None
        except UnicodeDecodeError:
            raise ParseError("bad_record", "the key is not UTF-8") from None
    if text.lstrip().startswith(("{", "[", '"')):
        try:
            obj = json.loads(text)
        except ValueError:
            raise ParseError("bad_json", "the message looks like JSON but does not parse") from None
        if not isinstance(obj, dict):
            raise ParseError("bad_record", "a JSON frontier message must be an object")
        if "urls" in obj:
            urls = obj["urls"]
        elif "url" in obj:
            urls = [obj["url"]]
        else:
            raise ParseError("bad_record", "no 'url' or 'urls'")
        if isinstance(obj.get("site"), str) and not site:
            site = obj["site"].strip().lower() or None
    else:
        urls = [u.strip() for u in text.splitlines() if u.strip()]
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise ParseError("bad_record", "'urls' must be a list of strings")
    if not urls:
        raise ParseError("empty_message", "no URL in the message")
    if len(urls) > max_urls:
        raise ParseError("oversized", f"{len(urls)} URLs > {max_urls}")
    good, bad = [], []
    for u in urls:
        if len(u) > MAX_URL_CHARS:
            bad.append((u, "url_too_long"))
        elif any(c in u for c in "\x00\x02\x03\n\r"):
            bad.append((u, "bad_url"))
        else:
            good.append(u)
    return site, good, bad


def decode_raw(data: bytes | None, max_lines: int, max_line_bytes: int) -> RawBatch:
    if data is None:
        raise ParseError("empty_message", "no value")
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise ParseError("bad_json", "the message is not UTF-8 JSON") from None
    if not isinstance(obj, dict):
        raise ParseError("bad_record", "the message is not a JSON object")
    site, lines = obj.get("site"), obj.get("lines")
    if not isinstance(site, str) or not site or len(site) > 255 or any(c in site for c in "/\x00 "):
        raise ParseError("bad_record", "missing or bad 'site'")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise ParseError("bad_record", "'lines' must be a list of strings")
    if len(lines) > max_lines:
        raise ParseError("oversized", f"{len(lines)} lines > {max_lines}")
    fmt = obj.get("format", "auto")
    scheme = obj.get("scheme", "http")
    if not isinstance(fmt, str) or not isinstance(scheme, str):
        raise ParseError("bad_record", "'format' and 'scheme' must be strings")
    header = obj.get("header", "")
    if not isinstance(header, str) or len(header) > max_line_bytes:
        raise ParseError("bad_record", "'header' must be a string")
    try:
        seq = int(obj.get("seq", 0) or 0)
    except (TypeError, ValueError):
        raise ParseError("bad_record", "'seq' must be an integer") from None
    return RawBatch(site=site.lower(), lines=lines, format=fmt, scheme=scheme,
                    source=str(obj.get("source", ""))[:200], seq=seq, header=header)


def encode(record: faust.Record) -> bytes:
    return record.dumps(serializer="json")
