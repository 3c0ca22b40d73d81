"""The same-origin links of a fetched page (issue 28 item 5; core/urls/pagelinks.py, PageIdentity.links)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core.validation.identity import HEAD_BYTES, page_identity
from dustbuster.core.urls.pagelinks import MAX_HREFS, MAX_LINKS, origin, same_origin_links

PAGE = "http://h.test/dir/page?x=1"


def links(body: str | bytes, final: str = PAGE, ctype: str = "text/html") -> tuple[str, ...]:
    raw = body.encode() if isinstance(body, str) else body
    return page_identity(PAGE, final, [], 200, raw, ctype).links


CASES = [
    # (what, body, links)
    ("relative, resolved against the final URL", '<a href="a">x</a><a href="/b">y</a><a href="../c">z</a>',
     ("http://h.test/dir/a", "http://h.test/b", "http://h.test/c")),
    ("query only", '<a href="?p=2">', ("http://h.test/dir/page?p=2",)),
    ("fragment dropped; the page itself by fragment", '<a href="#top"><a href="/d#sec">',
     ("http://h.test/d",)),
    ("absolute same origin, case and default port normalized", '<a href="HTTP://H.TEST:80/e">',
     ("http://h.test/e",)),
    ("other host, scheme or port left out",
     '<a href="http://other.test/x"><a href="https://h.test/x"><a href="http://h.test:8080/x"><a href="//cdn.test/y">',
     ()),
    ("not pages", '<a href="javascript:alert(1)"><a href="mailto:a@b"><a href="tel:1"><a href="data:,x">'
     '<a href=" JavaScript:void(0)"><a href="ftp://h.test/f">', ()),
    ("de-duplicated, first seen first", '<a href="/z"><a href="/a"><a href="/z"><a href="http://h.test/a">',
     ("http://h.test/z", "http://h.test/a")),
    ("entities decoded in the href", '<a href="/w?a=1&amp;b=2">', ("http://h.test/w?a=1&b=2",)),
    ("<base href> wins over the final URL", '<base href="/base/"><a href="k">', ("http://h.test/base/k",)),
    ("a <base> of another scheme is ignored", '<base href="javascript:x"><a href="k">', ("http://h.test/dir/k",)),
    ("the first <base> counts", '<base href="/one/"><base href="/two/"><a href="k">', ("http://h.test/one/k",)),
    ("<area> counts, <link> and <img> do not",
     '<link rel="canonical" href="/can"><link rel="alternate" href="/feed"><img src="/i.png"><area href="/map">',
     ("http://h.test/map",)),
    ("rel=nofollow left out", '<a rel="nofollow" href="/edit"><a rel="external NoFollow" href="/e2"><a href="/ok">',
     ("http://h.test/ok",)),
    ("robots meta nofollow: no link", '<meta name="robots" content="noindex, nofollow"><a href="/x">', ()),
    ("robots meta none: no link", '<meta name="robots" content="none"><a href="/x">', ()),
    ("robots meta noindex alone keeps links", '<meta name="robots" content="noindex"><a href="/x">',
     ("http://h.test/x",)),
    ("an empty or missing href", '<a href=""><a href><a name="x">', ()),
    ("tabs stripped, spaces escaped, other controls left out",
     '<a href="/a\tb"><a href="/sp ace"><a href="/n\x00ul"><a href="/b\x07l">', ("http://h.test/ab", "http://h.test/sp%20ace")),
    ("backslashes left out (a browser's '/')", '<a href="/\\evil.test/x"><a href="\\\\e/"><a href="/ok">',
     ("http://h.test/ok",)),
    ("an unparseable host", '<a href="http://[::1/x"><a href="http://h.test:99999999/x"><a href="/ok">',
     ("http://h.test/ok",)),
    ("broken entities and tags", '<a href="/e&#xZZ;&bogus;"><a href="/u&#0;"><a <a href="/q"></a',
     ("http://h.test/e&", "http://h.test/q")),  # "&#xZZ;" is no reference: its "#" starts the fragment
]


@pytest.mark.parametrize("what,body,expected", CASES, ids=[c[0] for c in CASES])
def test_links_table(what, body, expected):
    got = links(body)
    assert got == expected, what
    assert all(origin(u) == "http://h.test" for u in got)


def test_links_of_a_redirected_page_are_the_final_pages():
    got = page_identity("http://h.test/s/5", "https://w.h.test/story/5", ["http://h.test/s/5"], 200,
                        b'<a href="6"><a href="http://h.test/s/7">', "text/html").links
    assert got == ("https://w.h.test/story/6",)


def test_not_html_and_not_utf8():
    assert links('<a href="/x">', ctype="application/pdf") == ()
    assert links(b'<a href="/caf\xe9">\xff\xfe<a href="/ok">') == ("http://h.test/ok",)  # the lost bytes: left out
    assert links('<a href="/caf\u00e9">') == ("http://h.test/caf%C3%A9",)


def test_bounds_per_page_and_scanned_bytes():
    many = "".join(f'<a href="/p{i}">' for i in range(MAX_LINKS + 50))
    assert len(links(many)) == MAX_LINKS and links(many)[-1] == f"http://h.test/p{MAX_LINKS - 1}"
    late = "<p>" + "x" * HEAD_BYTES + '</p><a href="/late">'
    assert links('<a href="/early">' + late) == ("http://h.test/early",)  # past HEAD_BYTES: not seen
    # thousands of external links first: only MAX_HREFS distinct hrefs are looked at
    external = "".join(f'<a href="http://o.test/{i}">' for i in range(MAX_HREFS)) + '<a href="/own">'
    assert links(external) == ()
    huge = '<a href="/' + "y" * 200_000 + '"><a href="/after">'
    assert links(huge) == ("http://h.test/after",)  # over 8,192 characters: left out


def test_same_origin_links_without_a_usable_page_url():
    assert same_origin_links(["/a"], "") == ()
    assert same_origin_links(["/a"], "ftp://h.test/") == ()
    assert same_origin_links(["/a"], "http://h.test:bad/") == ()


def test_links_are_not_compared_nor_written():
    a = page_identity(PAGE, PAGE, [], 200, b'<title>T</title><a href="/a">', "text/html")
    b = page_identity(PAGE, PAGE, [], 200, b'<title>T</title><a href="/b">', "text/html")
    assert a.links != b.links and a.title == b.title
    assert "links" not in a.to_json()


_TAGS = st.sampled_from(["a", "A", "area", "base", "link", "meta", "title", "img", "p", "a href", "<a"])
_HREFS = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["/", "//", "?", "#", "http://h.test", "http://h.test:80/x", "https://h.test/x", "HTTP://h.TEST/Y",
                     "http://[::1]/", "http://[zz/", "http://h.test:0/", "http://u:p@h.test/", "\\\\evil.test/x",
                     "/\\evil.test", "http:/x", "http:x", "%zz", "&#xD800;", "&#0;", "&amp", "javascript:x",
                     "../../../..", "./.;/", "\t/a\n", "http://h.test/\udcff", "http://xn--/", "http://h.test./"]),
    st.from_regex(r"[a-z/?=&%#.:@\\0-9 -]{0,40}", fullmatch=True),
)


@st.composite
def documents(draw) -> bytes:
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        tag = draw(_TAGS)
        href = draw(_HREFS).replace('"', "&quot;")
        rel = draw(st.sampled_from(["", ' rel="nofollow"', ' rel="canonical"', " rel=alternate"]))
        parts.append(draw(st.sampled_from([f'<{tag} href="{href}"{rel}>', f"<{tag} href={href}>",
                                           f"<{tag} href='{href}'", draw(st.text(max_size=20))])))
    text = "".join(parts).encode("utf-8", "surrogatepass")
    return text + draw(st.binary(max_size=20))


@settings(max_examples=1500, deadline=None)
@given(documents(), st.sampled_from([PAGE, "https://h.test:8443/a/b/", "http://H.Test/", "http://[::1]:8080/x"]))
def test_hostile_html_never_raises_and_gives_same_origin_absolute_urls(body, final):
    ident = page_identity(final, final, [], 200, body, "text/html")
    own = origin(page_identity(final, final, [], 200, b"<a href='/'>", "").links[0])
    assert len(ident.links) == len(set(ident.links)) <= MAX_LINKS
    for u in ident.links:
        assert u.startswith(("http://", "https://")) and "#" not in u
        assert origin(u) == own, (u, final)
        assert not any(c in u for c in "\x00\t\n\r \x7f\ufffd")


def test_a_canonical_href_urljoin_refuses_is_no_canonical():
    """Found by the test above: ``urljoin`` raises ValueError on ``A://[``; the page has no canonical."""
    for body in (b'<link rel="canonical" href="A://[">', b'<link rel="canonical" href="http://[::1/x">'):
        assert page_identity(PAGE, PAGE, [], 200, body, "text/html").canonical == ""
    assert page_identity(PAGE, PAGE, [], 200, b"", "text/html", link_header='<http://[x>; rel="canonical"').canonical == ""
