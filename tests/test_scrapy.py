"""dustbuster.scrapy: real Scrapy crawls of the simulator on loopback (tests/scrapy_crawl.py, one
process each), judged against the simulator's truth (sim/site.py renders every URL's page).

The rules are the simulator's validated set (``dustbuster validate`` against the live simulator).
Without dustbuster, Scrapy downloads every alias of every page; with the duplicate filter (rules
from the file) or the downloader middleware (rules from a worker's HTTP API, with its token), it
downloads each page about once, drops the rest (counted in Scrapy's stats), and loses no distinct
page.  The rules topic followed live is tested on the real broker (updates, refusals, tombstones).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from urllib.parse import parse_qsl, urlsplit

import pytest

pytest.importorskip("scrapy", reason="Scrapy is not installed (pip install -e '.[test]' or '.[scrapy]')")

from dustbuster.agents.api import make_api  # noqa: E402
from dustbuster.core import ParamRule, SubstringRule  # noqa: E402
from dustbuster.core.errors import ConfigError, RuleError  # noqa: E402
from dustbuster.core.canon.rulebook import RuleBook  # noqa: E402
from dustbuster.rulesource import LiveRules  # noqa: E402
from dustbuster.sim.site import SimSite  # noqa: E402
from dustbuster.agents.metrics import Metrics  # noqa: E402
from tests.apiserver import ApiThread  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.simsite import start_sim_site, write_sites  # noqa: E402

SEEDS = 1000  #: distinct URLs of the simulator's log crawled
TOKEN = "crawler-token"


def dust(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dustbuster", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """The simulator on loopback, its log's first SEEDS distinct URLs, and its validated rule set."""
    tmp = tmp_path_factory.mktemp("scrapy")
    proc, port = start_sim_site()
    try:
        log = tmp / "sim.log"
        assert dust("sim-site", "--port", str(port), "--write-log", str(log), "--lines", "5000", "-q").returncode == 0
        sites = tmp / "sites.json"
        write_sites(sites, port)
        rules = tmp / "rules.json"
        r = dust("validate", str(log), "--site", "forum.test", "--sites", str(sites), "-o", str(rules), "-q")
        assert r.returncode == 0, r.stderr
        urls: dict[str, None] = {}
        for line in log.read_text().splitlines():
            f = line.split()
            urls.setdefault(f"http://{f[0]}{f[7]}")
        seeds = tmp / "seeds.txt"
        seeds.write_text("\n".join(list(urls)[:SEEDS]) + "\n")
        yield {"port": port, "seeds": seeds, "rules": rules, "tmp": tmp}
    finally:
        proc.terminate()
        proc.wait(10)


def crawl(sim, name: str, *args: str) -> dict:
    out = sim["tmp"] / f"{name}.json"
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "scrapy_crawl.py"), str(sim["seeds"]), str(out), *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    doc["log"] = r.stderr
    return doc


TRUTH = SimSite(comment_every=0)  # the served site's pages, without the comments traffic adds


def page(url: str, hops: int = 0) -> tuple[int, str]:
    """The simulator's truth: which page ``url`` shows (its status and content, redirects followed)."""
    p = urlsplit(url)
    status, html, location = TRUTH.render(p.hostname, p.path, dict(parse_qsl(p.query, keep_blank_values=True)))
    if location is not None and hops < 5:
        return page(f"{p.scheme}://{p.netloc}{location}", hops + 1)
    return status, hashlib.sha1(html.encode()).hexdigest()


def downloads(doc: dict) -> int:
    return int(doc["stats"].get("downloader/response_count", 0))


def test_scrapy_downloads_each_page_once_and_loses_none(sim):
    seeds = sim["seeds"].read_text().split()
    pages = {page(u) for u in seeds}
    plain = crawl(sim, "plain")
    with_file = crawl(sim, "dupefilter", "--dupefilter", "--rules", str(sim["rules"]))
    book = RuleBook()
    book.update("forum.test", json.loads(sim["rules"].read_text()))
    api = ApiThread(make_api(book, Metrics(), token=TOKEN)).start()
    try:
        with_api = crawl(sim, "middleware", "--middleware", "--rules", f"http://127.0.0.1:{api.port}", "--token", TOKEN)
    finally:
        api.stop()
    assert len(seeds) == SEEDS and len(pages) < 0.7 * SEEDS  # the log is full of aliases

    # without dustbuster: every alias downloaded; every page there
    assert {page(r["response_url"]) for r in plain["responses"]} == pages
    assert downloads(plain) >= 0.95 * SEEDS
    assert not any(k.startswith("dustbuster/") for k in plain["stats"])

    for doc in (with_file, with_api):
        s = doc["stats"]
        # no distinct page lost: every page of the seeds was downloaded
        assert {page(r["response_url"]) for r in doc["responses"]} == pages
        # each page about once: at most 10 % more pages than the truth's distinct ones
        assert len(pages) <= len(doc["responses"]) <= 1.1 * len(pages), (len(doc["responses"]), len(pages))
        # no two downloads of the same canonical URL
        canon = [book.canonize(r["url"]).canonical for r in doc["responses"]]
        assert len(canon) == len(set(canon))
        # what was saved is counted in Scrapy's stats: the downloads avoided
        assert s["dustbuster/rule_sets"] == 1 and s["dustbuster/rule_sets_refused"] == 0
        assert s["dustbuster/requests"] >= SEEDS and s["dustbuster/rewritten"] > 0
        saved = s["dustbuster/downloads_saved"]
        assert saved == s["dustbuster/duplicates_dropped"]
        assert saved >= 0.9 * (SEEDS - len(pages)), (saved, SEEDS, len(pages))  # most of what can be saved
        assert downloads(doc) + saved >= 0.95 * downloads(plain)  # the downloads plain Scrapy made, accounted for
        assert downloads(plain) - downloads(doc) >= 0.9 * (SEEDS - len(pages))  # duplicates avoided
        assert "dustbuster: " in doc["log"] and "downloads saved" in doc["log"]
    # the duplicate filter is Scrapy's own filter on canonical URLs: it is the one that filtered
    assert with_file["stats"]["dupefilter/filtered"] >= with_file["stats"]["dustbuster/duplicates_dropped"]


def test_scrapy_key_only_and_rewrite_modes(sim):
    """DustRequestFingerprinter (key-only: the linked URL fetched, the canonical URL's fingerprint, so
    Scrapy's own duplicate filter drops the aliases) and DustLinks (rewrite: the canonical URL
    requested): each page downloaded about once, none lost."""
    seeds = sim["seeds"].read_text().split()
    pages = {page(u) for u in seeds}
    book = RuleBook()
    book.update("forum.test", json.loads(sim["rules"].read_text()))
    keyed = crawl(sim, "fingerprinter", "--fingerprinter", "--rules", str(sim["rules"]))
    rewritten = crawl(sim, "rewrite", "--rewrite", "--rules", str(sim["rules"]))
    for doc in (keyed, rewritten):
        assert {page(r["response_url"]) for r in doc["responses"]} == pages  # no distinct page lost
        assert len(pages) <= len(doc["responses"]) <= 1.1 * len(pages), (len(doc["responses"]), len(pages))
        canon = [book.canonize(r["url"]).canonical for r in doc["responses"]]
        assert len(canon) == len(set(canon))
        assert doc["stats"]["dupefilter/filtered"] >= 0.9 * (SEEDS - len(pages))  # Scrapy's own filter dropped them
    s = keyed["stats"]
    assert s["dustbuster/fingerprints"] >= SEEDS and s["dustbuster/rewritten"] > 0
    assert {r["url"] for r in keyed["responses"]} <= set(seeds)  # key-only: only linked URLs requested
    assert any(book.canonize(r["url"]).canonical != r["url"] for r in keyed["responses"])
    # rewrite: every URL requested is canonical already
    assert all(book.canonize(r["url"]).canonical == r["url"] for r in rewritten["responses"])
    assert not any(k.startswith("dustbuster/") for k in rewritten["stats"])


def test_fingerprinter_caches_per_request_and_continues_redirects(tmp_path):
    from scrapy import Request
    from scrapy.utils.request import fingerprint

    from dustbuster.scrapy import DustLinks, DustRequestFingerprinter

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"site": "forum.test", "version": 1, "rules": [
        ParamRule("sid", "remove", status="valid").to_json(),
        SubstringRule.from_parts("/old/", "/", status="valid").to_json()]}))
    fp = DustRequestFingerprinter(LiveRules(str(rules)))
    a, b = Request("http://forum.test/story_5?sid=1"), Request("http://forum.test/old/story_5")
    assert fp.fingerprint(a) == fp.fingerprint(b) == fingerprint(Request("http://forum.test/story_5"))
    assert fp.fingerprint(Request("http://forum.test/story_6")) != fp.fingerprint(a)
    assert a in fp._cache and fp._cache[a] is fp.fingerprint(a)  # once per request object
    # /old/story_5 → 301 → /story_5: the same fetch going on gets a key of its own
    hop = Request("http://forum.test/story_5", meta={"redirect_urls": ["http://forum.test/old/story_5"]})
    assert fp.fingerprint(hop) != fp.fingerprint(b)
    fp.engine_stopped()
    links = DustLinks(str(rules), base="http://forum.test/")
    assert links.process_value("http://forum.test/old/story_5?sid=2") == "http://forum.test/story_5"
    assert links.process_value("/old/story_7") == "http://forum.test/story_7"
    assert links.process_value("story_7?sid=1") == "story_7?sid=1"  # path-relative: its page is unknown here
    assert links.process_value("mailto:x@forum.test") == "mailto:x@forum.test"
    assert links.rewritten == 2


def test_rules_from_a_file_are_admitted(tmp_path):
    R = SubstringRule.from_parts
    good = {"site": "forum.test", "version": 2, "rules": [ParamRule("sid", "remove", status="valid").to_json(),
                                                         R("/story?id=", "/story_", status="valid").to_json()]}
    other = {"site": "other.test", "version": 1, "rules": [R("/x", "/y", status="likely").to_json()]}  # not validated
    lines = tmp_path / "rules.jsonl"  # what `dustbuster rules --json` prints
    lines.write_text("\n".join(json.dumps(d) for d in (good, other, {"site": "gone.test", "deleted": True})) + "\n")
    lr = LiveRules(str(lines)).start()
    assert lr.versions() == {"forum.test": 2} and lr.refused == {"unvalidated_rule": 1}
    assert lr.canonize("http://forum.test/story?id=5&sid=1").canonical == "http://forum.test/story_5"
    assert lr.canonize("http://other.test/x").canonical == "http://other.test/x"
    one = tmp_path / "one.json"
    one.write_text(json.dumps(good, indent=1))
    assert LiveRules("file://" + str(one)).start().versions() == {"forum.test": 2}
    for text, words in (("", "holds no rule set"), ("{\n", "not a JSON rule set"), ("{}", "has no 'site'"), ("[1]", "must be a JSON object")):
        one.write_text(text)
        with pytest.raises(ConfigError, match=words):
            LiveRules(str(one)).start()
    with pytest.raises(ConfigError, match="cannot read the rules file"):
        LiveRules(str(tmp_path / "none.json")).start()
    with pytest.raises(ConfigError, match="no rules source"):
        LiveRules("")
    with pytest.raises(RuleError):
        lr.update("forum.test", good | {"version": 1})  # stale: refused, v2 kept
    assert lr.versions() == {"forum.test": 2} and lr.refused["stale_version"] == 1


def test_rules_api_wrong_token_is_a_clear_error(sim):
    book = RuleBook()
    book.update("forum.test", json.loads(sim["rules"].read_text()))
    api = ApiThread(make_api(book, Metrics(), token=TOKEN)).start()
    try:
        with pytest.raises(ConfigError, match="refused the token"):
            LiveRules(f"http://127.0.0.1:{api.port}", token="wrong").start()
        lr = LiveRules(f"http://127.0.0.1:{api.port}", token=TOKEN, refresh_s=0.2).start()
        try:
            assert lr.versions() == {"forum.test": book.sites["forum.test"].version}
            api.call(book.update, "forum.test", None)  # the worker drops the site: so does the crawler
            deadline = time.monotonic() + 60
            while lr.versions() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert lr.versions() == {}
        finally:
            lr.stop()
    finally:
        api.stop()


def test_rules_topic_followed_live(kafka, sim):
    import asyncio
    import uuid

    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"t{uuid.uuid4().hex[:8]}-rules"
    doc = json.loads(sim["rules"].read_text())

    async def send(*records: tuple[str, dict | None]) -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
        await admin.start()
        try:
            if topic not in await admin.list_topics():
                await admin.create_topics([NewTopic(topic, 2, 1, topic_configs={"cleanup.policy": "compact"})])
        finally:
            await admin.close()
        p = AIOKafkaProducer(bootstrap_servers=kafka, acks="all")
        await p.start()
        try:
            for site, value in records:
                await p.send_and_wait(topic, key=site.encode(), value=None if value is None else json.dumps(value).encode())
        finally:
            await p.stop()

    def until(cond, what: str) -> None:
        deadline = time.monotonic() + 120
        while not cond():
            assert time.monotonic() < deadline, what
            time.sleep(0.1)

    asyncio.run(send(("forum.test", doc | {"version": 1})))
    lr = LiveRules(f"kafka://{kafka}/{topic}", wait_s=60).start()
    try:
        assert lr.versions() == {"forum.test": 1}  # read to the end before the crawl starts
        u = f"http://www.forum.test:{sim['port']}/story?id=5&sid=ab"
        assert lr.canonize(u).canonical.endswith(f".test:{sim['port']}/story_5")
        # a new version is applied live; a harmful one is refused and the site keeps its set
        bad = doc | {"version": 3, "rules": [SubstringRule.from_parts("/", "", status="valid").to_json()]}
        asyncio.run(send(("forum.test", doc | {"version": 2}), ("forum.test", bad)))
        until(lambda: lr.versions() == {"forum.test": 2} and sum(lr.refused.values()) == 1, "v2 applied, v3 refused")
        assert lr.canonize(u).canonical.endswith("/story_5")
        asyncio.run(send(("forum.test", None)))
        until(lambda: lr.versions() == {}, "the tombstone applied")
        assert lr.canonize(u).canonical == u  # no rules any more: only the normalization
    finally:
        lr.stop()
