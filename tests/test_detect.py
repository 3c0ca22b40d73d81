"""Phase 1 (Figure 1): case tables from the papers and properties against the naive oracle."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList, count_supports, detect
from dustbuster.core.urls.tokens import END, START
from tests.oracle import brute_support, oracle_supports

P = DustParams()


def forum(n=12, sizes=True):
    """The forum of Figure 7: story_N ≡ story?id=N on several domains, with different stories
    on politics.* and movies.* (the similarity-likeliness example of §4)."""
    ul = URLList()
    for i in range(n):
        size = 3000 + 97 * i
        ul.add(f"http://www.forum.co.il/story_{i}", 200, size if sizes else None)
        ul.add(f"http://www.forum.co.il/story?id={i}", 200, size if sizes else None)
        ul.add(f"http://politics.forum.co.il/story_{i}", 200, 10000 + 13 * i if sizes else None)
        ul.add(f"http://movies.forum.co.il/story_{i}", 200, 20000 + 11 * i if sizes else None)
    return ul


def pair_support(pairs, a, b):
    for p in pairs:
        if {p.alpha, p.beta} == {a, b}:
            return p.support
    return 0


def test_forum_story_rule_found_and_oriented():
    pairs, stats = detect(forum())
    top = pairs[0]
    # both sides anchored at ^, α > β (story?id= has more tokens than story_)
    assert top.alpha == START + "http://www.forum.co.il/story?id="
    assert top.beta == START + "http://www.forum.co.il/story_"
    assert top.support == 12
    assert stats["urls"] == 48


def test_similarity_disqualifies_politics_movies():
    """§4: politics.domain ↔ movies.domain has large support but unlikely-similar instances."""
    a, b = START + "http://politics", START + "http://movies"
    assert pair_support(detect(forum())[0], a, b) == 0
    assert pair_support(detect(forum(), P.with_(similarity=False))[0], a, b) == 12
    # without size information the pair is likely too: LikelySimilar is false only on evidence
    assert pair_support(detect(forum(sizes=False))[0], a, b) == 12


def test_index_html_rule():
    """§3's example: (http://www.site.com/index.html, http://www.site.com) is an instance of
    "/index.html$" → "$"; with a trailing slash kept it is "index.html$" → "$"."""
    ul = URLList()
    for d in range(5):
        ul.add(f"http://www.site.com/d{d}/index.html", 200, 100 + d)
        ul.add(f"http://www.site.com/d{d}", 200, 100 + d)
        ul.add(f"http://www.site.com/e{d}/index.html", 200, 300 + d)
        ul.add(f"http://www.site.com/e{d}/", 200, 300 + d)
    pairs, _ = detect(ul)
    assert pair_support(pairs, "/index.html" + END, END) == 5
    assert pair_support(pairs, "index.html" + END, END) == 5
    assert pair_support(pairs, "/index.html" + END, "/" + END) == 5


def test_buckets_larger_than_t_are_ignored():
    """Small buckets heuristic: lect1..lect9 share envelopes in a bucket of 9 > T_low=6."""
    ul = URLList()
    for c in range(4):
        for k in range(1, 10):
            ul.add(f"http://u.ac.il/course{c}/lect{k}.ps", 200, 5000)
    t = count_supports(ul, P)
    low, high = t.as_dict("low"), t.as_dict("high")
    assert low.get(("lect1", "lect2"), 0) == 0  # bucket of 9 overflows T_low = 6
    assert high[("lect1", "lect2")] == 4  # but counts with T_high = 11


def test_ms_threshold():
    ul = URLList()
    for d in range(2):
        ul.add(f"http://s/d{d}/index.html", 200, 1)
        ul.add(f"http://s/d{d}/", 200, 1)
    assert pair_support(detect(ul)[0], "index.html" + END, END) == 0
    assert pair_support(detect(ul, P.with_(ms=2))[0], "index.html" + END, END) == 2


def test_semiperiodic_overestimate_theorem_4_1():
    """Theorem 4.1's caveat: for semiperiodic α = 'a.a', β = 'a' the envelope count overestimates
    the support: (http://a.a.a/, http://a.a/) is one instance but has two envelopes."""
    ul = URLList()
    ul.add("http://a.a.a/", 200, 1)
    ul.add("http://a.a/", 200, 1)
    d = count_supports(ul, P.with_(ms=1)).as_dict("high")
    assert d[("a", "a.a")] == 2  # two envelopes, one instance
    assert d[("", "a.")] == 2  # the empty-string example of the same paragraph


def test_empty_list_and_single_url():
    assert detect(URLList())[0] == []
    ul = URLList()
    ul.add("http://x/", 200, 1)
    assert detect(ul)[0] == []


def test_digests_replace_sizes():
    ul = URLList()
    for i in range(4):
        ul.add(f"http://s/p{i}/", 200, 10, digest=f"D{i}")
        ul.add(f"http://s/p{i}/index.htm", 200, 999, digest=f"D{i}")  # sizes disagree, digests equal
    assert pair_support(detect(ul)[0], "index.htm" + END, END) == 4


def test_sketches_threshold():
    ul = URLList()
    for i in range(4):
        ul.add(f"http://s/p{i}/", 200, 10, sketch=(i, 1, 2, 3))
        ul.add(f"http://s/p{i}/index.htm", 200, 10, sketch=(i, 1, 2, 9))  # 3 of 4 equal
    assert pair_support(detect(ul)[0], "index.htm" + END, END) == 0
    assert pair_support(detect(ul, P.with_(sketch_threshold=0.5))[0], "index.htm" + END, END) == 4


# ---------------------------------------------------------------- properties vs the oracle

SEGMENTS = ["a", "b", "ab", "1", "12", "x.y", "index.html", "story", "id"]
SEPS = ["/", "?", "=", "&", "_", ".", "-"]


@st.composite
def small_urllist(draw):
    n = draw(st.integers(min_value=0, max_value=14))
    ul = URLList()
    for _ in range(n):
        parts = draw(st.lists(st.tuples(st.sampled_from(SEPS), st.sampled_from(SEGMENTS)), min_size=0, max_size=4))
        host = draw(st.sampled_from(["h", "www.h", "h.co"]))
        url = "http://" + host + "".join(s + t for s, t in parts)
        size = draw(st.one_of(st.none(), st.integers(0, 4)))
        hi = None if size is None else size + draw(st.integers(0, 2))
        ul.add(url, 200, size)
        if hi is not None:
            ul.add(url, 200, hi)
    return ul


PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(small_urllist(), st.integers(2, 6), st.integers(2, 6), st.booleans())
def test_supports_equal_oracle(ul, S, t_low, sim):
    params = DustParams(S=S, t_low=t_low, t_high=t_low + 3, similarity=sim)
    table = count_supports(ul, params)
    assert table.as_dict("low") == oracle_supports(ul, params, params.t_low)
    assert table.as_dict("high") == oracle_supports(ul, params, params.t_high)


@PROPS
@given(small_urllist(), st.data())
def test_supports_equal_brute_force(ul, data):
    params = DustParams(S=4, t_low=3, t_high=5)
    table = count_supports(ul, params).as_dict("high")
    if not table:
        return
    (a, b), c = data.draw(st.sampled_from(sorted(table.items())))
    assert c == brute_support(ul, params, params.t_high, a, b)
    # and a pair the engine does not report really has no support
    texts = sorted({x for k in table for x in k})
    x, y = data.draw(st.sampled_from(texts)), data.draw(st.sampled_from(texts))
    if x != y and (min(x, y), max(x, y)) not in table:
        assert brute_support(ul, params, params.t_high, x, y) == 0


def test_real_sample_equals_oracle(logs_dir):
    """A slice of a real log, full default parameters, engine == oracle."""
    from dustbuster.logs.reader import read_urllist

    ul, _ = read_urllist([logs_dir / "monitorware-twiki" / "access_log"], site="monitorware.example")
    table = count_supports(ul, P)
    assert table.as_dict("low") == oracle_supports(ul, P, P.t_low)
    assert table.as_dict("high") == oracle_supports(ul, P, P.t_high)


@pytest.mark.parametrize("n, hi", [(1000, 2**20), (5000, 2**62), (1, 5), (3000, 2**45)])
def test_sort_keys_packed_and_partitioned(n, hi):
    import numpy as np

    from dustbuster.core.urls.substrings import sort_keys as _sort_keys

    rng = np.random.default_rng(n)
    key = rng.integers(0, hi, size=n, dtype=np.int64)
    key[: n // 3] = key[n // 3: 2 * (n // 3)]  # duplicates
    order, ks = _sort_keys(key)
    assert np.array_equal(ks, np.sort(key))
    assert np.array_equal(key[order], ks)
    assert np.array_equal(np.sort(order), np.arange(n))


def test_figure_7_forum_rules_from_a_generated_log():
    """The forum of Figure 7 (dustbuster.sim.forum): its valid rules come out of phases 1-2."""
    from dustbuster.sim.forum import generate
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.model.rules import SubstringRule
    from dustbuster.logs.formats import PARSERS
    from dustbuster.logs.record import Context

    ul = URLList()
    for line in generate(8000, seed=3):
        rec = PARSERS["vhost"](line, Context())
        if rec.status < 400:
            ul.add(rec.url, rec.status, rec.size)
    texts = {SubstringRule(p.alpha, p.beta).text for p in mine(ul).kept}
    for expected in [
        '".forum.co.il/story?id=" → ".forum.co.il/story_"',
        '".forum.co.il/story.php3?id=" → ".forum.co.il/story?id="',
        '".forum.co.il/thread?rep=" → ".forum.co.il/thread_"',
        '"&LastView=&Close=$" → "$"',
        '"&NewOnly=1&tvqz=2$" → "&NewOnly=1$"',
    ]:
        assert expected in texts, (expected, sorted(texts))
