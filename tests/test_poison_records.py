"""Poison records (non-finite or huge numbers, deep nesting, bad encodings, wrong shapes, parser
bugs) are counted rejections with a reason, never a crash; the consumer goes on and the good
records around them are kept.  In-process (no broker): the rules follower, the log-line parsers,
the raw/frontier/candidates decoders, `dustbuster mine` and `dustbuster rules`' printing, and the
HTTP API."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import subprocess
import sys
import zlib

import pytest
from aiohttp.test_utils import TestClient, TestServer

from dustbuster.agents.api import make_api, parse_canonicalize_body, RequestError
from dustbuster.core.errors import ParseError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.cli import rules as crawlcli
from dustbuster.core.strictjson import loads_strict
from dustbuster.logs.formats import PARSERS
from dustbuster.logs.record import Context, Skip
from dustbuster.agents.metrics import Metrics
from dustbuster.logs.reader import parse_lines
from dustbuster.stream.records import decode_candidates, decode_frontier, decode_raw
from dustbuster.stream.rulesview import TopicFollower, decode_site_record
from tests.conftest import ROOT

GOOD = {"site": "poison.test", "version": 1, "created": 1, "rules": [
    {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True, "status": "valid"}]}
DEEP = "[" * 5000 + "]" * 5000

#: rules-topic records that once crashed a worker (huge or non-finite numbers, deep nesting...)
POISON_RULES = [
    b'{"site":"poison.test","version":1e400,"created":1,"rules":[]}',
    b'{"rules":5}',
    b'{"site":"poison.test","version":2,"created":1,"rules":[{"type":"substring","alpha":"a","beta":"b",'
    b'"status":"valid","support":1e400}]}',
    b'{"site":"poison.test","version":2,"created":1,"rules":[],"stats":' + DEEP.encode() + b"}",
    b'{"site":"poison.test","version":2,"created":1,"rules":[],"x":' + b"[" * 900 + b"]" * 900 + b"}",
    b'{"version":NaN,"rules":[]}',
    b'{"version":Infinity,"rules":[]}',
    b'{"version":-Infinity,"rules":[]}',
    b'{"version":' + b"9" * 5000 + b',"rules":[]}',
    b'{"version":' + b"9" * 30 + b',"rules":[]}',
    b'{"version":2,"rules":[5]}',
    b'{"version":2,"rules":[{"type":"substring","alpha":"a","beta":"b","evidence":5,"status":"valid"}]}',
    b'{"version":2,"rules":[{"type":"parameter","name":"x","action":"remove","support":[],"status":"valid"}]}',
    b'{"version":2,"rules":[{"type":"substring","alpha":"\\ud800","beta":"","status":"valid"}]}',
    b'{"version":true,"rules":[]}',
    b'{"version":2,"rules":{"a":1}}',
    b'{"version":2,"rules":[],"param_rules":5}',
]


def _follower():
    book = RuleBook()
    seen: list[tuple[str, str]] = []
    f = TopicFollower("127.0.0.1:1", "t-rules", book.update, on_reject=lambda reason, site: seen.append((reason, site)))
    return f, book, seen


def test_poison_rule_records_are_skipped_the_previous_set_kept():
    f, book, seen = _follower()
    assert f.apply(b"poison.test", json.dumps(GOOD).encode())
    for value in POISON_RULES:
        assert f.apply(b"poison.test", value, "t-rules/0@1") is False, value[:80]
    assert f.bad == len(POISON_RULES) == len(seen) and f.read == len(POISON_RULES) + 1
    assert sum(f.rejected.values()) == len(POISON_RULES)
    assert {"non_finite_number", "too_deep", "number_out_of_range", "bad_record", "bad_encoding"} <= set(f.rejected)
    assert all(site == "poison.test" for _, site in seen)
    assert book.sites["poison.test"].version == 1  # the site keeps its previous set
    assert book.canonize("http://www.poison.test/x").canonical == "http://poison.test/x"
    assert f.apply(b"poison.test", None) and "poison.test" not in book.sites  # and the follower goes on


def test_any_exception_of_the_update_is_a_counted_skip():
    def boom(site, doc):
        raise {"a": TypeError, "b": OverflowError, "c": RecursionError, "d": KeyError}[doc["k"]]("boom")

    f = TopicFollower("127.0.0.1:1", "t", boom)
    for k in "abcd":
        assert f.apply(b"s.test", json.dumps({"k": k, "rules": []}).encode()) is False
    assert f.rejected == {"error_TypeError": 1, "error_OverflowError": 1, "error_RecursionError": 1, "error_KeyError": 1}


@pytest.mark.parametrize("key", [None, b"", b"\xff\xfe", b"a\x00b", b"x" * 300])
def test_bad_keys(key):
    with pytest.raises(ParseError):
        decode_site_record(key, json.dumps(GOOD).encode())


def test_rules_printing_is_always_json(capsys):
    crawlcli._print_set("poison.test", {"version": float("inf"), "rules": []})
    crawlcli._print_set("s.test", {"version": 1, "rules": [], "note": "\ud800é"})
    crawlcli._print_set("d.test", None)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert "Infinity" not in out and "poison.test" in err
    assert [json.loads(ln)["site"] for ln in lines] == ["s.test", "d.test"]
    out.encode("utf-8")  # printable as UTF-8


GOOD_LINE = '{"url":"/p%d","status":200,"size":%d}'
POISON_LINES = [
    '{"url":"/x","sketch":[1e400]}',
    '{"url":"/x","sketch":[NaN]}',
    '{"url":"/x","sketch":[Infinity]}',
    '{"url":"/x","sketch":"' + "f" * 40 + '"}',
    '{"url":"/x","sketch":[' + "9" * 30 + "]}",
    '{"url":"/x","sketch":[-1]}',
    '{"url":"/x","size":1e400}',
    '{"url":"/x","size":' + "9" * 5000 + "}",
    '{"url":"/x","status":' + "9" * 40 + "}",
    '{"url":"/x","digest":"' + "\\ud800" + '"}',
    '{"url":"/x\\ud800"}',
    '{"url":' + DEEP + "}",
    DEEP,
    "{" * 3000,
    '{"url":"/x","a":' + "{\"a\":" * 2000 + "1" + "}" * 2000 + "}",
    "1 2 {" + "[" * 5000,
    'com,a)/ 20200101000000 {"url":' + DEEP + "}",
    'com,a)/ 20200101000000 {"url":"http://a.test/","status":1e400}',
    "/x\ud800 200",
]


@pytest.mark.parametrize("fmt", ["auto", "jsonl", "cdxj", "combined", "heritrix", "cdx", "vhost", "common", "tsv"])
def test_parse_lines_never_raises_and_keeps_the_good_lines(fmt):
    good = [GOOD_LINE % (i, i + 1) for i in range(100)]
    for bad in POISON_LINES:
        for lines in (good[:50] + [bad] + good[50:], [bad] + good, good + [bad], [bad] * 60 + good):
            res = parse_lines(lines, "s.test", fmt)
            n = sum(ln == bad for ln in lines)
            assert res.counts["lines"] == len(lines)
            # with auto-detection, 60 junk lines that look like another format (a CDXJ line with a
            # bad JSON block) decide the batch's format: only one bad line must cost nothing
            if fmt == "jsonl" or (fmt == "auto" and n == 1):
                assert res.counts["records"] == 100 and res.counts["rejected"] == n, (bad[:60], res.counts)
                assert all(r[0] != "parser_error" for r in res.rejects), res.rejects[:1]
            assert sum(res.counts[k] for k in ("records", "dropped_status", "skipped", "rejected")) == len(lines)


def test_junk_at_the_head_of_a_batch_does_not_decide_its_format():
    good = [GOOD_LINE % (i, i + 1) for i in range(100)]
    for junk in (DEEP, "[" * 100000, "{" * 3000, "\x00\xff garbage", "1 2 {" + "[" * 5000):
        res = parse_lines([junk] * 120 + good, "s.test")
        assert res.fmt == "jsonl" and res.counts["records"] == 100 and res.counts["rejected"] == 120, junk[:20]


def test_each_parser_raises_only_parse_error_or_skip():
    ctx = Context("s.test")
    ctx.tsv_columns = {"url": 0, "status": 1, "size": 2}
    for parse in PARSERS.values():
        for bad in POISON_LINES:
            with pytest.raises((ParseError, Skip)):
                parse(bad, ctx)


def test_a_bad_element_costs_only_itself():
    data = json.dumps({"site": "s.test", "lines": [GOOD_LINE % (1, 1), 5, None, {"a": [1]}, GOOD_LINE % (2, 2)]})
    batch = decode_raw(data.encode(), 100, 65536)
    res = parse_lines(batch.lines, batch.site, batch.format)
    assert res.counts["records"] == 2 and res.counts["rejected"] == 3
    assert {r[0] for r in res.rejects} == {"not_a_string"}


@pytest.mark.parametrize("value, reason", [
    (b'{"site":"s.test","lines":' + DEEP.encode() + b"}", "too_deep"),
    (b'{"site":"s.test","lines":[],"seq":1e400}', "non_finite_number"),
    (b'{"site":"s.test","lines":[],"seq":NaN}', "non_finite_number"),
    (b'{"site":"s.test","lines":[],"seq":' + b"9" * 40 + b"}", "number_out_of_range"),
    (b'{"site":"s\\ud800","lines":[]}', "bad_record"),
    (b'{"site":"s.test","lines":[],"seq":[1]}', "bad_record"),
    (b'{"site":"s.test","lines":[],"source":{"a":1}}', None),
])
def test_decode_raw_reasons(value, reason):
    if reason is None:
        assert decode_raw(value, 10, 100).source == ""
        return
    with pytest.raises(ParseError) as e:
        decode_raw(value, 10, 100)
    assert e.value.reason == reason


def test_decode_frontier_and_candidates():
    with pytest.raises(ParseError) as e:
        decode_frontier(b"s.test", b'{"urls":' + DEEP.encode() + b"}", 10)
    assert e.value.reason == "too_deep"
    with pytest.raises(ParseError):
        decode_frontier(None, b'{"urls":[],"site":"\\ud800"}', 10)
    site, good, bad = decode_frontier(b"s.test", json.dumps({"urls": ["http://a.test/\ud800", "http://a.test/a\r\nb",
                                                                      "http://a.test/\tb", "http://a.test/ok"]}).encode(), 10)
    assert good == ["http://a.test/ok"]
    assert [r for _, r in bad] == ["bad_url_surrogate", "bad_url_char", "bad_url_char"]
    cs = decode_candidates(json.dumps({"site": "S.test", "window": 3, "rules": [{"alpha": "a"}], "param_rules": [],
                                       "stats": {}, "params": {}, "test_urls": ["http://a/", 5, "http://a/\n"]}).encode())
    assert cs.site == "s.test" and cs.test_urls == ["http://a/"]
    for value in [b'{"site":"s","window":1e400,"rules":[],"param_rules":[]}', b'{"site":"s","rules":5}',
                  b'{"site":"s","rules":[5]}', b"[]", b"\xff", None]:
        with pytest.raises(ParseError):
            decode_candidates(value)


def test_loads_strict_reasons():
    for text, reason in [("1e400", "non_finite_number"), ("-1e400", "non_finite_number"), ("NaN", "non_finite_number"),
                         ("[Infinity]", "non_finite_number"), (DEEP, "too_deep"), ("[" * 40 + "]" * 40, "too_deep"),
                         (str(2**64), "number_out_of_range"), ("9" * 5000, "bad_json"), ("{", "bad_json"),
                         (b"\xff", "bad_json")]:
        with pytest.raises(ParseError) as e:
            loads_strict(text)
        assert e.value.reason == reason, text[:40]
    assert loads_strict(str(2**64 - 1)) == 2**64 - 1 and loads_strict('"\\ud800"') == "\ud800"
    with pytest.raises(ParseError):
        loads_strict('{"\\ud800": 1}', surrogates=False)


def test_mine_on_a_poisoned_file_does_not_die(tmp_path):
    log = tmp_path / "p.jsonl"
    good = [GOOD_LINE % (i, i + 1) for i in range(200)]
    log.write_text("\n".join(POISON_LINES[:3] + good[:100] + POISON_LINES + good[100:] + [DEEP]) + "\n", encoding="utf-8",
                   errors="surrogatepass")
    rej = tmp_path / "rejects.tsv"
    r = subprocess.run([sys.executable, "-m", "dustbuster", "mine", str(log), "--site", "s.test", "--json", "-q",
                        "--rejects", str(rej)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    read = json.loads(r.stdout)["stats"]["read"]
    assert read["records"] == 200 and read["formats"] == {str(log): "jsonl"}
    assert read["rejected_total"] == len(POISON_LINES) + 4
    assert len(rej.read_text().splitlines()) == len(POISON_LINES) + 4
    log.write_text(DEEP + "\n" + "[" * 100000 + "\n")  # nothing parses: a clear error, no traceback
    r = subprocess.run([sys.executable, "-m", "dustbuster", "mine", str(log), "--site", "s.test", "-q"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--format" in r.stderr, r.stderr


# ---- the HTTP API -------------------------------------------------------------------------------

def api(body_timeout_s: float = 30.0):
    book = RuleBook()
    book.update("poison.test", GOOD)
    metrics = Metrics()
    app = make_api(book, metrics, max_batch=100, body_timeout_s=body_timeout_s)

    def deco(fn):
        async def go():
            async with TestClient(TestServer(app, host="127.0.0.1")) as client:
                await fn(client, metrics)
        asyncio.run(go())
    return deco


@pytest.mark.parametrize("body, headers, status, reason", [
    (b'{"urls":' + DEEP.encode() + b"}", {}, 400, "too_deep"),
    (b'{"urls":' + b"[" * 200000 + b"}", {}, 400, "too_deep"),
    (b"garbage", {"Content-Encoding": "gzip"}, 400, "bad_content_encoding"),
    (gzip.compress(b'{"urls": []}')[:-12], {"Content-Encoding": "gzip"}, 400, "bad_json"),  # truncated: a partial body
    (b"garbage", {"Content-Encoding": "deflate"}, 400, "bad_content_encoding"),
    (b'{"urls": [1e400]}', {}, 400, "non_finite_number"),
    (b'{"urls": [], "site": NaN}', {}, 400, "non_finite_number"),
    (b'{"urls": [], "x": ' + b"9" * 40 + b"}", {}, 400, "number_out_of_range"),
    (b'\xff\xfe{"urls": []}', {}, 400, "bad_encoding"),
    (b'{"urls": ["http://poison.test/\\ud800"]}', {}, 400, "bad_url_surrogate"),
    (b'{"urls": ["http://poison.test/a\\r\\nb"]}', {}, 400, "bad_url_char"),
    (b'{"urls": ["http://poison.test/a\\u0000b"]}', {}, 400, "bad_url_char"),
    (b'{"urls": [], "site": "\\ud800"}', {}, 400, "bad_request"),
])
def test_api_errors_are_json_and_counted(body, headers, status, reason):
    @api()
    async def _(c, metrics):
        r = await c.post("/canonicalize", data=body, headers=headers)
        assert r.status == status and r.content_type == "application/json"
        got = await r.json()
        assert got["reason"] == reason and got["error"]
        m = await (await c.get("/metrics")).text()
        assert f'dust_api_rejects_total{{reason="{reason}"}} 1.0' in m
        r = await c.post("/canonicalize", data=zlib.compress(b'{"urls": ["http://www.poison.test/a"]}'),
                         headers={"Content-Encoding": "deflate"})
        assert (await r.json())["results"][0]["canonical"] == "http://poison.test/a"  # and the API goes on


def _length(answer: bytes) -> int:
    for h in answer.partition(b"\r\n\r\n")[0].split(b"\r\n"):
        if h.lower().startswith(b"content-length:"):
            return int(h.split(b":")[1])
    return 1 << 30


def test_api_body_read_timeout():
    @api(body_timeout_s=0.3)
    async def _(c, metrics):
        port = c.server.port

        def slow() -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
                s.sendall(b"POST /canonicalize HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"urls\"")
                got = b""
                while b"\r\n\r\n" not in got or len(got.partition(b"\r\n\r\n")[2]) < _length(got):
                    chunk = s.recv(65536)  # the server answers without the rest of the body
                    if not chunk:
                        break
                    got += chunk
                return got

        answer = await asyncio.get_running_loop().run_in_executor(None, slow)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and b"application/json" in head and b"Connection: close" in head
        assert json.loads(body)["reason"] == "body_timeout"


def test_parse_canonicalize_body_raises_only_request_errors():
    assert parse_canonicalize_body(b'{"urls": ["http://a/"], "site": "a", "normalize": false}', 10) == (["http://a/"], "a", False)
    for raw in [b"", b"{", b"[]", b"null", b'"x"', b"1e400", b'{"urls": "x"}', b'{"urls": [[]]}', b'{"urls": [1]}',
                b'{"urls": ["x"], "normalize": 1}', b'{"urls": ["a"], "site": ""}', b'{"urls": ' + b'["a"],' * 0 + b"[" + b'"a",' * 20 + b'"a"]}']:
        with pytest.raises(RequestError) as e:
            parse_canonicalize_body(raw, 10)
        assert e.value.status in (400, 413)


def test_rejected_rule_sets_are_in_the_metrics():
    """The worker's rules follower (dustbuster.agents.context.rules_follower) counts its rejections
    in dust_rule_sets_rejected_total, whether or not the API is on."""
    from dustbuster.agents.context import rules_follower
    from dustbuster.stream.settings import Settings

    book, metrics = RuleBook(), Metrics()
    f = rules_follower(Settings(kafka_bootstrap="127.0.0.1:1", api_port=0), book, metrics)
    for value in POISON_RULES[:3]:
        f.apply(b"poison.test", value)
    text = metrics.exposition().decode()
    assert 'dust_rule_sets_rejected_total{reason="non_finite_number"} 2.0' in text
    assert 'dust_rule_sets_rejected_total{reason="bad_record"} 1.0' in text


def test_canonicalize_never_raises_on_a_url_yarl_cannot_split():
    """Found by the 10^6 fuzz run: yarl raises IndexError splitting this URL; normalization turns any
    parser failure into "not normalized" (the URL is kept)."""
    assert RuleBook().canonize("http://[::1]:808@/").normalized is False
