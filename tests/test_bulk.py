"""The bulk reader (logs/bulk.py, logs/bulkread.py) gives exactly what the line loop gives: the same
URL list (URLs in first-seen order, hits, size intervals, digests, sketches), the same counts by
reason and the same rejects file, on every real log of tests/data/logs, on the fuzz log
(tests/fuzzlog.py), in several contexts, with blocks small enough to cut every log many times, and
on hand-made lines at the edges of each scanner's language."""

from __future__ import annotations

import io

import pytest

from dustbuster.core.errors import ConfigError
from dustbuster.logs import bulk, bulkread
from dustbuster.logs.reader import RejectSink, parse_lines, read_urllist
from dustbuster.logs.record import Context, Limits

from dustdev.parsers import reference_parsers
from tests.conftest import LOGS
from tests.fuzzlog import SITE as FUZZ_SITE
from tests.fuzzlog import write_fuzz_log

LOG_FILES = sorted(p for p in LOGS.rglob("*") if p.is_file() and p.suffix != ".md")
SETTINGS = [("www.example.com", "http", None), ("h.org:443", "https", Limits(max_url_length=60, max_tokens=12))]


def read(paths, bulk_: bool, site="www.example.com", scheme="http", limits=None) -> tuple:
    fh = io.StringIO()
    try:
        ul, st = read_urllist(paths, site=site, scheme=scheme, limits=limits, bulk=bulk_, rejects=RejectSink(fh))
    except ConfigError as exc:
        return ("error", str(exc))
    return list(ul.infos.items()), st.to_dict(), fh.getvalue()


def assert_same(paths, **kw) -> None:
    got, want = read(paths, True, **kw), read(paths, False, **kw)
    assert got[0] == want[0]
    assert got[1:] == want[1:]


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("site,scheme,limits", SETTINGS)
def test_every_real_log_reads_as_the_line_loop_does(path, site, scheme, limits):
    assert_same([path], site=site, scheme=scheme, limits=limits)


def test_hostless_logs_without_a_site_fail_alike():
    path = LOGS / "monitorware-twiki" / "access_log"
    assert read([path], True, site=None) == read([path], False, site=None)


def test_all_real_logs_as_one_url_list_in_small_blocks(monkeypatch):
    monkeypatch.setattr(bulkread, "BLOCK_BYTES", 8192)
    assert_same(LOG_FILES)


def test_the_fuzz_log_reads_as_the_line_loop_does(tmp_path, monkeypatch):
    path = write_fuzz_log(tmp_path / "fuzz.log")
    assert_same([path], site=FUZZ_SITE)
    monkeypatch.setattr(bulkread, "BLOCK_BYTES", 50_000)
    assert_same([path], site=FUZZ_SITE)


def test_reference_parsers_take_the_line_loop():
    path = LOGS / "semicomplete-apache" / "apache_logs"
    with reference_parsers():
        assert read([path], True) == read([path], False)


EDGE_LINES = [
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?x=1 HTTP/1.0" 200 2326 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?x=1 HTTP/1.0" 200 2000 "-" "ua"\r\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?x=1#frag HTTP/1.0" 200 1000 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET http://WWW.Example.com:80/a?x=1 HTTP/1.0" 200 9 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "HEAD /b HTTP/1.0" 200 77 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "POST /b HTTP/1.0" 304 78 "-" "ua" extra\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /b HTTP/1.0" 304 5 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /b HTTP/1.0" 404 5 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /c HTTP/1.0" 200 - "-" "u\\"a"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /c HTTP/1.0" 200 0 "r" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /\xe1 HTTP/1.0" 200 1 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /' + b"x/" * 300 + b' HTTP/1.0" 200 1 "-" "ua"\n',
    b"\n", b"  \t\n", b"garbage\n",
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "OPTIONS * HTTP/1.0" 200 1 "-" "ua"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /d HTTP/1.0" 200 1 "-" "ua"',  # no line end
]


def _vhost(line: bytes, host: bytes) -> bytes:
    return host + b" " + line if line.strip() and line[:1].isdigit() else line


@pytest.mark.parametrize("host", [None, b"www.example.com", b"Ex.org:80", b"ex.org:443", b"bad@h\x01"])
def test_edge_lines(tmp_path, host):
    lines = EDGE_LINES if host is None else [_vhost(ln, host) for ln in EDGE_LINES]
    lines = lines + [_vhost(ln, b"other.net") for ln in EDGE_LINES[:3]] if host else lines
    path = tmp_path / "edge.log"
    path.write_bytes(b"".join(lines * 3))
    for site, scheme, limits in SETTINGS:
        assert_same([path], site=site, scheme=scheme, limits=limits)


def test_tsv_edges(tmp_path):
    path = tmp_path / "t.tsv"
    rows = ["host\tlogname\ttime\tmethod\turl\tresponse\tbytes", "h\t-\t1\tGET\t/a\t200\t0", "h\t-\t1\tGET\t/a\t200\t12\t\t",
            "h\t-\t1\tHEAD\t/a\t200\t13", "h\t-\t1\tGET\t/b#x\t200\t5", "h\t-\t1\tGET\t\t200\t5", "h\t-\t1\tGET\t/c\t200\t-",
            "h\t-\t1\tGET\t/c\t200\t", "h\t-\t1\tPUT\t/c\t200\t5", "h\t-\t1\tGET\t/c\t2x0\t5", "h\t-\t1\tGET\t/c d\t200\t5",
            "h\t-\t1\tGET\t/c\r\t200\t5", "h\t-\t1\tGET\t/e\t200\t7\r"]
    path.write_text("\n".join(rows * 2) + "\n")
    assert_same([path])


def test_the_bulk_path_is_taken_on_the_common_formats():
    """Not a speed test: the scanners must be what the common lines go through."""
    ctx = Context(site="www.example.com")
    for fmt in ("common", "combined", "vhost"):
        assert bulk.scanner_for(fmt, ctx) is not None
    text, guard = bulkread.decoded((LOGS / "semicomplete-apache" / "apache_logs").read_bytes())
    s = bulk.scan(text, bulk.scanner_for("combined", ctx), ctx, guard)
    assert len(s.fallback) < 0.05 * s.lines


def _batch(lines, **kw) -> tuple:
    r = parse_lines(lines, "www.example.com", **kw)
    return r.records, r.rejects, r.counts, r.fmt


def test_topic_batches_parse_as_the_line_loop_does(tmp_path):
    texts = []
    for p in LOG_FILES:
        texts += p.read_bytes().decode("utf-8", "replace").splitlines()
    fuzz = write_fuzz_log(tmp_path / "fuzz.log").read_bytes().split(b"\n")
    texts += [ln.decode("utf-8", "surrogateescape") for ln in fuzz]  # lone surrogates, NULs, CRs, huge lines
    texts += [ln.decode("utf-8", "replace").rstrip("\r\n") for ln in EDGE_LINES] * 2
    for i in range(0, len(texts), 397):
        batch = texts[i:i + 500]
        for kw in ({}, {"max_line_bytes": 300}, {"fmt": "combined"}):
            assert _batch(batch, bulk=True, **kw) == _batch(batch, bulk=False, **kw)
    mixed = texts[:50] + [7, None, b"\xff bytes"] + texts[50:100]
    assert _batch(mixed, bulk=True) == _batch(mixed, bulk=False)


@pytest.mark.parametrize("bound", [1, 3, 50])
def test_bounded_caches_that_clear_mid_read_lose_nothing(monkeypatch, bound):
    """Every bounded cache on the read path (the rows' records across blocks, the hosts' URL
    prefixes, the compiled scanners) cleared many times within one read: the URL list, counts and
    rejects are still the line loop's.  A log with more distinct rows than the row cache's bound
    once failed with a KeyError on a row cached before the clear."""
    from dustbuster.logs import fastparse

    monkeypatch.setattr(bulkread, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(bulk, "MAX_CACHED", bound)
    monkeypatch.setattr(fastparse, "_MAX_PREFIXES", bound)
    assert_same(LOG_FILES)
    path = LOGS / "semicomplete-apache" / "apache_logs"
    assert_same([path, path], site="www.example.com")  # the second pass: every row cached before


def test_one_block_with_more_distinct_rows_than_the_cache_bound():
    ctx = Context(site="www.example.com", scheme="http")
    scanner = bulk.scanner_for("common", ctx)
    text = "".join(f'1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /p{i} HTTP/1.0" 200 {i}\n' for i in range(40))
    cache: dict = {}
    first = bulk.scan(text, scanner, ctx, cache=cache, max_cached=8)
    again = bulk.scan(text, scanner, ctx, cache=cache, max_cached=8)
    assert len(first.records) == len(again.records) == 40
    assert first.records == again.records
    assert len(cache) <= 8
