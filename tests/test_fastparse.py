"""The fast parsers (logs/fastparse.py) give exactly what the reference parsers
(dustdev.parsers.REFERENCE_PARSERS, the parsers as they were) give: the same record, or the same
skip, or the same reject reason and detail, on every line of every real log in tests/data/logs
(through each fast parser, so mismatching formats are covered too), on JSON lines made of their
records, and on Hypothesis-generated and mutated lines; the reader's records and counts are the
same with either set of parsers."""

from __future__ import annotations

import contextlib
import json
import re
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dustbuster.core.errors import ParseError
from dustbuster.logs import fastparse
from dustbuster.logs.formats import FAST_PARSERS, PARSERS
from dustbuster.logs.parsers import _RE_COMBINED, _RE_COMMON, _RE_VHOST
from dustbuster.logs.reader import ReadStats, iter_records, parse_lines
from dustbuster.logs.record import Context, Limits, Skip

from dustdev.parsers import REFERENCE_PARSERS, reference_parsers
from tests.conftest import LOGS

FAST = tuple(FAST_PARSERS)  # common, combined, vhost, jsonl
CONTEXTS = [
    Context(site="www.Example.com"),
    Context(site=None),
    Context(site="h.org:443", scheme="https", limits=Limits(max_url_length=60, max_tokens=12)),
]


def outcome(parse, line: str, ctx: Context) -> tuple:
    try:
        r = parse(line, ctx)
    except Skip as s:
        return ("skip", s.reason)
    except ParseError as e:
        return ("reject", e.reason, e.detail)
    return ("record", r.url, r.status, r.size, r.digest, r.sketch)


def assert_same(line: str, contexts=CONTEXTS) -> None:
    for ctx in contexts:
        for fmt in FAST:
            fast, ref = outcome(PARSERS[fmt], line, ctx), outcome(REFERENCE_PARSERS[fmt], line, ctx)
            assert fast == ref, (fmt, ctx, line)


def log_files() -> list:
    return sorted(p for p in LOGS.rglob("*") if p.is_file() and p.suffix != ".md")


@lru_cache(maxsize=1)
def real_lines() -> list[str]:
    out: list[str] = []
    for p in log_files():
        out += p.read_bytes().decode("utf-8", "replace").splitlines()
    return out


def json_lines(lines: list[str]) -> list[str]:
    """JSON lines of the records of real lines, in our own form and as an nginx JSON log."""
    out = []
    ctx = Context(site="www.example.com")
    for k, line in enumerate(lines):
        m = _RE_COMBINED.match(line) or _RE_COMMON.match(line)
        if m is None:
            continue
        req = m.group(5).split(" ")
        obj = {"time": m.group(4), "remote_addr": m.group(1), "method": req[0], "url": req[1] if len(req) > 1 else "",
               "status": int(m.group(6)) if m.group(6) != "-" else None, "size": m.group(7)}
        if k % 2:
            obj.update(host="www.example.com:80", size=int(m.group(7)) if m.group(7).isdigit() else None,
                       digest=f"D{k:08X}", sketch=[k, k + 1, 2**64 - 1 - k, 7])
        out.append(json.dumps(obj, ensure_ascii=bool(k % 3)))
        with contextlib.suppress(Skip, ParseError):
            r = REFERENCE_PARSERS["combined"](line, ctx)
            out.append(json.dumps({"url": r.url, "status": r.status, "size": r.size, "method": "GET"}))
    return out


def test_every_real_log_line_parses_as_the_reference_does():
    lines = real_lines()
    assert len(lines) > 75_000
    for line in lines:
        assert_same(line, CONTEXTS[:1])
    for line in lines[::7]:
        assert_same(line, CONTEXTS[1:])


def test_json_lines_of_the_real_records_parse_as_the_reference_does():
    lines = json_lines(real_lines()[::3])
    assert len(lines) > 10_000
    for line in lines:
        assert_same(line)


def test_the_fast_path_takes_most_real_lines():
    """Not a speed test: the fast path must actually be the path the common lines take."""
    ctx = Context(site="www.example.com")
    lines = (LOGS / "semicomplete-apache" / "apache_logs").read_text(encoding="utf-8").splitlines()
    taken = sum(1 for ln in lines
                if (m := fastparse._FAST_CLF.match(ln)) and fastparse._combined_rest(ln, m.end())
                and fastparse._clf(m, None, ctx) is not None)
    assert taken > 0.95 * len(lines)


def read_all(path, site) -> tuple[list, dict]:
    stats = ReadStats()
    recs = [(r.url, r.status, r.size, r.digest, r.sketch) for r in iter_records([path], site=site, stats=stats)]
    return recs, stats.to_dict()


@pytest.mark.parametrize("path", log_files(), ids=lambda p: p.name)
def test_reader_records_and_counts_unchanged(path):
    fast = read_all(path, "www.example.com")
    with reference_parsers():
        ref = read_all(path, "www.example.com")
    assert fast == ref


def test_parse_lines_unchanged_on_real_batches():
    lines = real_lines()
    for i in range(0, len(lines), 997):
        batch = lines[i:i + 500]
        fast = parse_lines(batch, "www.example.com")
        with reference_parsers():
            ref = parse_lines(batch, "www.example.com")
        assert (fast.records, fast.rejects, fast.counts, fast.fmt) == (ref.records, ref.rejects, ref.counts, ref.fmt)


# ---- generated lines -----------------------------------------------------------------------------

_ODD = ' "\\[]#@:%?&=/\t\n\r\x00\x7f\x85\u00e9\u2028\ud800'
odd_text = st.text(alphabet=st.sampled_from(list(_ODD) + list("aZ09.-_~")), max_size=12)
safe_text = st.text(alphabet=st.sampled_from(list("abcXYZ0189.-_~%/?&=;,+!$'()*:@")), max_size=20)


def mostly(valid, odd):
    """Valid values nine times in ten: many generated lines take the fast path, the others not."""
    return st.integers(0, 9).flatmap(lambda k: odd if k == 9 else valid)


word = mostly(st.sampled_from(["-", "frank", "1.2.3.4", "h.org", "::1"]), st.one_of(odd_text, st.just("[x")))
date = mostly(st.just("07/Mar/2004:16:05:49 -0800"), odd_text)
target = mostly(
    st.one_of(safe_text.map(lambda t: "/" + t), st.builds(lambda h, p: f"http://{h}/{p}", st.sampled_from(
        ["h.org", "Other.ORG:80", "h.org:443", "u:p@h.org", "h.org:8080", "[::1]"]), safe_text)),
    st.one_of(
        st.sampled_from(["/", "/a#f", "/a/b?x=1#frag", "*", "a/b", "", "/%7E", "/x y", "/é", "https://h.org:443",
                         "HTTP://h.org/", "http://bad host/", "http://h.org#x", "http://", "/" + "a/" * 130,
                         "/" + "a" * 2100, "/" + "a" * 40]),
        st.builds(lambda a, b: "/" + a + b, safe_text, odd_text),
        st.builds(lambda a, b: "http://" + a + "/" + b, odd_text, odd_text)))
method = mostly(st.sampled_from(["GET", "GET", "HEAD", "POST"]),
                st.sampled_from(["OPTIONS", "get", "PROPFIND", "\\x16\\x03", "GET /", ""]))
proto = mostly(st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/2"]),
               st.sampled_from(["", "HTTP/1.1 extra", "http/1.1", "HTTP/\\x", "HTTP/1\t1"]))
status = mostly(st.sampled_from(["200", "304", "404", "301"]) | st.integers(100, 999).map(str),
                st.sampled_from(["-", "", "20", "2000", "١٢٣", "-10", "0" * 19, "20a"]))
number = mostly(st.sampled_from(["200", "304", "404", "-", "0", "9" * 18]) | st.integers(0, 10**6).map(str),
                st.sampled_from(["", "20", "2000", "١٢٣", "0" * 19, "9" * 19, "9" * 25, "-1", "12a"]))
quoted = mostly(st.sampled_from(['"-"', '"Mozilla/5.0 (X11)"', '"http://ref/"']) | safe_text.map(lambda t: f'"{t}"'),
                st.sampled_from(['"a \\" b"', '"\\\\"', '"', '""', '"x\\"']) | odd_text.map(lambda t: f'"{t}"'))
tail = mostly(st.sampled_from(["", "", " ", " extra", ' "x" 5']), st.sampled_from(["\t", "\n", " \n", "  x\ny", "x"]))
vhost = mostly(st.sampled_from(["h.org", "h.org:80", "H.ORG:443"]),
               st.sampled_from(["[v]", "u@h.org", "bad\thost", "h.org:8080", "-", ""]))


@st.composite
def clf_line(draw) -> str:
    req = " ".join(x for x in (draw(method), draw(target), draw(proto)) if x or draw(st.booleans()))
    if not draw(mostly(st.just(False), st.just(True))):
        req = req.replace('"', '\\"')
    line = f'{draw(word)} {draw(word)} {draw(word)} [{draw(date)}] "{req}" {draw(status)} {draw(number)}'
    fmt = draw(st.sampled_from(["common", "combined", "vhost", "vhost-common"]))
    if fmt in ("combined", "vhost"):
        line += f" {draw(quoted)} {draw(quoted)}"
    line += draw(tail)
    if fmt.startswith("vhost"):
        line = draw(vhost) + " " + line
    return line


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clf_line())
@example('1.2.3.4 - - [07/Mar/2004:16:05:49 -0800] "GET /a/b?x=1#frag HTTP/1.1" 200 12846 "http://ref/" "Mozilla/5.0 (X11)"')
@example('h.org:80 1.2.3.4 - - [d] "GET /a HTTP/1.1" 200 -\n')
def test_generated_clf_lines_parse_as_the_reference_does(line):
    assert_same(line)


@st.composite
def mutated_real_line(draw) -> str:
    line = draw(st.sampled_from(real_lines()[::10]))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(line)))
        cut = draw(st.integers(0, 3))
        line = line[:at] + draw(st.sampled_from(list(_ODD) + ["", "GET", "-", "9" * 20, ' "', "http://"])) + line[at + cut:]
    return line


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_real_line())
def test_mutated_real_lines_parse_as_the_reference_does(line):
    assert_same(line)


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                        odd_text, target, method, number)
json_value = st.recursive(json_scalar, lambda v: st.lists(v, max_size=3) | st.dictionaries(odd_text, v, max_size=3),
                          max_leaves=6)
json_key = st.sampled_from(["url", "path", "method", "status", "size", "host", "digest", "sketch", "time", "ua"])
json_record = st.fixed_dictionaries(
    {"url": target, "status": mostly(st.integers(100, 599), json_value), "method": method},
    optional={"size": mostly(st.integers(0, 2**63 - 1) | st.none(), json_value), "path": target,
              "host": mostly(st.sampled_from(["h.org", "H.org:80", "u@h.org"]), json_value),
              "digest": mostly(st.text("ABCDEF0123456789", min_size=1, max_size=32), json_value),
              "sketch": mostly(st.lists(st.integers(0, 2**64 - 1), max_size=5), json_value | st.lists(
                  st.integers(-1, 2**64), max_size=5) | st.text("0123456789abcdef, g", max_size=20)),
              "ua": safe_text, "time": st.just("2024-07-16T15:31:55Z")})


@st.composite
def json_line(draw) -> str:
    obj = draw(json_record)
    obj.update(draw(mostly(st.just({}), st.dictionaries(json_key, json_value, max_size=4))))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    for _ in range(draw(mostly(st.just(0), st.integers(1, 2)))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["[" * 40, "1e400", "NaN", "-Infinity", " ", "}", '"', "\\ud800", "9" * 30])) + text[at:]
    return text


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_line())
@example('{"url": "/x", "status": NaN}')
@example('{"url": "/x", "t": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}')
@example(' {"url": "/x"}')
@example('{"url": "", "path": "/p", "size": "12", "status": "-"}')
def test_generated_json_lines_parse_as_the_reference_does(line):
    assert_same(line)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(clf_line(), mutated_real_line()))
def test_the_unrolled_expressions_match_as_the_reference_does(line):
    """dustbuster.logs.fastparse's faster copies of the reference expressions: same match, same groups."""
    for ref, same in ((_RE_COMMON, fastparse._SAME_COMMON), (_RE_COMBINED, fastparse._SAME_COMBINED),
                      (_RE_VHOST, fastparse._SAME_VHOST)):
        assert same.pattern != ref.pattern
        a, b = ref.match(line), same.match(line)
        assert (a and a.groups()) == (b and b.groups()), line


def test_unrolled_quoted_string_language():
    q = re.compile(r'"((?:[^"\\]|\\.)*)"')
    u = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"')
    for s in ['""', '"a"', '"\\""', '"\\\\"', '"a\\"b" c"', '"\\', '"\\\n"', '"x\\y"z"']:
        a, b = q.match(s), u.match(s)
        assert (a and a.group(0)) == (b and b.group(0)), s
