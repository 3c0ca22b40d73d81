"""Streaming equals ``dustbuster mine`` on the same files (issue 27, finding 5), on the real broker:
``feed`` reads compressed logs, carries each line's bytes so the worker judges it exactly as
``mine`` does (``bad_encoding``, the one line cap), and candidate sets carry ``mine``'s ``unsafe``
flags.  The fuzz log is tests/fuzzlog.py's."""

from __future__ import annotations

import bz2
import gzip
import json
import re
import subprocess
import sys
from collections import Counter

from dustbuster.core.model.rules import document_rules_json
from tests.conftest import LOGS, ROOT
from tests.fuzzlog import SITE, write_fuzz_log
from tests.ruledocs import by_list
from tests.streamtools import Worker, latest_candidates, mine_json, read_topic, stream_env

TWIKI = LOGS / "monitorware-twiki" / "access_log"


def _feed(env: dict, path, site: str, stdin: bytes | None = None) -> tuple[int, int]:
    """Feeds ``path`` (``-``: ``stdin``); (lines delivered, lines feed rejected itself) from its summary line."""
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "--batch-lines", "200"],
                       cwd=ROOT, env=env, input=stdin, capture_output=True, timeout=120)
    r.stderr = r.stderr.decode()
    assert r.returncode == 0, r.stderr
    m = re.search(r"fed (\d+) lines", r.stderr)
    assert m, r.stderr
    rej = re.search(r"; (\d+) lines", r.stderr)
    return int(m.group(1)), int(rej.group(1)) if rej else 0


def _raw_lines(env: dict) -> list:
    out = []
    for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-raw"):
        out.extend(json.loads(m.value)["lines"])
    return out


def test_feed_sends_the_lines_of_compressed_logs(kafka, tmp_path):
    """A .gz (and .bz2, and gzip on stdin) log is sent as its text lines, not as compressed bytes."""
    env = stream_env(kafka)
    text = TWIKI.read_bytes()
    gz, bz = tmp_path / "access_log.gz", tmp_path / "access_log.bz2"
    gz.write_bytes(gzip.compress(text))
    bz.write_bytes(bz2.compress(text))
    want = text.decode("utf-8").splitlines()
    assert _feed(env, gz, "a.org") == (len(want), 0)
    assert _feed(env, bz, "a.org") == (len(want), 0)
    assert _feed(env, "-", "a.org", stdin=gz.read_bytes()) == (len(want), 0)
    assert _raw_lines(env) == want * 3


def _flags(doc: dict) -> dict[str, str]:
    return {r["display"]: r.get("unsafe") for r in document_rules_json(doc)}  # one list (or mine@1's three)


def _figures(doc: dict, rejects: Counter | None = None) -> dict:
    """The counts to compare: a candidate set's (with the rejects topic's reasons) or mine's."""
    if rejects is None:  # mine --json
        rd = doc["stats"]["read"]
        lines, skipped, rejected = rd["lines"], sum(rd["skipped"].values()) + rd["blank"], rd["rejected"]
        records, dropped = rd["records"], rd["dropped_status"]
    else:
        st = doc["stats"]
        lines, skipped, rejected, records, dropped = (st["lines"], st["skipped"], dict(rejects), st["records"],
                                                      st["dropped_status"])
    doc = doc | by_list(doc)
    return {"lines": lines, "records": records, "dropped_status": dropped, "skipped": skipped,
            "rejected": dict(sorted(rejected.items())), "urls": doc["stats"]["urls"],
            "rules": len(doc["rules"]), "param_rules": len(doc["param_rules"]),
            "general_rules": len(doc["general_rules"]),
            "unsafe": sum(1 for v in _flags(doc).values() if v)}


def test_streaming_equals_mine_on_the_fuzz_log(kafka, tmp_path):
    """The fuzz log, plain and gzipped (two sites), through feed and a worker: the same records,
    URLs, rejects by reason, rules and unsafe flags as ``mine`` on each file."""
    log = write_fuzz_log(tmp_path / "fuzz.log")
    gz = tmp_path / "fuzz.log.gz"
    gz.write_bytes(gzip.compress(log.read_bytes()))
    sites = {SITE: log, "gz." + SITE: gz}
    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        fed = {site: _feed(env, path, site) for site, path in sites.items()}
        got = latest_candidates(env, {site: n for site, (n, _) in fed.items()}, workers=[w], timeout=180)
        reasons: dict[str, Counter] = {site: Counter() for site in sites}
        for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects"):
            d = json.loads(m.value)
            if d.get("site") in reasons:
                reasons[d["site"]][d["reason"]] += 1
    finally:
        w.stop()
    for site, path in sites.items():
        want = mine_json(path, site)
        stream, batch = _figures(got[site], reasons[site]), _figures(want)
        print(site, "streaming", stream, "feed rejected", fed[site][1])
        print(site, "mine     ", batch)
        if site == SITE:
            assert batch["unsafe"] >= 1, "the fuzz log must give mine an unsafe candidate"
    for site, path in sites.items():
        want = mine_json(path, site)
        stream, batch = _figures(got[site], reasons[site]), _figures(want)
        assert fed[site][1] == 0, "feed rejected lines itself"
        assert stream == batch, site
        assert [r["display"] for r in got[site]["rules"]] == [r["display"] for r in want["rules"]]
        assert _flags(got[site]) == _flags(want), site


# --- without a broker: the same judgement line by line -------------------------------------------


def _through_the_wire(path, cap: int = 65536, per_message: int = 200):
    """The fuzz log as feed sends it and a worker parses it, in process: counts, reasons, URLs."""
    from dustbuster.logs.reader import parse_lines, raw_lines
    from dustbuster.stream.records import RawBatch, decode_raw, encode, wire_line

    lines = [wire_line(r.rstrip(b"\r\n"), cap) for r in raw_lines(path)]
    counts, reasons, urls = Counter(), Counter(), set()
    for i in range(0, len(lines), per_message):
        batch = decode_raw(encode(RawBatch(site=SITE, lines=lines[i:i + per_message])), 10000, cap)
        res = parse_lines(batch.lines, SITE, max_line_bytes=cap)
        counts.update(res.counts)
        reasons.update(r[0] for r in res.rejects)
        urls.update(r[0] for r in res.records)
    return counts, reasons, urls


def test_the_wire_form_is_judged_as_mine_judges_the_file(tmp_path):
    from dustbuster.logs.reader import read_urllist

    log = write_fuzz_log(tmp_path / "fuzz.log")
    ul, st = read_urllist([log], site=SITE)
    counts, reasons, urls = _through_the_wire(log)
    assert st.rejected["bad_encoding"] > 400 and st.rejected["oversized_line"] > 0
    assert dict(reasons) == dict(st.rejected)
    assert counts["records"] == st.records and counts["lines"] == st.lines
    assert counts["skipped"] == st.blank + sum(st.skipped.values())
    assert urls == set(ul)


def test_wire_line_keeps_the_verdict():
    from dustbuster.logs.reader import ReadStats, parse_each
    from dustbuster.logs.record import Context
    from dustbuster.stream.records import decode_raw, encode, RawBatch, wire_line

    cap = 20
    cases = [b"GET /a", b"/im\xe1ges/x", b"\xed\xa0\x80", b"a" * 25, b"a" * 25 + b"\xff", b"\xff" + b"a" * 30,
             b" " * 30 + b"x", b" " * 30, b"", b"caf\xc3\xa9", b"x\x00y\rz"]
    for raw in cases:
        item = decode_raw(encode(RawBatch(site="s", lines=[wire_line(raw, cap)])), 10, cap).lines[0]
        verdicts = []
        for it in (raw, item):
            st = ReadStats()
            list(parse_each([it], None, Context("s"), st, lambda *a: None, max_line_chars=cap))
            verdicts.append((st.blank, dict(st.rejected)))
        assert verdicts[0] == verdicts[1], raw
        assert len(str(item)) < 200


def test_open_lines_reads_by_the_first_bytes(tmp_path):
    import pytest

    from dustbuster.core.errors import ConfigError
    from dustbuster.logs.reader import raw_lines

    text = b"a\nb\r\n\xff\n"
    for name, data in (("plain.gz", text), ("gz.log", gzip.compress(text)), ("bz.txt", bz2.compress(text)),
                       ("BZh.log", b"BZhx\n")):
        (tmp_path / name).write_bytes(data)
        assert b"".join(raw_lines(tmp_path / name)) == (b"BZhx\n" if name == "BZh.log" else text)
    (tmp_path / "z.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 10)
    with pytest.raises(ConfigError, match="zstd"):
        raw_lines(tmp_path / "z.zst")
