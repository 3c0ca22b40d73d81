"""The hand-written per-app canonicalizers of the quality harness (bench/quality/handcanon.py): the
URL forms each application's documentation says are one page meet, and the forms that are
different pages stay apart."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "quality"))

import handcanon  # noqa: E402

W = "http://wiki.quality.test:8080"
P = "http://wordpress.quality.test:8080"


@pytest.mark.parametrize("a,b", [
    (f"{W}/w/index.php?title=Main_Page", f"{W}/wiki/Main_Page"),
    (f"{W}/w/index.php/Main_Page", f"{W}/wiki/Main_Page"),
    (f"{W}/wiki/", f"{W}/wiki/Main_Page"),
    (f"{W}/w/", f"{W}/wiki/Main_Page"),
    (f"http://www.wiki.quality.test:8080/wiki/main_Page", f"{W}/wiki/Main_Page"),
    (f"{W}/w/index.php?title=main+Page", f"{W}/wiki/Main_Page"),
    (f"{W}/w/index.php?title=Libc6&action=history", f"{W}/wiki/Libc6?action=history"),
    (f"{W}/w/index.php?action=history&title=Libc6", f"{W}/w/index.php?title=Libc6&action=history"),
    (f"{W}/w/index.php?title=Talk:libc6&action=view", f"{W}/wiki/Talk:Libc6"),
    (f"{W}/w/index.php?title=Special:UserLogin&returnto=Libc6", f"{W}/wiki/Special:UserLogin"),
    (f"{W}/wiki/Libc6?utm_source=feed", f"{W}/wiki/Libc6"),
])
def test_mediawiki_same_page(a, b):
    assert handcanon.mediawiki(a) == handcanon.mediawiki(b)


@pytest.mark.parametrize("a,b", [
    (f"{W}/w/index.php?title=Libc6&oldid=5", f"{W}/w/index.php?title=Libc6&oldid=6"),
    (f"{W}/w/index.php?title=Libc6&diff=prev&oldid=5", f"{W}/w/index.php?title=Libc6&diff=cur&oldid=5"),
    (f"{W}/w/index.php?title=Libc6&action=raw", f"{W}/wiki/Libc6"),
    (f"{W}/w/index.php?title=Libc6&action=history", f"{W}/w/index.php?title=Libc6&action=info"),
    (f"{W}/w/index.php?title=Special:Search&returnto=X", f"{W}/wiki/Special:Search"),
    (f"{W}/wiki/Libc6?title=Other", f"{W}/wiki/Other"),  # the path's title wins
    (f"{W}/w/load.php?modules=a", f"{W}/w/load.php?modules=b"),
    (f"{W}/w/resources/a.png", f"{W}/wiki/Main_Page"),
])
def test_mediawiki_different_pages(a, b):
    assert handcanon.mediawiki(a) != handcanon.mediawiki(b)


def test_wordpress():
    wp = handcanon.wordpress
    assert wp(f"{P}/2024/10/x/?replytocom=5") == wp(f"{P}/2024/10/x/") == wp(f"http://www.wordpress.quality.test:8080/2024/10/x/")
    assert wp(f"{P}/search/python/") == wp(f"{P}/?s=python") == wp(f"{P}/?s=python&utm_source=feed")
    assert wp(f"{P}/wp-includes/css/a.css?ver=6.1") == wp(f"{P}/wp-includes/css/a.css")
    assert wp(f"{P}/2024/10/x/comment-page-2/?replytocom=5") != wp(f"{P}/2024/10/x/comment-page-2/")
    assert wp(f"{P}/2024/10/x/comment-page-1/?replytocom=5") != wp(f"{P}/2024/10/x/comment-page-1/")
    assert wp(f"{P}/?p=5") != wp(f"{P}/?p=6") and wp(f"{P}/page/2/") != wp(f"{P}/page/3/")
    assert wp(f"{P}/feed/") != wp(f"{P}/feed/atom/")


def test_trac_and_docs():
    t, d = handcanon.trac, handcanon.docs
    T, D = "http://trac.quality.test:1", "http://docs.quality.test:1"
    assert t(f"{T}/") == t(f"{T}/wiki") == t(f"{T}/wiki/WikiStart?action=view")
    assert t(f"{T}/query?status=new&ref=x") != t(f"{T}/query?status=new")  # the query module reads every field
    assert t(f"{T}/wiki/X?version=1") != t(f"{T}/wiki/X")
    assert d(f"{D}/packages/x") == d(f"{D}/packages/x.html?utm_source=feed")
    assert d(f"{D}/packages/index.html") == d(f"{D}/packages/") == d(f"{D}/packages/?C=N;O=A".replace(";", "&"))
    assert d(f"{D}/packages/?C=M&O=D") != d(f"{D}/packages/")


def test_every_harness_app_has_one():
    sys.path.insert(0, str(ROOT / "bench" / "quality"))
    from run import KINDS

    assert set(handcanon.CANONICALIZERS) == set(KINDS)


def test_deployment_ports_and_declared_rules(monkeypatch):
    m = handcanon.mediawiki
    monkeypatch.setenv("QUALITY_PORT_ALIASES", "9090=8080")  # bench/quality/run.py port_aliases
    assert m("http://www.wiki.quality.test:9090/wiki/Libc6?uselang=en&useskin=monobook") == m(f"{W}/wiki/Libc6")
    assert m(f"{W}/wiki/Libc6?uselang=de") != m(f"{W}/wiki/Libc6")
    assert handcanon.wordpress(f"{P}/2024/01/x/?highlight=package") == handcanon.wordpress(f"{P}/2024/01/x/")
    monkeypatch.delenv("QUALITY_PORT_ALIASES")
    assert m("http://wiki.quality.test:9090/wiki/Libc6") != m(f"{W}/wiki/Libc6")
    assert set(handcanon.RULES) == set(handcanon.CANONICALIZERS)
    assert all(set(handcanon.HOST_RULES) <= set(r) for r in handcanon.RULES.values())
