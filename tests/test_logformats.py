"""Log parsing: every format, the record semantics, and bad input counted by reason."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from dustbuster.core.errors import ConfigError, ParseError
from dustbuster.logs.formats import PARSERS, sniff
from dustbuster.logs.record import Context, Limits, Skip
from dustbuster.logs.reader import RejectSink, read_urllist

CTX = Context(site="www.example.com")

COMMON = '1.2.3.4 - - [07/Mar/2004:16:05:49 -0800] "GET /a/b?x=1#frag HTTP/1.1" 200 12846'
COMBINED = COMMON + ' "http://ref/" "Mozilla/5.0 (X11)"'
VHOST = "shop.example.com:80 " + COMBINED
VHOST_COMMON = "shop.example.com " + COMMON
HERITRIX = (
    "2006-02-23T10:33:28.747Z   200         49 http://www.kb.dk/robots.txt P http://www.kb.dk/ "
    "text/plain #026 20060223093328648+88 7R6G2VJ64VIPTOFY72UYSWDH4OSDUNP7 - -"
)
CDX = "org,iana)/ 20140126200624 http://www.iana.org/ text/html 200 OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB - - 2258 334 iana.warc.gz"
CDXJ = 'fr,x)/a 20240716153155 {"url": "https://x.fr/a?b=1", "status": "200", "digest": "D5K3", "length": "9754"}'
JSONL = json.dumps({"path": "/p?q=1", "status": 200, "size": 10, "host": "h.org", "sketch": [1, 2, 3, 4]})


@pytest.mark.parametrize(
    "fmt, line, url, status, size",
    [
        ("common", COMMON, "http://www.example.com/a/b?x=1", 200, 12846),
        ("combined", COMBINED, "http://www.example.com/a/b?x=1", 200, 12846),
        ("vhost", VHOST, "http://shop.example.com/a/b?x=1", 200, 12846),
        ("vhost", VHOST_COMMON, "http://shop.example.com/a/b?x=1", 200, 12846),
        ("heritrix", HERITRIX, "http://www.kb.dk/robots.txt", 200, 49),
        ("cdx", CDX, "http://www.iana.org/", 200, None),
        ("cdxj", CDXJ, "https://x.fr/a?b=1", 200, None),
        ("jsonl", JSONL, "http://h.org/p?q=1", 200, 10),
        ("common", COMMON.replace("GET /a/b?x=1#frag", "GET http://Other.ORG:80/z"), "http://other.org/z", 200, 12846),
        ("common", COMMON.replace("200 12846", "304 -"), "http://www.example.com/a/b?x=1", 304, None),
        ("common", COMMON.replace("GET", "HEAD"), "http://www.example.com/a/b?x=1", 200, None),
    ],
)
def test_parsers(fmt, line, url, status, size):
    rec = PARSERS[fmt](line, CTX)
    assert (rec.url, rec.status, rec.size) == (url, status, size)


def test_digest_and_sketch_fields():
    assert PARSERS["heritrix"](HERITRIX, CTX).digest == "7R6G2VJ64VIPTOFY72UYSWDH4OSDUNP7"
    assert PARSERS["heritrix"](HERITRIX.replace(" 7R6G", " sha1:7R6G"), CTX).digest.startswith("7R6G")
    assert PARSERS["jsonl"](JSONL, CTX).sketch == (1, 2, 3, 4)
    assert PARSERS["jsonl"](json.dumps({"url": "/x", "sketch": "a,ff"}), CTX).sketch == (10, 255)


@pytest.mark.parametrize(
    "fmt, line, reason",
    [
        ("common", "garbage", "malformed"),
        ("common", COMMON.replace("GET", "\\x16\\x03\\x01"), "bad_method"),
        ("common", COMMON.replace("GET", "get"), "bad_method"),
        ("common", COMMON.replace("/a/b?x=1#frag", "/" + "a" * 3000), "url_too_long"),
        ("common", COMMON.replace("/a/b?x=1#frag", "/" + "a/" * 200), "too_many_tokens"),
        ("common", COMMON.replace("/a/b?x=1#frag", "/a\\x00b"), None),  # an escaped NUL is text
        ("common", COMMON.replace("/a/b?x=1#frag", "a/b"), "bad_target"),
        ("common", COMMON.replace("/a/b?x=1#frag", "http://bad host/"), "bad_url"),
        ("jsonl", "{not json", "malformed"),
        ("jsonl", "[1, 2]", "malformed"),
        ("jsonl", json.dumps({"url": "/x", "sketch": "zz"}), "malformed"),
        ("jsonl", json.dumps({"url": "/x", "size": "big"}), "malformed"),
        ("cdx", "a b c", "malformed"),
    ],
)
def test_bad_lines(fmt, line, reason):
    if reason is None:
        PARSERS[fmt](line, CTX)
        return
    with pytest.raises(ParseError) as e:
        PARSERS[fmt](line, CTX)
    assert e.value.reason == reason


def test_skips():
    with pytest.raises(Skip):
        PARSERS["common"](COMMON.replace("GET /a/b?x=1#frag", "OPTIONS *"), CTX)
    with pytest.raises(Skip):
        PARSERS["heritrix"](HERITRIX.replace("http://www.kb.dk/robots.txt", "dns:www.kb.dk"), CTX)
    with pytest.raises(Skip):
        PARSERS["heritrix"](HERITRIX.replace("   200 ", " -5003 "), CTX)


@pytest.mark.parametrize(
    "lines, fmt",
    [([COMMON] * 3, "common"), ([COMBINED] * 3, "combined"), ([VHOST] * 3, "vhost"), ([HERITRIX], "heritrix"),
     ([CDX], "cdx"), ([CDXJ], "cdxj"), ([JSONL], "jsonl"), (["host\turl\tresponse\tbytes"], "tsv"),
     ([COMBINED, "junk", COMBINED], "combined")],
)
def test_sniff(lines, fmt):
    assert sniff(lines, CTX) == fmt


def test_sniff_unknown():
    with pytest.raises(ParseError):
        sniff(["hello world", "what is this"], CTX)


def test_reader_semantics_and_rejects(tmp_path):
    """docs/semantics.md, one line each."""
    lines = [
        COMMON.replace("/a/b?x=1#frag", "/p").replace("200 12846", "200 100"),
        COMMON.replace("/a/b?x=1#frag", "/p").replace("200 12846", "200 180"),  # widens [100, 180]
        COMMON.replace("/a/b?x=1#frag", "/p").replace("200 12846", "304 0"),  # listed, no size
        COMMON.replace("/a/b?x=1#frag", "/q").replace("200 12846", "304 -"),  # listed only
        COMMON.replace("/a/b?x=1#frag", "/r").replace("200 12846", "404 50"),  # dropped
        COMMON.replace("/a/b?x=1#frag", "/s").replace("200 12846", "301 30"),  # redirect: no size
        COMMON.replace("/a/b?x=1#frag", "/t").replace("200 12846", "200 -"),  # unknown size
        "garbage line",
        "",
        COMMON.replace("GET", "FOO"),
    ]
    log = tmp_path / "access.log.gz"
    with gzip.open(log, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    rej = io.StringIO()
    ul, st = read_urllist([log], site="h.org", rejects=RejectSink(rej))
    assert set(ul) == {"http://h.org/p", "http://h.org/q", "http://h.org/s", "http://h.org/t"}
    assert ul.info("http://h.org/p").interval == (100, 180) and ul.info("http://h.org/p").hits == 3
    assert ul.info("http://h.org/q").interval is None
    assert ul.info("http://h.org/s").interval is None
    assert ul.info("http://h.org/t").interval is None
    assert st.dropped_status == 1 and st.blank == 1 and st.records == 6
    assert dict(st.rejected) == {"malformed": 1, "bad_method": 1}
    out = rej.getvalue().splitlines()
    assert out[0].startswith(f"{log}:8\tmalformed") and out[1].startswith(f"{log}:10\tbad_method")


def test_reader_binary_junk_is_counted(tmp_path):
    log = tmp_path / "junk.log"
    log.write_bytes(COMBINED.encode() + b"\n\xff\xfe\x00binary\n" + COMBINED.encode() + b"\n")
    ul, st = read_urllist([log], site="h.org")
    assert st.records == 2 and st.rejected["bad_encoding"] == 1 and len(ul) == 1


def test_reader_needs_site_for_hostless_formats(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(COMMON + "\n")
    with pytest.raises(ConfigError, match="--site"):
        read_urllist([log])
    with pytest.raises(ConfigError, match="no such log"):
        read_urllist([tmp_path / "missing.log"], site="x")
    with pytest.raises(ConfigError, match="unknown format"):
        read_urllist([log], fmt="weird", site="x")


def test_limits_configurable(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(COMMON + "\n")
    _, st = read_urllist([log], site="h", limits=Limits(max_url_length=10))
    assert st.rejected["url_too_long"] == 1


@pytest.mark.parametrize(
    "path, fmt, site",
    [
        ("monitorware-twiki/access_log", "common", "monitorware.example"),
        ("semicomplete-apache/apache_logs", "combined", "semicomplete.com"),
        ("secrepo-selflogs/access.log.2022-12-22", "combined", "www.secrepo.com"),
        ("nasa-ksc-1995-tsv-sample/nasa_19950701.tsv", "tsv", "ksc.nasa.gov"),
        ("netarchivesuite-heritrix-crawllogs/crawl.2006-02-23.job5.log", "heritrix", None),
        ("webarchive-cdx-samples/pywb_iana.org_2014.cdx", "cdx", None),
        ("webarchive-cdx-samples/ia_wayback_archive.org_homepage_2012.cdx", "cdx", None),
        ("webarchive-cdx-samples/commoncrawl_CC-MAIN-2024-30_cdx-00187_slice.cdxj", "cdxj", None),
    ],
)
def test_real_logs_parse_clean(logs_dir, path, fmt, site):
    ul, st = read_urllist([logs_dir / path], site=site)
    assert st.formats[str(logs_dir / path)] == fmt
    assert st.records > 0 and len(ul) > 0
    # nothing lost: every line is a record, a drop, a skip, a reject or blank
    assert st.lines == st.records + st.dropped_status + sum(st.skipped.values()) + sum(st.rejected.values()) + st.blank
    assert sum(st.rejected.values()) <= 0.01 * st.lines
