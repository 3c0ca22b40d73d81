"""Typed Faust records for the topics, with pinned namespaces (docs/topics.md).  JSON on the wire.

The raw and frontier topics are consumed as bytes and decoded here (:func:`decode_raw`,
:func:`decode_frontier`; candidate sets: :func:`decode_candidates`), so junk on a topic (binary,
wrong JSON, NaN/Infinity/1e400, huge integers, deep nesting, wrong types, oversize) becomes a
counted reject with a reason, never a crash: these functions raise nothing but ParseError.
"""

from __future__ import annotations

import base64
import re
from typing import Any, List, Optional

import faust

from dustbuster.core.errors import REJECT_EXCERPT_CHARS, ParseError
from dustbuster.core.model.rules import LEGACY_LISTS, SCHEMA_RULESET
from dustbuster.core.strictjson import loads_strict


class RawBatch(faust.Record, namespace="dustbuster.raw.v1", serializer="json"):
    """Access-log lines of one site (key = site).  ``seq`` numbers a producer's batches."""

    site: str
    lines: List[Any]  #: str, or {"b64": ...} for a line that is not UTF-8 (:func:`wire_line`)
    format: str = "auto"
    scheme: str = "http"
    source: str = ""
    seq: int = 0
    header: str = ""  #: the file's header row, for formats that need one (tsv)


class CandidateSet(faust.Record, namespace="dustbuster.candidates.v1", serializer="json"):
    """Likely rules of one site at one window (key = site): one ``rules`` list of every type
    (dustbuster/mine@2's; a record with the three lists of before is read by :func:`decode_candidates`)."""

    site: str
    window: int
    rules: List[Any]
    stats: Any
    params: Any
    test_urls: List[str] = []  #: recent URLs of the site, for validation (Figure 3's test list)
    #: URLs the site's log holds only with status >= 400, for the validator's narrowing (core/validation/narrow.py)
    error_urls: List[str] = []


class RuleSet(faust.Record, namespace="dustbuster.ruleset.v1", serializer="json"):
    """The validated rules of one site, in canonization order (key = site; compacted topic)."""

    site: str
    version: int
    created: float
    rules: List[Any]
    schema: str = SCHEMA_RULESET
    stats: Any = None
    #: {"alg": "ed25519", "key_id": ..., "sig": base64} over the rest (dustbuster.core.model.signing); None: unsigned
    signature: Any = None


class Reject(faust.Record, namespace="dustbuster.rejects.v1", serializer="json"):
    """A dead letter: what was rejected, where from, and why."""

    reason: str
    detail: str = ""
    site: Optional[str] = None
    line: str = ""
    topic: str = ""
    partition: int = -1
    offset: int = -1


def dead_letter(reason: str, detail: str, line: str | bytes | None, *, topic: str, partition: int, offset: int,
                site: str | None = None) -> Reject:
    """The Reject record of a bad line or message: its first :data:`~dustbuster.core.errors.REJECT_EXCERPT_CHARS` characters (a
    message's first bytes, decoded with replacement), why, and where it came from."""
    if not isinstance(line, str):
        line = (line if isinstance(line, bytes) else b"")[:REJECT_EXCERPT_CHARS].decode("utf-8", "replace")
    return Reject(reason=reason, detail=_text(detail), site=None if site is None else _text(site),
                  line=_text(line[:REJECT_EXCERPT_CHARS]), topic=topic, partition=partition, offset=offset)


def _text(s: str) -> str:
    """``s`` as text JSON can carry: a lone surrogate (a line decoded with ``surrogateescape``, a
    ``\udc80`` in a JSON string) becomes ``?`` — a dead letter must always be sendable."""
    return s.encode("utf-8", "replace").decode("utf-8")


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
            obj = loads_strict(text)
        except ParseError as exc:
            if exc.reason == "bad_json":
                raise ParseError("bad_json", "the message looks like JSON but does not parse") from None
            raise
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
            if site is not None and (len(site) > 255 or not site.isprintable()):
                raise ParseError("bad_record", "bad 'site'")
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
        reason = url_problem(u)
        if reason:
            bad.append((u, reason))
        else:
            good.append(u)
    return site, good, bad


#: characters no URL we canonicalize may hold: C0 controls (CR, LF, TAB, NUL...), DEL, and lone
#: surrogates (not text).  Normalization would drop them silently, so they are rejected instead.
_BAD_URL_CHAR = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be canonicalized (``url_too_long``, ``bad_url_char``, ``bad_url_surrogate``), or None."""
    if len(url) > MAX_URL_CHARS:
        return "url_too_long"
    m = _BAD_URL_CHAR.search(url)
    if m is None:
        return None
    return "bad_url_surrogate" if m.group() >= "\ud800" else "bad_url_char"


def wire_line(raw: bytes, max_chars: int) -> str | dict:
    """A log file's line (bytes, line end stripped) as a raw record's ``lines`` element, so that
    the worker judges it exactly as ``dustbuster mine`` judges the bytes: UTF-8 text as a string;
    anything else as ``{"b64": base64 of the bytes}``, which :func:`decode_raw` turns back into the
    bytes (rejected ``bad_encoding``, as ``mine`` rejects them).  A line over the cap ``max_chars``
    (``oversized_line`` wherever it is read) travels cut: text to ``max_chars + 1`` characters,
    bytes to their first ``max_chars`` and their first invalid sequence (still not UTF-8)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(raw) > max_chars:
            raw = raw[:max_chars] + raw[exc.start:exc.end]
        return {"b64": base64.b64encode(raw).decode("ascii")}
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars + 1]
    if cut.isspace() and not text.isspace():  # not blank where the whole line is not
        cut = text[:max_chars] + text.lstrip()[0]
    return cut


def _wire_bytes(item: dict) -> bytes | dict:
    """A ``{"b64": ...}`` element's bytes; anything else stays as it is (``not_a_string``)."""
    b64 = item.get("b64")
    if len(item) != 1 or not isinstance(b64, str):
        return item
    try:
        return base64.b64decode(b64, validate=True)
    except ValueError:
        return item


def decode_raw(data: bytes | None, max_lines: int, max_line_bytes: int) -> RawBatch:
    """A raw-topic message; raises ParseError with a reason.  ``lines`` must be a list; a
    ``{"b64": ...}`` element becomes its bytes (:func:`wire_line`); another element that is not a
    string stays in it, for :func:`dustbuster.logs.reader.parse_lines` to reject alone, so one
    bad line never costs the good lines of its message."""
    if data is None:
        raise ParseError("empty_message", "no value")
    obj = loads_strict(data)
    if not isinstance(obj, dict):
        raise ParseError("bad_record", "the message is not a JSON object")
    site, lines = obj.get("site"), obj.get("lines")
    if not isinstance(site, str) or not site or len(site) > 255 or any(c in site for c in "/\x00 ") or not site.isprintable():
        raise ParseError("bad_record", "missing or bad 'site'")
    if not isinstance(lines, list):
        raise ParseError("bad_record", "'lines' must be a list of strings")
    if len(lines) > max_lines:
        raise ParseError("oversized", f"{len(lines)} lines > {max_lines}")
    lines = [_wire_bytes(ln) if isinstance(ln, dict) else ln for ln in lines]
    fmt = obj.get("format", "auto")
    scheme = obj.get("scheme", "http")
    if not isinstance(fmt, str) or not isinstance(scheme, str):
        raise ParseError("bad_record", "'format' and 'scheme' must be strings")
    header = obj.get("header", "")
    if not isinstance(header, str) or len(header) > max_line_bytes:
        raise ParseError("bad_record", "'header' must be a string")
    seq = obj.get("seq", 0) or 0
    if isinstance(seq, str) and len(seq) <= 20 and seq.strip().lstrip("-").isdigit():
        seq = int(seq)
    elif isinstance(seq, float) and seq.is_integer():
        seq = int(seq)
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise ParseError("bad_record", "'seq' must be an integer")
    source = obj.get("source", "")
    return RawBatch(site=site.lower(), lines=lines, format=fmt, scheme=scheme,
                    source=(source if isinstance(source, str) else "")[:200], seq=seq, header=header)


def decode_candidates(data: bytes | None) -> CandidateSet:
    """A candidates-topic message (what a worker's window emits); raises ParseError with a reason.
    Only the shape is checked here; each rule is parsed (and a bad one skipped) by the validator."""
    if data is None:
        raise ParseError("empty_message", "no value")
    return candidates_from_json(loads_strict(data, surrogates=False))


def candidates_from_json(obj: Any) -> CandidateSet:
    """A candidate set from its JSON object (a message, or one the validator stored): one ``rules``
    list, or the three lists of a record written by an older version (``rules``, ``param_rules``,
    ``general_rules``) joined as dustbuster.core.model.rules.LEGACY_LISTS orders them."""
    if not isinstance(obj, dict):
        raise ParseError("bad_record", "the message is not a JSON object")
    site = obj.get("site")
    if not isinstance(site, str) or not site or len(site) > 255 or not site.isprintable():
        raise ParseError("bad_record", "missing or bad 'site'")
    window = obj.get("window", 0)
    if not isinstance(window, int) or isinstance(window, bool):
        raise ParseError("bad_record", "'window' must be an integer")
    lists = [obj.get(key, []) for key in LEGACY_LISTS]
    tests, errors = obj.get("test_urls", []), obj.get("error_urls", [])
    if not all(isinstance(x, list) for x in lists):
        raise ParseError("bad_record", "'rules', 'param_rules' and 'general_rules' must be lists")
    rules = [r for x in lists for r in x]
    if not all(isinstance(r, dict) for r in rules):
        raise ParseError("bad_record", "every rule must be a JSON object")
    if not isinstance(tests, list) or not isinstance(errors, list):
        raise ParseError("bad_record", "'test_urls' and 'error_urls' must be lists of strings")
    return CandidateSet(site=site.lower(), window=window, rules=rules, stats=obj.get("stats"), params=obj.get("params"),
                        test_urls=[u for u in tests if isinstance(u, str) and url_problem(u) is None],
                        error_urls=[u for u in errors if isinstance(u, str) and url_problem(u) is None])


def encode(record: faust.Record) -> bytes:
    return record.dumps(serializer="json")
