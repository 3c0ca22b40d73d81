"""One general rule over its literal instances (issue 23 item 6, core/mining/overliterals.py)."""

from __future__ import annotations

import asyncio
import random

from dustbuster.core.validation.round import Round
from dustbuster.core.model.pair import Pair
from dustbuster.core.mining.mine import mine
from dustbuster.core.mining.overliterals import core_of, general_over_literals
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.urls.urllist import URLList
from dustbuster.core.validation.validate import Fetched, validate

WIKI = [Pair("pkg:misc:", "pkg/misc/", 10, 10), Pair(":devel:", "/devel/", 8, 8),
        Pair("net:web:", "net/web/", 5, 5), Pair("a:libs:x", "a/libs/x", 4, 4)]


def test_core_of_strips_the_shared_context():
    assert core_of(WIKI[0]) == Pair(":misc:", "/misc/", 10, 10)
    assert core_of(WIKI[1]) is WIKI[1]  # nothing shared: its own core
    assert core_of(WIKI[3]) == Pair(":libs:", "/libs/", 4, 4)
    assert core_of(Pair("/a/b", "/a/b/index", 3, 3)) == Pair("b", "b/index", 3, 3)  # one token of α stays


def test_one_general_rule_over_literals_in_different_contexts():
    (rule,) = general_over_literals(WIKI)
    assert rule.text == '":{word}:" → "/{word}/"' and rule.members == 4
    assert rule.evidence["instances"] == 4 and '"pkg:misc:" → "pkg/misc/"' in rule.evidence["over_literals"]
    assert general_over_literals(WIKI, known=[rule]) == []  # the pattern miner had it already
    assert general_over_literals(WIKI[:2]) == []


def test_mine_proposes_a_general_rule_for_namespaces():
    ul = URLList()
    for k, ns in enumerate(["misc", "devel", "web", "libs", "utils"]):
        for i in range(6):
            ul.add(f"http://w.org/doku.php?id=pkg:{ns}:{ns}{i}", 200, 1000 + 37 * (6 * k + i))
            ul.add(f"http://w.org/doku.php?id=pkg/{ns}/{ns}{i}", 200, 1000 + 37 * (6 * k + i))
    result = mine(ul)
    over = [r for r in result.general if "instances" in r.evidence]  # core/mining/overliterals.py's
    assert [r.text for r in over] == ['":{word}:" → "/{word}/"']  # the pattern miner's stays anchored
    assert over[0].evidence["instances"] == 5 and result.stats["general_literal_rules"] == 1


def _page(seed: int):
    rnd = random.Random(seed)
    return sketch((" ".join(rnd.choice("abcdefghijklmnop") * 3 for _ in range(300))).encode(), "text/html")


def test_the_validator_decides_the_general_rule_first_and_drops_its_instances():
    urls = [f"http://w.org/doku.php?id=pkg:{ns}:p{i}" for ns in ("misc", "devel", "web", "libs", "utils", "net")
            for i in range(12)]

    async def fetch(url: str) -> Fetched:
        return Fetched(True, _page(hash(url.split("=", 1)[1].replace("/", ":")) % 10_000), 200)

    (rule,) = general_over_literals(WIKI)
    pairs = [Pair(":misc:", "/misc/", 9, 9), Pair(":devel:", "/devel/", 8, 8)]
    res = asyncio.run(validate(Round.of(urls, fetch), pairs, [rule]))
    assert [r.text for r in res.valid] == [rule.text]
    assert sorted(r.text for r in res.covered) == ['":devel:" → "/devel/"', '":misc:" → "/misc/"']


def test_no_core_in_the_host_and_no_bare_segment_collapse():
    assert core_of(Pair("\x02http://www.h.org/", "\x02http://h.org/", 5, 5)) is None
    segs = [Pair(f"\x02http://h.org/{w}/", "\x02http://h.org/", 5, 5) for w in ("a", "bb", "cc", "dd")]
    assert general_over_literals(segs) == []  # "/{word}/" → "/" would drop any path segment
