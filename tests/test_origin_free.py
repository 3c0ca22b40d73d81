"""A path rewrite stated once for the site, not once per origin (core/mining/originfree.py)."""

from __future__ import annotations

import doctest

import dustbuster.core.mining.originfree as originfree
import dustbuster.core.validation.narrow as narrow
from dustbuster.core import DustParams
from dustbuster.core.mining.mine import mine, mine_general
from dustbuster.core.mining.originfree import origin_free, path_part
from dustbuster.core.model.pair import Pair
from dustbuster.core.urls.tokens import END, START
from dustbuster.core.urls.urllist import URLList

P = DustParams()


def test_the_examples_run():
    for module in (originfree, narrow):
        assert doctest.testmod(module).failed == 0


def test_path_part_reads_an_authority_after_a_scheme_or_with_a_port_only():
    assert path_part(START + "http://www.h.example/a/") == "/a/"
    assert path_part("https://h.example:8443/a") == "/a"
    assert path_part("h.example:81/a/b") == "/a/b"
    assert path_part(".example:81/a") == "/a"  # a host's tail, as Figure 1 cuts it
    assert path_part("h.example/a/") is None  # reads as a path as well
    assert path_part("index.php/") is None and path_part("/w/") is None
    assert path_part(START + "http://h/a" + END) == "/a" + END


def test_the_literals_of_several_origins_give_one_path_rule_with_their_supports():
    pairs = [Pair(START + "http://h:1/w/index.php/", START + "http://h:1/wiki/", 4, 5),
             Pair("h:2/w/index.php/", "h:1/wiki/", 3, 3),
             Pair(START + "http://www.h:1/w/index.php/", START + "http://h:1/wiki/", 2, 2)]
    (rule,) = origin_free(pairs, P)
    assert (rule.alpha, rule.beta, rule.support, rule.support_high) == ("/w/index.php/", "/wiki/", 9, 10)
    assert len(rule.evidence["origin_free"]) == 3 and not rule.after_pairs()


def test_no_path_rule_from_host_rules_known_pairs_or_too_little_support():
    host = Pair(START + "http://www.h/", START + "http://h/", 50, 50)  # the paths are equal: a host rule
    root = Pair(START + "http://h:1/", START + "http://h:2/x", 9, 9)  # "/" holds no letter: everything
    known = [Pair(START + "http://h:1/a/", START + "http://h:1/b/", 5, 5), Pair("/a/", "/b/", 5, 5)]
    weak = Pair(START + "http://h:1/c/", START + "http://h:1/d/", P.ms - 1, P.ms - 1)
    assert origin_free([host, root, *known, weak], P) == []


def test_mine_proposes_it_beside_the_literals():
    """Wherever Figure 1 finds only the literals of each origin, `mine` lists their path rule."""
    urls = URLList()
    for port in (81, 82):
        for k in range(8):
            urls.add(f"http://h.example:{port}/w/index.php/Page_{k}", 200, 1000 + 37 * k)
            urls.add(f"http://h.example:{port}/wiki/Page_{k}", 200, 1000 + 37 * k)
    res = mine(urls, P)
    res.kept = [p for p in res.kept if p.alpha.startswith(START)]  # the per-origin literals only
    mine_general(res, urls)
    texts = [r.text for r in res.general]
    assert '"/w/index.php/Page_" → "/wiki/Page_"' in texts, texts


def test_a_single_origin_literal_is_no_family():
    """A log of one host: ``"^http://h/blog/" → "^http://h/"`` stays a rule of that origin's paths."""
    pairs = [Pair(START + "http://h/blog/", START + "http://h/", 7, 7),
             Pair(START + "http://h/blog/tags/", START + "http://h/tags/", 5, 5)]
    assert origin_free(pairs, P) == []
