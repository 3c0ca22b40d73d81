"""``dustbuster mine --max-urls-per-site``: a site's first N distinct URLs in log order, the
streaming worker's rule (core/mining/incremental.py); where no site reaches the cap the rules are
the uncapped run's; where one does, the run says it sampled (stderr and ``stats.sample``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dustbuster.cli import main
from dustbuster.core.mining.incremental import SiteSupports
from dustbuster.logs.reader import iter_records, read_urllist
from dustbuster.logs.sitecap import SiteCap, site_of
from dustdev.memorykv import MemoryKV

LOGS = Path(__file__).parent / "data" / "logs"
APACHE = LOGS / "semicomplete-apache" / "apache_logs"  # one site (no host in its lines)
TWIKI = LOGS / "monitorware-twiki" / "access_log"
CRAWL = LOGS / "netarchivesuite-heritrix-crawllogs" / "crawl.2006-02-23.job5.log"  # many hosts


def _mine(capsys, *args: str) -> tuple[dict, str]:
    assert main(["mine", *args, "--json", "-q"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_site_of():
    assert site_of("http://www.example.com/a?b") == "www.example.com"
    assert site_of("https://h:8080/") == "h:8080"
    assert site_of("http://h") == "h"
    assert site_of("dns:h") == ""


@pytest.mark.parametrize("bulk", [True, False])
def test_capped_list_is_the_first_urls_of_each_site_in_log_order(bulk):
    whole, _ = read_urllist([CRAWL], bulk=bulk)
    cap = SiteCap(3)
    capped, _ = read_urllist([CRAWL], bulk=bulk, cap=cap)
    taken: dict[str, int] = {}
    want = []
    for url in whole.infos:  # first-seen order
        site = site_of(url)
        if taken.get(site, 0) < 3:
            taken[site] = taken.get(site, 0) + 1
            want.append(url)
    assert capped.urls() == want
    assert all(capped.infos[u] == whole.infos[u] for u in want)  # a kept URL's every record observed
    assert cap.sampled and sum(cap.urls_left_out.values()) == len(whole) - len(want)
    assert sum(cap.records_left_out.values()) == sum(whole.infos[u].hits for u in whole.infos if u not in capped.infos)


def test_capped_list_is_the_workers_window():
    """The worker's site state with DUST_MAX_URLS_PER_SITE = N holds the same URLs with the same evidence."""
    for cap_n in (50, 400):
        capped, _ = read_urllist([APACHE], site="www.example.com", cap=SiteCap(cap_n))
        sup = SiteSupports(MemoryKV(), "www.example.com", max_urls=cap_n)
        for rec in iter_records([APACHE], site="www.example.com"):
            sup.observe(rec.url, rec.status, rec.size, rec.digest, rec.sketch)
        sup.commit()
        window = sup.urllist()
        assert window.urls() == capped.urls()
        assert [(i.lo, i.hi) for i in window.infos.values()] == [(i.lo, i.hi) for i in capped.infos.values()]


def test_mine_says_it_sampled(capsys):
    doc, err = _mine(capsys, str(APACHE), "--site", "www.example.com", "--max-urls-per-site", "200")
    sample = doc["stats"]["sample"]
    assert sample["sampled"] and sample["max_urls_per_site"] == 200
    site = sample["sites"]["www.example.com"]
    assert site["urls_kept"] == 200 and site["urls_left_out"] > 0 and site["records_left_out"] >= site["urls_left_out"]
    assert doc["stats"]["urls"] == 200
    assert "site www.example.com reached --max-urls-per-site 200" in err and str(site["urls_left_out"]) in err


@pytest.mark.parametrize("log, site", [(APACHE, "www.example.com"), (TWIKI, "www.example.com"), (CRAWL, None)])
def test_uncapped_rules_unchanged(capsys, log, site):
    """The default cap, not reached, and no cap: the same document but for stats.sample."""
    args = [str(log)] + (["--site", site] if site else [])
    default, err = _mine(capsys, *args)
    assert not default["stats"]["sample"]["sampled"] and "max-urls-per-site" not in err
    none, _ = _mine(capsys, *args, "--max-urls-per-site", "0")
    for doc in (default, none):
        doc["stats"] = {k: v for k, v in doc["stats"].items() if not k.endswith("seconds") and k != "sample"}
    assert json.dumps(default, sort_keys=True) == json.dumps(none, sort_keys=True)


def test_negative_cap_is_refused(capsys):
    assert main(["mine", str(APACHE), "--site", "www.example.com", "--max-urls-per-site", "-1", "-q"]) != 0


def test_taken_is_admit_one_by_one():
    urls = [f"http://{h}/{i}" for i in range(30) for h in ("a", "b", "c") if i % 3 or h != "c"] + ["x:y", "dns:z"]
    records = list(range(1, len(urls) + 1))
    for n in (0, 1, 5, 20, 100):
        one, many = SiteCap(n), SiteCap(n)
        for first, last in ((0, 7), (7, 40), (40, len(urls))):  # several blocks
            want = [one.admit(u, r) for u, r in zip(urls[first:last], records[first:last])]
            assert many.taken(urls[first:last], records[first:last]) == want
        assert one.to_dict() == many.to_dict()
