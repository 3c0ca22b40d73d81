"""Content sketches (thesis §6.3)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core.validation.sketch import minhash, resemblance, shingles, similar, sketch, visible_text, words

WORDS = ("the quick brown fox jumps over the lazy dog while forty seven wizards quietly "
         "hex the jovial bard in a small town near the river after dusk").split()


def page(text: str, chrome: str = "") -> bytes:
    return (f"<html><head><title>T</title><style>p{{color:red}}</style><script>var x=1;</script></head>"
            f"<body><nav>{chrome}</nav><p>{text}</p></body></html>").encode()


def article(seed: int, n: int = 400) -> str:
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(50)) for _ in range(n))


def test_visible_text_drops_markup_scripts_styles():
    t = visible_text(page("Hello &amp; bye").decode())
    assert "Hello & bye" in t and "color" not in t and "var" not in t


def test_same_text_different_markup_is_similar():
    a = sketch(page(article(1)))
    b = sketch(b"<html><body><div class='x'><p>" + article(1).encode() + b"</p></div></body></html>")
    assert similar(a, b) and resemblance(a, b) == 1.0


def test_different_articles_are_not_similar():
    assert resemblance(sketch(page(article(1))), sketch(page(article(2)))) == 0.0


def test_print_version_with_extra_chrome():
    """§6.3: extra links and anchor text lower the resemblance; "2 of 4" may still accept it."""
    text = article(3, 600)
    chrome = " ".join(f"link{i} section{i}" for i in range(60))
    a, b = sketch(page(text), k=16), sketch(page(text, chrome), k=16)
    r = resemblance(a, b)
    assert 0.5 <= r < 1.0
    assert not similar(a, b, 1.0) and similar(a, b, 0.5)


def test_binary_content_uses_an_exact_digest():
    a = sketch(b"\x89PNG....", "image/png")
    assert a.kind == "digest" and similar(a, sketch(b"\x89PNG....", "image/png"))
    assert not similar(a, sketch(b"\x89PNG...!", "image/png"))
    assert not similar(a, sketch(page("x")))


def test_short_text_is_one_shingle():
    assert len(shingles(words("just three words"))) == 1
    assert sketch(b"", "text/plain").kind == "digest"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 200))
def test_minhash_estimates_jaccard(seed, cut):
    """With many hash functions the estimate approaches the true resemblance."""
    ws = article(seed, 300).split()
    a = shingles(ws)
    b = shingles(ws[:cut] + ["zz"] + ws[cut:])
    true = len(a & b) / len(a | b)
    k = 256
    ma, mb = minhash(a, k), minhash(b, k)
    est = sum(x == y for x, y in zip(ma, mb)) / k
    assert abs(est - true) < 0.15
