"""Fuzzing every decoder in-process: no input may escape as anything but a counted
rejection (ParseError / DustError), and the functions that must never raise (parse_lines, the
rules follower) never do.

Inputs, from one seeded generator:

* log lines: real lines of every format in tests/data/logs (and JSON lines built from their
  records), mutated (character flips, truncation, deletion, duplication, insertion of ``1e400``,
  ``NaN``, ``Infinity``, deep ``[``/``{`` nesting, huge integers, lone surrogates, controls, wrong
  JSON types), through each log-format parser, ``sniff``, ``parse_lines`` (in batches of 50) and
  the file reader of ``dustbuster mine`` (in files of 2,000);
* structure-aware JSON: raw batches, candidate sets, rule sets, frontier messages and API bodies
  built from valid templates, with JSON values swapped for poison (non-finite and huge numbers,
  deep nesting, wrong types, surrogates), then text and byte mutations, through
  ``decode_raw`` (+ ``parse_lines``), ``decode_candidates`` (+ ``rule_from_json``),
  ``decode_site_record`` (+ the rule book, as the rules follower applies it), ``decode_frontier``
  and the API's ``parse_canonicalize_body`` (+ canonicalization of what it accepts).

``make test`` runs 10^4 inputs; ``pytest -m slow tests/test_fuzz_decoders.py`` runs 10^6 (or
``python -m tests.test_fuzz_decoders N`` with progress on stderr).
"""

from __future__ import annotations

import copy
import json
import logging
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dustbuster.agents.api import RequestError, parse_canonicalize_body
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.errors import DustError, ParseError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.rules import rule_from_json
from dustbuster.core.strictjson import loads_strict
from dustbuster.logs.formats import PARSERS, sniff, tsv_header
from dustbuster.logs.record import Context, Limits, Skip
from dustbuster.logs.reader import ReadStats, parse_lines, read_urllist
from dustbuster.stream.records import decode_candidates, decode_frontier, decode_raw
from dustbuster.stream.rulesview import TopicFollower, decode_site_record
from tests.conftest import LOGS

SITE = "fuzz.test"

# ---- seeds ---------------------------------------------------------------------------------------

_SOURCES = {
    "monitorware-twiki/access_log": 300,
    "semicomplete-apache/apache_logs": 300,
    "secrepo-selflogs/access.log.2022-12-22": 200,
    "netarchivesuite-heritrix-crawllogs/crawl.2015-05-22.h3.log": 200,
    "netarchivesuite-heritrix-crawllogs/crawl.2006-02-23.job5.log": 100,
    "nasa-ksc-1995-tsv-sample/nasa_19950701.tsv": 200,
    "webarchive-cdx-samples/commoncrawl_CC-MAIN-2024-30_cdx-00187_slice.cdxj": 200,
    "webarchive-cdx-samples/pywb_iana.org_2014.cdx": 200,
    "webarchive-cdx-samples/ia_wayback_archive.org_homepage_2012.cdx": 100,
}


def seed_lines() -> list[str]:
    """Real lines of every format, plus JSON lines made of their records (urls, sizes, sketches)."""
    out: list[str] = []
    for rel, n in _SOURCES.items():
        with open(LOGS / rel, "rb") as fh:
            for k, raw in enumerate(fh):
                if k >= n:
                    break
                out.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
    rng = random.Random(7)
    for line in list(out[:300]):
        res = parse_lines([line], SITE)
        for url, status, size, digest, _ in res.records:
            out.append(json.dumps({"url": url, "status": status, "size": size, "method": "GET",
                                   "digest": digest or f"{rng.getrandbits(64):016x}",
                                   "sketch": [rng.getrandbits(64) for _ in range(4)]}))
    return out


RULES = [
    ParamRule("sid", "remove", status="valid").to_json(),
    SubstringRule.from_parts("http://www.", "http://", True, status="valid").to_json(),
    SubstringRule.from_parts("/story?id=", "/story_", status="valid").to_json(),
    SubstringRule.from_parts("/index.html", "/", False, True, status="valid", support=12, support_high=3).to_json(),
]
URLS = ["http://www.fuzz.test/story?id=5&sid=9", "http://fuzz.test/a/index.html", "HTTP://WWW.FUZZ.TEST:80/x#f",
        "http://fuzz.test/%7Ea/./b/../c?q=1&q=2", "http://[::1]:8080/", "https://xn--e1afmkfd.test/й"]

# ---- mutations -----------------------------------------------------------------------------------

_POISON_TEXT = ["1e400", "-1e400", "1E+999", "NaN", "Infinity", "-Infinity", "9" * 25, "-" + "9" * 40, "9" * 5000,
                "[" * 5000, "{" * 5000, '{"a":' * 3000, "[" * 100000, "\\ud800", "\\udfff\\ud800", "\ud800", "\udc00",
                "\x00", "\r\n", "\n", "\t", "\x7f", '"', "\\", "\\u0000", "null", "true", "[]", "{}", "1.5", "-1",
                "é", "\U0001f600", " ", "%00", "%", "#", "?", "&", "=", "http://", "//", "\ufeff", "0x1f", "1_0"]
_FLIP_CHARS = "\x00\x01\t\n\r \"'\\/[]{}:,.-0123456789eE+%#?&=aZ\x7f\u00e9\u2028\ud800\udfff\U0001f600"


def mutate_text(s: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        pos = rng.randint(0, len(s))
        if op < 0.25 and s:
            pos = min(pos, len(s) - 1)
            s = s[:pos] + rng.choice(_FLIP_CHARS) + s[pos + 1:]
        elif op < 0.38:
            s = s[:pos]
        elif op < 0.7:
            s = s[:pos] + rng.choice(_POISON_TEXT) + s[pos:]
        elif op < 0.85:
            nums = list(re.finditer(r"-?\d+(?:\.\d+)?", s))
            if nums:
                m = rng.choice(nums)
                s = s[:m.start()] + rng.choice(_POISON_TEXT[:11] + ["0", "-0", "1.0", "true", '"200"', "[200]"]) + s[m.end():]
        elif op < 0.93:
            end = rng.randint(pos, min(len(s), pos + 40))
            s = s[:end] + s[pos:end] * rng.randint(1, 50) + s[end:]
        else:
            end = rng.randint(pos, min(len(s), pos + 40))
            s = s[:pos] + s[end:]
    return s


def mutate_bytes(b: bytes, rng: random.Random) -> bytes:
    b = bytearray(b)
    for _ in range(rng.randint(1, 4)):
        if not b:
            break
        pos = rng.randrange(len(b))
        op = rng.random()
        if op < 0.5:
            b[pos] = rng.randrange(256)
        elif op < 0.7:
            del b[pos:]
        else:
            b[pos:pos] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\xf4\x90\x80\x80"])
    return bytes(b)


_PLACEHOLDER = "\x02poison\x03"
_POISON_VALUES = [_PLACEHOLDER] * 6 + [None, True, False, [], {}, "", 1.5, -1, 0, 2**63, 2**64 - 1, -(2**63),
                                       "\ud800", "x" * 10000, [[[]]], {"a": {"b": [1]}}, "http://fuzz.test/", [1, 2],
                                       "1e400", {"type": "substring"}, [{"alpha": 5}]]
_POISON_JSON = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "9" * 30, "9" * 5000, "-" + "9" * 20,
                "[" * 3000 + "]" * 3000, "[" * 40 + "]" * 40, '{"a":' * 40 + "1" + "}" * 40, "[" * 100000 + "]" * 100000]


def _poison(rng: random.Random):
    return copy.deepcopy(rng.choice(_POISON_VALUES))  # a fresh copy: later mutations must not share it


def mutate_tree(obj, rng: random.Random):
    """Replace, delete or add a few JSON values anywhere in ``obj`` (a copy)."""
    obj = json.loads(json.dumps(obj))
    for _ in range(rng.randint(1, 3)):
        parent, key = None, None
        node = obj
        for _ in range(rng.randint(0, 4)):
            if isinstance(node, dict) and node:
                parent, key = node, rng.choice(list(node))
            elif isinstance(node, list) and node:
                parent, key = node, rng.randrange(len(node))
            else:
                break
            node = parent[key]
        if parent is None:
            if isinstance(obj, dict):
                obj[rng.choice(["x", "site", "rules", "urls", "lines", "version", "seq"])] = _poison(rng)
            continue
        op = rng.random()
        if isinstance(node, str) and op < 0.4:
            parent[key] = mutate_text(node, rng)
        elif op < 0.75:
            parent[key] = _poison(rng)
        elif op < 0.9:
            del parent[key]
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "__faust", "evidence", "status"])] = _poison(rng)
        else:
            parent.insert(key, _poison(rng))
    return obj


def to_bytes(obj, rng: random.Random) -> bytes:
    text = json.dumps(obj, ensure_ascii=rng.random() < 0.5)
    while _PLACEHOLDER in text or json.dumps(_PLACEHOLDER) in text:
        text = text.replace(json.dumps(_PLACEHOLDER), rng.choice(_POISON_JSON), 1)
    if rng.random() < 0.3:
        text = mutate_text(text, rng)
    b = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.15:
        b = mutate_bytes(b, rng)
    return b


# ---- the run -------------------------------------------------------------------------------------

@dataclass
class Report:
    inputs: Counter = field(default_factory=Counter)  #: generated inputs by kind
    calls: Counter = field(default_factory=Counter)  #: decoder calls by decoder
    rejected: Counter = field(default_factory=Counter)  #: counted rejections by reason
    escapes: list = field(default_factory=list)  #: (decoder, exception, input) that escaped
    seconds: float = 0.0

    def escape(self, decoder: str, exc: BaseException, data) -> None:
        self.escapes.append((decoder, f"{type(exc).__name__}: {str(exc)[:200]}", repr(data)[:300]))

    def summary(self) -> str:
        return (f"{sum(self.inputs.values()):,} inputs {dict(self.inputs)}; {sum(self.calls.values()):,} decoder calls; "
                f"{sum(self.rejected.values()):,} counted rejections; {len(self.escapes)} escapes; {self.seconds:.1f} s")


class Fuzzer:
    def __init__(self, seed: int, tmp: Path) -> None:
        self.rng = random.Random(seed)
        self.tmp = tmp
        self.lines = seed_lines()
        self.report = Report()
        self.ctx = Context(SITE, limits=Limits())
        self.tsv_ctx = Context(SITE)
        self.tsv_ctx.tsv_columns = tsv_header("time\tvhost\turl\tresponse\tbytes\tmethod") or {}
        self.pending: list[str] = []  # lines waiting for their parse_lines batch
        self.file_lines: list[str] = []  # lines waiting for their mine file
        self.book = RuleBook()
        self.book.update(SITE, {"site": SITE, "version": 1, "created": 1, "rules": RULES})
        self.follower = TopicFollower("127.0.0.1:1", "fuzz-rules", self._apply_rules)

    # each decoder call: only `allowed` may come out
    def call(self, name: str, fn, allowed, data, *args):
        self.report.calls[name] += 1
        try:
            return fn(*args)
        except allowed as exc:
            self.report.rejected[getattr(exc, "reason", type(exc).__name__)] += 1
        except Exception as exc:  # an escape: what the issue forbids
            self.report.escape(name, exc, data)
        return None

    def line(self) -> str:
        s = self.rng.choice(self.lines)
        return mutate_text(s, self.rng) if self.rng.random() < 0.9 else s

    def one_line(self) -> None:
        s = self.line()
        self.report.inputs["line"] += 1
        for fmt, parse in PARSERS.items():
            self.call(f"parse_{fmt}", parse, (ParseError, Skip), s, s, self.tsv_ctx if fmt == "tsv" else self.ctx)
        self.call("sniff", sniff, ParseError, s, [s], self.ctx)
        self.pending.append(s)
        if len(self.pending) >= 50:
            self.batch(self.pending)
            self.pending = []
        self.file_lines.append(s)
        if len(self.file_lines) >= 2000:
            self.mine_file(self.file_lines)
            self.file_lines = []

    def batch(self, lines: list) -> None:
        fmt = self.rng.choice(["auto", "auto", "auto", *PARSERS, "nonsense"])
        res = self.call("parse_lines", parse_lines, (), lines, lines, SITE, fmt)
        if res is not None:
            c = res.counts
            if c["records"] + c.get("listed", 0) + c["dropped_status"] + c["skipped"] + c["rejected"] != len(lines):
                self.report.escape("parse_lines", AssertionError(f"counts {c} for {len(lines)} lines"), lines[:3])
            for reason, _, _ in res.rejects:
                self.report.rejected[reason] += 1

    def mine_file(self, lines: list[str]) -> None:
        p = self.tmp / "fuzz.log"
        p.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
        stats = ReadStats()
        if self.call("read_urllist", lambda: read_urllist([p], "auto", SITE, stats=stats), DustError, lines[:3]):
            self.report.rejected.update(stats.rejected)

    def raw_batch(self) -> None:
        self.report.inputs["raw_batch"] += 1
        lines = [self.line() for _ in range(self.rng.randint(0, 20))]
        obj = {"site": SITE, "lines": lines, "format": self.rng.choice(["auto", "jsonl", "cdxj", "x"]), "scheme": "http",
               "source": "fuzz", "seq": self.rng.randint(0, 10**6), "header": ""}
        data = to_bytes(mutate_tree(obj, self.rng) if self.rng.random() < 0.7 else obj, self.rng)
        b = self.call("decode_raw", decode_raw, ParseError, data, data, 10000, 65536)
        if b is not None:
            self.batch(b.lines)

    def frontier(self) -> None:
        self.report.inputs["frontier"] += 1
        urls = [mutate_text(u, self.rng) if self.rng.random() < 0.5 else u for u in self.rng.sample(URLS, 3)]
        if self.rng.random() < 0.3:
            data = mutate_bytes("\n".join(urls).encode("utf-8", "surrogatepass"), self.rng)
        else:
            data = to_bytes(mutate_tree({"urls": urls, "site": SITE}, self.rng), self.rng)
        key = self.rng.choice([SITE.encode(), None, b"", b"\xff", b"a\x00b"])
        got = self.call("decode_frontier", decode_frontier, ParseError, data, key, data, 1000)
        if got is not None:
            site, good, _ = got
            for u in good:
                self.call("canonize", self.book.canonize, (), u, u, site)

    def candidates(self) -> None:
        self.report.inputs["candidates"] += 1
        obj = {"site": SITE, "window": 123, "rules": RULES[1:], "param_rules": RULES[:1], "stats": {"lines": 10},
               "params": {"S": 35}, "test_urls": URLS}
        data = to_bytes(mutate_tree(obj, self.rng), self.rng)
        cs = self.call("decode_candidates", decode_candidates, ParseError, data, data)
        if cs is not None:
            for rj in list(cs.rules):  # the three lists of an old record are one list
                self.call("rule_from_json", rule_from_json, DustError, rj, rj)

    def _apply_rules(self, site: str, doc: dict | None) -> None:
        self.report.calls["rulebook.update"] += 1
        try:
            book = RuleBook()
            book.update(site, doc)
            if doc is not None and site in book.sites:
                for u in URLS:
                    book.canonize(u)
        except DustError:
            raise
        except Exception as exc:  # the rule book must refuse with a RuleError, not fail otherwise
            self.report.escape("rulebook", exc, doc)
            raise

    def rules(self) -> None:
        self.report.inputs["rules"] += 1
        obj = {"site": SITE, "version": self.rng.randint(1, 10**9), "created": 1795650000.5, "schema": "dustbuster/ruleset@1",
               "rules": RULES}
        data = to_bytes(mutate_tree(obj, self.rng), self.rng) if self.rng.random() < 0.95 else None
        key = self.rng.choice([SITE.encode()] * 4 + [None, b"", b"\xff\xfe", SITE.upper().encode()])
        self.call("decode_site_record", decode_site_record, ParseError, data, key, data)
        self.report.calls["TopicFollower.apply"] += 1
        try:
            self.follower.apply(key, data, "fuzz")
        except BaseException as exc:  # it must never raise
            self.report.escape("TopicFollower.apply", exc, data)

    def api(self) -> None:
        self.report.inputs["api"] += 1
        urls = [mutate_text(u, self.rng) if self.rng.random() < 0.4 else u for u in self.rng.sample(URLS, 4)]
        obj = {"urls": urls, "site": self.rng.choice([SITE, None]), "normalize": self.rng.choice([True, False, None])}
        data = to_bytes(mutate_tree(obj, self.rng) if self.rng.random() < 0.7 else obj, self.rng)
        got = self.call("parse_canonicalize_body", parse_canonicalize_body, RequestError, data, data, 100)
        if got is not None:
            urls, site, norm = got
            for u in urls:
                self.call("canonize", self.book.canonize, (), u, u, site, norm)

    def strict_json(self) -> None:
        self.report.inputs["json"] += 1
        data = to_bytes(mutate_tree({"a": [1, 2.5, "x", {"b": None}]}, self.rng), self.rng)
        self.call("loads_strict", loads_strict, ParseError, data, data)

    def run(self, n: int, progress: bool = False) -> Report:
        logging.disable(logging.WARNING)  # every rejection is logged; a million of them is noise here
        try:
            return self._run(n, progress)
        finally:
            logging.disable(logging.NOTSET)

    def _run(self, n: int, progress: bool) -> Report:
        t0 = time.perf_counter()
        kinds = [self.one_line] * 45 + [self.raw_batch] * 12 + [self.frontier] * 10 + [self.candidates] * 8 + \
                [self.rules] * 10 + [self.api] * 10 + [self.strict_json] * 5
        for k in range(n):
            self.rng.choice(kinds)()
            if progress and k % 10000 == 9999:
                sys.stderr.write(f"{k + 1:,} inputs, {len(self.report.escapes)} escapes, "
                                 f"{time.perf_counter() - t0:.0f} s\n")
        if self.pending:
            self.batch(self.pending)
        if self.file_lines:
            self.mine_file(self.file_lines)
        self.report.rejected.update({f"rules:{k}": v for k, v in self.follower.rejected.items()})
        self.report.seconds = time.perf_counter() - t0
        return self.report


def _check(report: Report) -> None:
    assert not report.escapes, f"{len(report.escapes)} escapes, first ones:\n" + "\n".join(map(str, report.escapes[:10]))


def test_fuzz_decoders_10k(tmp_path):
    report = Fuzzer(seed=16, tmp=tmp_path).run(10_000)
    _check(report)
    assert sum(report.inputs.values()) == 10_000
    assert report.rejected["too_deep"] and report.rejected["non_finite_number"] and report.rejected["number_out_of_range"]


@pytest.mark.slow
def test_fuzz_decoders_1m(tmp_path):
    report = Fuzzer(seed=1_000_016, tmp=tmp_path).run(1_000_000, progress=True)
    print(report.summary())  # the number the issue asks for: inputs, time, escapes
    _check(report)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as d:
        r = Fuzzer(seed=int(sys.argv[2]) if len(sys.argv) > 2 else 16, tmp=Path(d)).run(n, progress=True)
    print(r.summary())
    for e in r.escapes[:20]:
        print(e)
    print("rejections:", dict(r.rejected.most_common(30)))
    print("calls:", dict(r.calls))
    sys.exit(1 if r.escapes else 0)
