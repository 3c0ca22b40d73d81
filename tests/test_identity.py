"""Page identity (issue 23): the head parser on real-looking HTML, title normalisation, the
soft-error signatures, the same-page comparison, parameter strata and declared candidates."""

from __future__ import annotations

import asyncio
import random

from dustbuster.core.validation.round import Round
from dustbuster.core.mining.declared import declared_candidates
from dustbuster.core.validation.fetched import RoundFetcher, compare_pages
from dustbuster.core.validation.identity import (PageIdentity, link_header_canonical, normalize_title, page_identity,
                                      parse_head)
from dustbuster.core.validation.paramstrata import ParamStrata, changed_pages, changed_params, revision_like
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.validation.softerror import (ErrorSignature, accept_scope_probes, is_id_value, is_soft_error, scope_key,
                                       value_dropped, value_probe)
from dustbuster.core.validation.validate import Fetched

MEDIAWIKI = b"""<!DOCTYPE html>
<html class="client-nojs" lang="en" dir="ltr">
<head>
<meta charset="UTF-8">
<title>Foo &amp; Bar &#8211; MyWiki</title>
<meta name="ROBOTS" content="NOINDEX,NOFOLLOW">
<link rel="canonical" href="/wiki/Foo_%26_Bar">
<link rel="alternate" type="application/rss+xml" href="/feed">
</head><body><p>text</p></body></html>"""

WORDPRESS = b"""<html><head><title>Hello world! | My Blog</title>
<link rel='shortlink' href='http://b.test/?p=1' />
<link rel="canonical" href="http://b.test/2026/11/hello-world/" />
</head><body><article>Welcome to WordPress.</article></body></html>"""


def test_head_of_real_pages():
    h = parse_head(MEDIAWIKI)
    assert h.title == "Foo & Bar \u2013 MyWiki" and h.canonicals == ("/wiki/Foo_%26_Bar",)
    assert h.robots == "noindex,nofollow"
    ident = page_identity("http://w.test/index.php?title=Foo_%26_Bar&printable=yes", "http://w.test/index.php?title=Foo_%26_Bar&printable=yes",
                          [], 200, MEDIAWIKI, "text/html; charset=UTF-8")
    assert ident.canonical == "http://w.test/wiki/Foo_%26_Bar"  # relative, resolved against the page
    wp = page_identity("http://b.test/?p=1", "http://b.test/?p=1", [], 200, WORDPRESS, "text/html")
    assert wp.canonical == "http://b.test/2026/11/hello-world/" and wp.declared() == wp.canonical
    assert normalize_title(wp.title) == "hello world my blog"


def test_odd_canonicals():
    two = b'<html><head><link rel="canonical" href="/a"><link rel="canonical" href="/b"></head></html>'
    assert page_identity("http://h/x", "http://h/x", [], 200, two, "text/html").canonical == ""  # several: none
    same = b'<html><head><link rel="canonical" href="/a#top"><link rel=canonical href="http://h/a"></head></html>'
    assert page_identity("http://h/x", "http://h/x", [], 200, same, "text/html").canonical == "http://h/a"
    body = b'<html><head><title>t</title></head><body><link rel="canonical" href="/in-body"></body></html>'
    assert page_identity("http://h/x", "http://h/x", [], 200, body, "text/html").canonical == "http://h/in-body"
    header = page_identity("http://h/x", "http://h/x", [], 200, two, "text/html",
                           link_header='<http://h/doc.pdf>; rel="alternate", </c>; rel="canonical"')
    assert header.canonical == "http://h/c"  # the header wins over the document
    assert link_header_canonical('<http://h/a>; rel="canonical nofollow"') == ["http://h/a"]
    assert page_identity("http://h/x", "http://h/x", [], 200, b"%PDF-1.4", "application/pdf").title == ""
    redirected = page_identity("http://h/s/5", "http://h/story_5", ["http://h/s/5"], 200, b"<title>x</title>", "")
    assert redirected.redirected and redirected.declared() == "http://h/story_5"


def test_titles_normalised():
    assert normalize_title("  Foo&nbsp;&amp;  BAR — Wiki ") == normalize_title("foo & bar - wiki") == "foo bar wiki"
    assert normalize_title("fonts-noto-mono files") != normalize_title("fonts-droid-fallback files")
    assert normalize_title("ﬁle") == "file"  # NFKC
    ident = PageIdentity("u", 200, "u", (), "c", "T", "", sketch(b"<p>a b c</p>"))
    assert PageIdentity.from_json(ident.to_json()) == ident
    assert PageIdentity.from_json({"url": "u"}).title == ""  # old or partial documents stay readable


def _page(url: str, title: str, text: str, canonical: str = "", chain=()) -> Fetched:
    body = f"<html><head><title>{title}</title></head><body><p>{text}</p></body></html>".encode()
    ident = page_identity(url, chain[-1] if chain else url, list(chain[:-1]) if chain else [], 200, body, "text/html",
                          page_sketch=sketch(body))
    ident = PageIdentity(ident.url, 200, ident.final_url, ident.chain, canonical, ident.title, "", ident.sketch,
                         ident.words)
    return Fetched(True, ident.sketch, 200, redirected=bool(ident.chain), identity=ident)


BOILER = "no description is available for this package " * 6


def test_same_page_needs_title_and_canonical():
    a, b = _page("http://h/pkg/a", "fonts-noto-mono", BOILER), _page("http://h/pkg/b", "fonts-droid-fallback", BOILER)
    assert a.sketch == b.sketch and compare_pages(a, b, 1.0) == "title_differs"
    c = _page("http://h/x?v=1", "t", BOILER, canonical="http://h/one")
    d = _page("http://h/x?v=2", "t", BOILER, canonical="http://h/two")
    assert compare_pages(c, d, 1.0) == "canonical_differs"
    assert compare_pages(c, _page("http://h/x", "t", BOILER, canonical="http://h/one"), 1.0) == "similar"
    moved = _page("http://h/s/5", "x", "other words entirely", chain=("http://h/s/5", "http://h/story_5"))
    assert compare_pages(moved, _page("http://h/story_5", "story", BOILER), 1.0) == "same_target"


ERROR = ("Error the revision #{r} of the page named story {n} does not exist this is usually caused by following "
         "an outdated diff or history link to a page that has been deleted return to the main page")


def test_soft_error_signature_of_templated_error_pages():
    def err(r, n):
        return _page(f"http://h/wiki?title=story_{n}&oldid={r}", "Error", ERROR.format(r=r, n=n)).identity

    probes = [err(123456789012, 3), err(987654321098, 9)]
    sig = accept_scope_probes([err(50031, 3)], probes)
    assert sig is not None and sig.title == "error"
    assert is_soft_error(err(50042, 4), [sig])  # another purged revision: the same error page
    real = _page("http://h/wiki?title=story_7&oldid=50071", "story 7: difference", BOILER).identity
    assert not is_soft_error(real, [sig])
    # a parameter the page ignores: the probe shows the page itself, which is no error signature
    page = _page("http://h/story?id=5&sid=00ab12", "story 5", " ".join(f"word{i} text" for i in range(60))).identity
    assert accept_scope_probes([page], [page]) is None
    # two probes from two sources that differ: no signature
    assert accept_scope_probes([], [page, real]) is None
    assert not is_soft_error(page, [ErrorSignature("", None, None)])


def test_an_ignored_session_id_is_no_error_signature_but_purged_revisions_are():
    """Probes (random values) showing the logged URL's own page: the URL without the value tells
    why (review of issue 23: `remove sid=*` had ended undecided, its URLs read as soft errors).
    The same page without it: an ignored parameter, no signature.  Another page: the logged URL is
    itself the error page (a purged revision), the probes' answer is the signature."""
    words = " ".join(f"word{i} text" for i in range(60))
    forum = [_page(f"http://h/forum?sid={v}", "forum", words).identity for v in ("a1b2c3d4", "ffee1234")]
    probes = [_page(f"http://h/forum?sid={v}", "forum", words).identity for v in ("90817263", "5546372819")]
    bare = _page("http://h/forum", "forum", words).identity
    assert accept_scope_probes(forum, probes, bare) is None
    assert value_dropped("http://h/forum?sid=a1b2c3d4&x=top") == "http://h/forum?x=top"
    assert value_dropped("http://h/forum?x=top") is None

    def err(r, n):
        return _page(f"http://h/wiki?title=story_{n}&oldid={r}", "Error", ERROR.format(r=r, n=n)).identity

    current = _page("http://h/wiki?title=story_3", "story 3", words).identity
    sig = accept_scope_probes([err(50031, 3)], [err(123456789012, 3), err(987654321098, 9)], current)
    assert sig is not None and sig.title == "error"


def test_probe_urls():
    rnd = random.Random(1)
    p = value_probe("http://h/wiki?title=Foo&oldid=50031&diff=prev", rnd)
    assert p.startswith("http://h/wiki?title=Foo&oldid=") and "diff=prev" in p and "50031" not in p
    assert value_probe("http://h/search?q=foo", rnd) is None
    assert is_id_value("00ab12") and is_id_value("42") and not is_id_value("feed1") and not is_id_value("abcdef")
    assert scope_key("http://h/story_5?b=1&a=2") == scope_key("http://h/story_77?a=9&b=3") == "/story_N?a&b"


def test_parameter_strata():
    assert changed_params("http://h/p?a=1&hl=x&rev=123", "http://h/p?a=1") == ["drops hl", "drops rev"]
    assert changed_params("http://h/p?page=3", "http://h/p?page=2") == ["maps page (number)"]
    assert revision_like("50031") and revision_like("2026-11-25") and revision_like("9f3c2ab") and not revision_like("2")
    urls = ([f"http://h/p?id={i}&hl=w" for i in range(50)] + [f"http://h/p?id=5&rev={r}" for r in (1001, 1002)]
            + ["http://h/p?id=6&rev=2001"])
    assert changed_pages(urls, {"rev"})["rev"] == {"http://h/p?id=5&rev=1001"}  # the older state only

    def drop(u):
        return u.split("&", 1)[0]

    cands = [u for u in urls if drop(u) != u]
    st = ParamStrata(cands, drop, urls)
    assert set(st.strata) == {"drops hl", "drops rev", "rev: changed pages"}
    order = st.order(cands)
    assert "http://h/p?id=5&rev=1001" in order[:4]  # the page that changed is drawn first
    for u in cands[:45]:
        st.compared(u, True)
    assert [f.name for f in st.short_list()] == ["drops rev", "rev: changed pages"]  # hl alone proves nothing on rev
    one = ParamStrata([f"http://h/p?id={i}&hl=w" for i in range(9)], drop, urls)
    assert one.strata == {}  # one parameter: Figure 3's draw is its sample


def test_declared_pairs_and_candidates():
    async def go():
        def fetch_fn(url):
            async def f(u):
                canon = "http://h/story_" + u.rsplit("=", 1)[1] if "?id=" in u else ""
                return _page(u, "story", BOILER + u[-1], canonical=canon)
            return f
        rf = RoundFetcher(fetch_fn(None))
        for i in range(5):
            await rf(f"http://h/story?id={i}")
        await rf("http://h/story_1")
        return rf

    rf = asyncio.run(go())
    assert rf.declared == {f"http://h/story?id={i}": f"http://h/story_{i}" for i in range(5)}
    rules = declared_candidates(list(rf.declared.items()))
    from dustbuster.core.canon.coverage import apply_rule

    assert len(rules) == 1 and all(apply_rule(rules[0], u) == c for u, c in rf.declared.items())
    assert rules[0].evidence["source"] == "declared" and rules[0].status == "likely"


def test_identity_shown_by_rules_dashboard_and_eval_html(tmp_path, capsys):
    from dustbuster.agents.dashboard_view import _identities
    from dustbuster.cli.evalhtml import _examples, truth_identities
    from dustbuster.cli.rules import _print_readable

    u = _page("http://h/pkg/a?view=x", "fonts-noto-mono", BOILER, canonical="http://h/pkg/a").identity
    v = _page("http://h/pkg/b?view=x", "fonts-droid-fallback", BOILER, canonical="http://h/pkg/b").identity
    ev = {"positives": 38, "negatives": 0, "applicable": 90, "samples": [[u.url, v.url, "canonical_differs"]],
          "identities": [{"u": u.to_json(), "v": v.to_json(), "outcome": "canonical_differs"}],
          "parameters": [{"family": "drops view", "urls": 9, "positives": 3, "required": 3, "short": False}]}
    doc = {"site": "h", "version": 1, "created": 0, "stats": {},
           "rules": [{"type": "parameter", "name": "view", "action": "remove", "status": "valid", "evidence": ev}]}
    _print_readable("h", doc)
    out = capsys.readouterr().out
    assert "identity: u: 200, title 'fonts-noto-mono', canonical http://h/pkg/a | v: 200" in out
    assert "by parameter: drops view 3 same page of 9 URLs" in out
    shown = _identities(ev)
    assert shown[0]["u"]["title"] == "fonts-noto-mono" and shown[0]["v"]["canonical"] == "http://h/pkg/b"
    truth = tmp_path / "t.jsonl"
    truth.write_text('{"url": "http://h/pkg/a", "ok": true, "title": "A & B", "canonical": "http://h/c"}\n{"url": "x"}\n')
    ids = truth_identities(str(truth), {"http://h/pkg/a"})
    html = _examples({"results": [{"name": "r", "overall": {"false_merge_groups": 1, "false_merge_examples": [
        {"canonical": "http://h/pkg/a", "urls": [["http://h/pkg/a", "1"], ["http://h/pkg/b", "2"]]}]}}]}, ids)
    assert "“A &amp; B”" in html and "canonical <code>http://h/c</code>" in html


def test_a_failing_v_is_no_evidence_and_soft_error_families_owe_nothing():
    from dustbuster.core.urls.families import FAMILY_GIVE_UP, Family
    from dustbuster.core.validation.validate import validate_rule

    async def fetch(url):
        if url.endswith("?x=1"):
            return _page(url, "t", BOILER + url[-8:])
        return Fetched(False, None, 503, "status_503")  # v fails for a passing cause

    from dustbuster.core import ParamRule

    urls = [f"http://h/p{i}?x=1" for i in range(30)]
    v = asyncio.run(validate_rule(ParamRule("x", "remove"), Round.of(urls, RoundFetcher(fetch))))
    assert v.negatives == 0 and v.skipped > 0 and v.valid is None
    f = Family("http://h/wiki", 50)
    f.skipped, f.failures["soft_error"] = FAMILY_GIVE_UP, FAMILY_GIVE_UP
    assert f.gone and not f.short
    f.failures["status_500"] = 1
    assert f.short and not f.gone
