"""The links of a validation round's fetched pages (issue 28 item 5): gathered by RoundFetcher,
exposed by validate_site, sent by the validator agent to the raw topic as ``format="urls"`` batches.

The sending is tested with a fake topic object (a list of what was sent), not on the real broker:
the validator-agent tests on the broker (tests/test_validator_e2e.py) run a worker end to end for
minutes; what the agent adds is the call of :func:`dustbuster.agents.listedlinks.send_links` with
``ctx.topics.raw``, tested here through :func:`dustbuster.agents.validator.validation_round`."""

from __future__ import annotations

import asyncio
import json

from dustbuster.agents import listedlinks
from dustbuster.agents.listedlinks import SOURCE, LinkSender, chunks, new_links, raw_batches, send_links
from dustbuster.agents.metrics import Metrics
from dustbuster.agents.validator import RoundParts, validation_round
from dustbuster.core.validation.fetched import MAX_ROUND_LINKS, Fetched, RoundFetcher
from dustbuster.core.validation.identity import PageIdentity
from dustbuster.stream.fit import budget
from dustbuster.stream.records import decode_raw, encode
from dustbuster.stream.settings import Settings


def page(url: str, links: list[str], ok: bool = True) -> Fetched:
    return Fetched(ok, None, 200 if ok else 404, "" if ok else "status_404",
                   identity=PageIdentity(url, 200, url, links=tuple(links)))


def test_round_fetcher_gathers_links_first_seen_once_and_bounded():
    pages = {"http://h/1": page("http://h/1", ["http://h/a", "http://h/b"]),
             "http://h/2": page("http://h/2", ["http://h/b", "http://h/c"]),
             "http://h/404": page("http://h/404", ["http://h/from-404"], ok=False),
             "http://h/none": Fetched(True, None, 200)}
    calls = []

    async def fetch(url):
        calls.append(url)
        return pages[url]

    async def go():
        rf = RoundFetcher(fetch)
        got = [await rf(u) for u in ["http://h/1", "http://h/2", "http://h/1", "http://h/404", "http://h/none"]]
        return rf, got

    rf, got = asyncio.run(go())
    assert rf.links == ("http://h/a", "http://h/b", "http://h/c")  # only pages fetched fine
    assert calls.count("http://h/1") == 1 and rf.fetches == 4
    assert all(g.identity is None or g.identity.links == () for g in got)  # the cache holds no links
    assert got[0].identity == pages["http://h/1"].identity  # links are not compared: the same identity

    big = RoundFetcher(fetch)
    big.take_links(page("x", [f"http://h/{i}" for i in range(MAX_ROUND_LINKS + 7)]))
    big.take_links(page("y", ["http://h/0", "http://h/new"]))
    assert len(big.links) == MAX_ROUND_LINKS and big.links_over_cap == 8
    assert big.links[:2] == ("http://h/0", "http://h/1")


def test_new_links_leave_out_the_test_urls_and_unsendable_ones():
    links = ["http://h/a", "http://h/b", "http://h/c?x=1", "http://h/" + "z" * 9000, "http://h/\x7f"]
    tests = ["http://h/b", "HTTP://H:80/c?x=1"]
    assert new_links(links, tests) == ["http://h/a"]


def test_chunks_and_batches_keep_both_limits():
    urls = [f"http://h/{i:05d}" for i in range(25)]
    assert [len(c) for c in chunks(urls, 10, 10**6)] == [10, 10, 5]
    assert [len(c) for c in chunks(urls, 100, 3 * (len('"http://h/00000"') + 1))] == [3] * 8 + [1]
    assert chunks([], 10, 100) == []
    long = [f"http://h/{i}/" + "x" * 8000 for i in range(300)]
    batches = raw_batches("h", long, 10000, 100_000)
    assert sum(len(b.lines) for b in batches) == 300 and len(batches) > 1
    for b in batches:
        assert len(encode(b)) <= budget(100_000)
        assert b.format == "urls" and b.source == SOURCE and b.site == "h"


class FakeTopic:
    def __init__(self, fail_at: set[int] = frozenset()) -> None:
        self.sent: list[tuple[bytes, bytes]] = []
        self.fail_at, self.n = fail_at, 0  #: the sends that fail, counted from 1

    async def send(self, key, value):
        self.n += 1
        if self.n in self.fail_at:
            raise RuntimeError("broker away")
        self.sent.append((key, value))
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(None)
        return fut


def test_send_links_sends_raw_batches_counts_and_survives_a_failed_send():
    settings = Settings(max_lines_per_message=2)
    metrics = Metrics()
    topic = FakeTopic()
    links = [f"http://h/{i}" for i in range(5)]
    n = asyncio.run(send_links(topic, "h", links, ["http://h/0"], settings, metrics))
    assert n == 4
    decoded = [decode_raw(v, 10000, 65536) for _, v in topic.sent]
    assert [k for k, _ in topic.sent] == [b"h"] * 2
    assert [d.lines for d in decoded] == [["http://h/1", "http://h/2"], ["http://h/3", "http://h/4"]]
    assert {(d.format, d.source, d.site) for d in decoded} == {("urls", SOURCE, "h")}
    assert b'dust_listed_urls_sent_total{source="validator-links"} 4.0' in metrics.exposition()

    failing = FakeTopic(fail_at={2})
    assert asyncio.run(send_links(failing, "h", links, [], settings, metrics)) == 3  # the second batch lost
    assert b'dust_send_failures_total{reason="RuntimeError",topic="raw"} 1.0' in metrics.exposition()


def test_link_sender_sends_a_link_once_per_site(monkeypatch):
    """A round whose links were all sent before sends nothing (no raw message: no new window, no
    new round); a link whose batch the broker refused is sent at the next round."""
    settings = Settings(max_lines_per_message=2)
    topic = FakeTopic(fail_at={3})  # the third send fails
    sender = LinkSender(topic, settings, Metrics())
    links = [f"http://h/{i}" for i in range(6)]
    assert asyncio.run(sender("h", links, [])) == 4  # batches 1, 2 sent; 3 (h/4, h/5) refused
    assert asyncio.run(sender("h", links, [])) == 2  # only the refused ones again
    assert asyncio.run(sender("h", links + ["http://h/new"], [])) == 1
    assert asyncio.run(sender("other", links[:1], [])) == 1  # per site
    sent = [u for _, v in topic.sent for u in decode_raw(v, 10, 65536).lines]
    assert sorted(sent) == sorted(links + ["http://h/new", "http://h/0"])
    monkeypatch.setattr(listedlinks, "REMEMBERED", 8)
    assert asyncio.run(sender("h", [f"http://h/x{i}" for i in range(3)], [])) == 3  # 7 + 3 > 8: starts over
    assert len(sender.sent["h"]) == 3


def test_settings_switch():
    assert Settings.from_env({}).validator_links is True
    assert Settings.from_env({"DUST_VALIDATOR_LINKS": "false"}).validator_links is False


def test_a_validation_round_sends_the_links_of_its_pages(tmp_path):
    """A real round on the simulator (HTTP on loopback), as the agent runs it, with the raw topic a
    fake: after the round, format "urls" batches hold links of the pages it fetched that the test
    list did not have."""
    from dustbuster.sim.site import SimSite, start
    from dustbuster.state.verdicts import VerdictStore
    from tests.test_validator_rounds import HOSTS, candidates, sim_sites

    async def go():
        sim = SimSite()
        runner, port = await start(sim)
        conf = sim_sites(tmp_path / "sites.json", port)
        cand = candidates(sim, port)
        store = VerdictStore(tmp_path / "verdicts")
        topic = FakeTopic()
        settings = Settings(validator_sites=conf, verdict_ttl_s=3600)
        metrics = Metrics()

        async def publish(site, value):
            pass

        links = LinkSender(topic, settings, metrics)
        try:
            await validation_round("forum.test", cand, RoundParts(settings, store, publish, metrics, links=links))
            again = len(topic.sent)
            await validation_round("forum.test", cand, RoundParts(settings, store, publish, metrics, links=links))
            assert len(topic.sent) == again  # the same links: nothing sent the second time
        finally:
            await runner.cleanup()
            store.close()
        return cand, topic, port

    cand, topic, port = asyncio.run(go())
    batches = [json.loads(v) for _, v in topic.sent]
    assert batches and all(b["format"] == "urls" and b["source"] == SOURCE and b["site"] == "forum.test"
                           for b in batches)
    sent = [u for b in batches for u in b["lines"]]
    assert len(sent) == len(set(sent)) and not set(sent) & set(cand.test_urls)
    origins = {f"http://{h}:{port}" for h in HOSTS}
    assert all(u.split("/", 3)[0] + "//" + u.split("/", 3)[2] in origins for u in sent)
