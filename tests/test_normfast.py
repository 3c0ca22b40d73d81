"""dustbuster.core.urls.normfast: the normalizer without yarl gives yarl's result, exactly, for every URL
it takes (and says None for the others): case tables, Hypothesis (thousands of generated URLs, with
escapes, dot segments, ports, fragments and every printable ASCII character), every URL of the real
logs in tests/data/logs, and variants of them that need RFC 3986 work."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dustbuster.core.errors import ParseError
from dustbuster.core.urls.normalize import _normalize, normalize
from dustbuster.core.urls.normfast import fast_normalize, remove_dot_segments
from tests.conftest import LOGS


def yarl(url: str) -> str | None:
    """The reference: yarl's normalization (None where it raises)."""
    try:
        return _normalize.__wrapped__(url)
    except ParseError:
        return None


def check(url: str) -> str | None:
    fast = fast_normalize(url)
    if fast is not None:
        assert fast == yarl(url), url
    try:
        full = normalize(url)
    except ParseError:
        full = None
    assert full == yarl(url), url
    return fast


@pytest.mark.parametrize("url, want", [
    ("HTTP://WWW.Example.COM/a", "http://www.example.com/a"),
    ("hTTpS://H.com:443/a", "https://h.com/a"),
    ("http://h.com:080/a", "http://h.com/a"),
    ("http://h.com:08080/a", "http://h.com:8080/a"),
    ("http://h.com:/a", "http://h.com/a"),
    ("http://h.com:0/a", "http://h.com:0/a"),
    ("http://h.com", "http://h.com/"),
    ("http://h.com?a=1", "http://h.com/?a=1"),
    ("http://h.com?", "http://h.com/"),
    ("http://h.com/p?#x", "http://h.com/p"),
    ("http://h.com/a/./b/../c", "http://h.com/a/c"),
    ("http://h.com/../../a", "http://h.com/a"),
    ("http://h.com/a/..", "http://h.com/"),
    ("http://h.com/a/.", "http://h.com/a/"),
    ("http://h.com/%2e%2E/x", "http://h.com/x"),
    ("http://h.com/%7euser/%41", "http://h.com/~user/A"),
    ("http://h.com/a%2fb%2b%3a%40%26", "http://h.com/a%2Fb%2B:@&"),
    ("http://h.com/a%zz%", "http://h.com/a%25zz%25"),
    ("http://h.com/a%4", "http://h.com/a%254"),
    ("http://h.com/a b[c]\\d", "http://h.com/a%20b%5Bc%5D%5Cd"),
    ("http://h.com/p?q=%26%3d%2B%3B%2f%3F%7e", "http://h.com/p?q=%26%3D%2B%3B/?~"),
    ("http://h.com/p?a b=c d", "http://h.com/p?a+b=c+d"),
    ("http://h.com/p?%20%c3%a9", "http://h.com/p?%20%C3%A9"),
    ("http://h.com/p?x=1#a?b", "http://h.com/p?x=1"),
    ("http://1.2.3.4:80/", "http://1.2.3.4/"),
    ("http://XN--BCHER-KVA.de/x", "http://xn--bcher-kva.de/x"),
])
def test_case_table(url, want):
    assert check(url) == want


@pytest.mark.parametrize("url", [
    "http://[::1]:80/x", "http://u:p@h.com/", "http://bücher.de/", "ftp://h.com/", "http://h.com:65536/",
    "http://h.com:123456/", "http://h_x.com/", "http://h.com/\x00", "http://h.com/é", "//h.com/", "http:/h.com/",
    "http://h.com\\x/", "http://h.com/a\tb",
])
def test_unusual_urls_go_to_yarl(url):
    assert fast_normalize(url) is None
    check(url)


SEGMENT = st.one_of(
    st.sampled_from([".", "..", "", "a", "B", "%2e", "%2E%2e", "%7e", "%7E", "%41", "%2f", "%2F", "%2b", "%25",
                     "%", "%4", "%zz", "%c3%a9", "index.html", "a.b", "-._~"]),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/?#"), max_size=6),
)
PATH = st.lists(SEGMENT, max_size=6).map(lambda xs: "".join("/" + x for x in xs))
QUERY = st.one_of(st.none(), st.lists(st.one_of(
    st.sampled_from(["a=1", "b=%2f", "c=%26", "%3d=%3D", "d=%7e", "e= f", "g=+", "h=%20", "=", "", "x=%", "x=%g1",
                     "y=%C3%A9", "q=/?:@", "z=[]{}|^`\"<>\\"]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="#"), max_size=8),
), max_size=4).map("&".join))
HOST = st.sampled_from(["h.com", "H.COM", "www.Example.com", "a-b.h.com", "xn--bcher-kva.de", "h..com", "-h.com",
                        "h.com.", "1.2.3.4", "01.2.3.4", "1.2.3", "256.1.1.1", "h", "H1", "999", "a.1"])
PORT = st.sampled_from([None, "", "80", "443", "080", "0443", "8080", "0", "65535", "65536", "99999", "00080"])
SCHEME = st.sampled_from(["http", "https", "HTTP", "Https", "ftp", "ws", "h2", "http+x"])
FRAGMENT = st.one_of(st.none(), st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8))


@st.composite
def urls(draw) -> str:
    port = draw(PORT)
    query, fragment = draw(QUERY), draw(FRAGMENT)
    u = f"{draw(SCHEME)}://{draw(HOST)}{'' if port is None else ':' + port}{draw(PATH)}"
    if query is not None:
        u += "?" + query
    if fragment is not None:
        u += "#" + fragment
    return u


@settings(max_examples=5000, deadline=None)
@given(urls())
@example("http://h.com/%2e%2e/%2E/a/../b/.?x=%2e#..")
@example("HTTP://H.COM:80")
def test_generated_urls_normalize_as_yarl_does(url):
    check(url)


@settings(max_examples=2000, deadline=None)
@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x24F), max_size=40))
def test_any_text_after_a_host_normalizes_as_yarl_does(rest):
    for prefix in ("http://h.com/", "HTTP://H.com:80/", "https://h.com?"):
        check(prefix + rest)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["a", "", ".", "..", "b.c", "..."]), max_size=8))
def test_remove_dot_segments_is_yarls(segments):
    from yarl._path import normalize_path

    path = "/" + "/".join(segments)
    assert remove_dot_segments(path) == normalize_path(path)


def real_urls() -> list[str]:
    """The URL of every line of the real logs that has one (status >= 400 included: scanners' URLs)."""
    from dustbuster.logs.formats import PARSERS, sniff, tsv_header
    from dustbuster.logs.record import Context

    out: dict[str, None] = {}
    for p in sorted(LOGS.rglob("*")):
        if not p.is_file() or p.suffix == ".md":
            continue
        lines = p.read_bytes().decode("utf-8", "replace").splitlines()
        ctx = Context(site="www.example.com", tsv_columns=tsv_header(lines[0]))
        parse = PARSERS["tsv" if ctx.tsv_columns else sniff(lines[:50], ctx)]
        for line in lines:
            try:
                out[parse(line, ctx).url] = None
            except Exception:  # noqa: BLE001 - skips and rejects have no URL
                pass
    return list(out)


def variants(u: str) -> list[str]:
    """``u`` written in ways that RFC 3986 normalization undoes or changes."""
    scheme, rest = u.split("://", 1)
    host, slash, path = rest.partition("/")
    out = [scheme.upper() + "://" + rest, f"{scheme}://{host.upper()}{slash}{path}",
           f"{scheme}://{host}:{80 if scheme == 'http' else 443}/{path}", u + "#frag", f"{scheme}://{host}/./x/../{path}",
           u.replace("%2F", "%2f").replace("%20", "%20").lower() if "%" in u else u + "%7e"]
    return out


def test_every_real_log_url_and_its_variants_normalize_as_yarl_does():
    urls_ = real_urls()
    assert len(urls_) > 13_000
    taken = total = 0
    for u in urls_:
        check(u)
        for v in variants(u):
            total += 1
            taken += check(v) is not None
    assert taken > 0.9 * total  # the variants that need work are the fast normalizer's, not yarl's
