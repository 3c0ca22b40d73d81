"""dustbuster.core.report.truth: content signatures, clusters, URL classes."""

from __future__ import annotations

import random

from dustbuster.core.validation.sketch import sketch
from dustbuster.core.report.truth import Signature, cluster, resemblance, signature, url_class

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def article(seed: int, n: int = 500) -> str:
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(40)) for _ in range(n))


def page(text: str, extra: str = "") -> bytes:
    return f"<html><head><title>t</title><script>x()</script></head><body><p>{text}</p>{extra}</body></html>".encode()


def test_same_visible_text_same_signature_and_the_validators_words():
    a, b = signature(page(article(1))), signature(b"<html><body><div>" + article(1).encode() + b"</div></body></html>")
    assert a == b and a.kind == "text" and len(a.minhashes) == 256
    assert a.words == sketch(page(article(1))).words == 500


def test_resemblance_estimates_jaccard():
    text = article(2, 1000).split()
    changed = text[:950] + [w + "x" for w in text[950:]]  # the last 50 words differ: J ≈ 0.9
    r = resemblance(signature(page(" ".join(text))), signature(page(" ".join(changed))))
    assert 0.75 <= r <= 1.0
    assert resemblance(signature(page(article(3))), signature(page(article(4)))) < 0.2


def test_clusters_near_duplicates_together_and_distinct_pages_apart():
    base = article(5, 800)
    sigs = [
        signature(page(base)),
        signature(page(base, "<footer>generated at 12:00:01</footer>")),  # a changed footer: same page
        signature(page(article(6, 800))),
        signature(b"\x89PNG1", "image/png"),
        signature(b"\x89PNG1", "image/png"),
        signature(b"\x89PNG2", "image/png"),
        signature(page(base)),
    ]
    assert cluster(sigs) == [0, 0, 1, 2, 2, 3, 0]


def test_signature_json_round_trip():
    s = signature(page(article(7)))
    assert Signature.from_json(s.to_json()) == s
    d = signature(b"%PDF", "application/pdf")
    assert d.kind == "digest" and Signature.from_json(d.to_json()) == d


def test_url_class():
    assert url_class("http://h/wiki/Foo/Bar?version=2") == "wiki"
    assert url_class("http://h/search.html?q=x") == "search.html"
    assert url_class("http://h/") == "/" and url_class("http://h") == "/"
    assert url_class("http://h/?C=N;O=D") == "/"
    assert url_class("http://h/story_12?x=1") == "story_N" and url_class("http://h/lect10.ps") == "lectN.ps"
    assert url_class("http://h/story.php3?id=4") == "story.php3"
