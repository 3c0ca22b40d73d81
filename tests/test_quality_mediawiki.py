"""The small version of `make quality` on MediaWiki (issue 23 item 7): Debian's mediawiki 1.39 on
SQLite under our own Apache with mod_php (bench/quality/mediawiki_site.py), three small traffic
runs with edits between them, the site changed again (pages deleted, old revisions removed) before
validation, `truth`, `mine`, `validate`, `eval`, the hand-written canonicalizer's row and the three
Scrapy crawls of the crawl-efficiency stage.  A few minutes.

Only invariants are asserted (as tests/test_quality_small.py does for the Sphinx site): the truth
is complete, the scores are consistent, the hand-written canonicalizer merges no different pages,
the crawls ran within their budget.  The validated set's false merges are reported in
docs/quality.md, not asserted here: on this app the current validator is known to publish some
(issue 23).  Skipped, with the reason, where the Debian packages cannot be installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: `make test-all` (not `make test` / CI): Debian's PHP, MediaWiki, WordPress and MariaDB packages
#: and a few minutes of a real wiki would take .ci/run past its ~20 minutes; the Sphinx small run
#: (tests/test_quality_small.py) keeps the harness in CI
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run():
    inst = subprocess.run(["bash", "bench/quality/install.sh"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    if inst.returncode != 0 or not Path("/usr/share/mediawiki/maintenance/install.php").exists():
        pytest.skip("the Debian packages mediawiki, php-sqlite3 and libapache2-mod-php could not be installed "
                    f"(bench/quality/install.sh needs root and apt): {inst.stderr[-500:]}")
    out = Path(tempfile.mkdtemp(prefix="dust-quality-mw-"))
    out.chmod(0o755)  # Apache's worker user (www-data when we are root) reads and writes the wiki there
    r = subprocess.run([sys.executable, "bench/quality/run.py", "--apps", "mediawiki", "--small", "--out", str(out),
                        "--no-doc", "--no-learned"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    try:
        assert r.returncode == 0, r.stderr[-4000:]
        yield out / "mediawiki", json.loads((out / "results.json").read_text())[0]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_truth_is_complete(run):
    from dustbuster.cli.truth import log_urls, read_records

    app, res = run
    urls, _ = log_urls([str(app / "test.log")], "auto", res["host"], "http")
    lines = (app / "truth.jsonl").read_text().splitlines()
    recs = read_records(app / "truth.jsonl")
    assert len(urls) >= 100 and len(lines) == len(recs) == len(urls)
    assert [json.loads(x)["url"] for x in lines] == urls
    assert any("/w/index.php?" in u for u in urls) and any("/wiki/" in u for u in urls)  # both URL forms
    assert any("oldid=" in u for u in urls)  # the wiki's own history links were followed
    for r in recs.values():
        assert (r["cluster"] is not None) == bool(r["ok"]), r


def test_scores_are_consistent_and_the_ceiling_merges_nothing(run):
    from dustbuster.core.report.evaluate import Scores, consistent

    _, res = run
    results = {r["name"]: r for r in res["eval"]["results"]}
    keep = results["KeepAll"]["overall"]
    for r in res["eval"]["results"]:
        s = r["overall"]
        assert (s["urls"], s["clusters"]) == (keep["urls"], keep["clusters"])
        sc = Scores(s["urls"], s["clusters"], s["crawled"], s["covered"], s["removed_correctly"],
                    s["false_merge_groups"], s["false_merge_urls"])
        assert consistent(sc) == [], r["name"]
    hand = next(r for r in res["eval"]["results"] if r.get("kind") == "ceiling")["overall"]
    assert hand["false_merge_groups"] == 0, hand["false_merge_examples"]
    assert hand["removed_correctly"] > 0


def test_the_site_changed_after_the_logs(run):
    app, _ = run
    steps = (app / "steps.log").read_text()
    # round 3 of the edits runs after the truth of the test log and before validation
    assert steps.index("--round 3") > steps.index("dustbuster truth") and steps.index("--round 3") < steps.index(
        "dustbuster validate")
    assert (app / "site" / "deleted.txt").read_text().split()


def test_crawls_ran_within_their_budget(run):
    _, res = run
    c = res["crawl"]
    assert set(c["crawls"]) == {"scrapy", "scrapy + our rules", "scrapy + hand canonicalizer", "scrapy + content truth"}
    assert c["seeds_urls"] == 4  # the front page under the host and www., on both ports
    for row in c["crawls"].values():
        # CLOSESPIDER_PAGECOUNT counts the responses handled; the requests in flight (8) still finish,
        # and redirects are downloads that are not pages
        assert 0 < row["pages"] <= c["budget"] + 8 and row["downloads"] >= row["pages"]
        assert 0 < row["distinct"] <= row["pages"]
    assert c["crawls"]["scrapy"]["missed"] == 0
    for name in ("scrapy + our rules", "scrapy + hand canonicalizer", "scrapy + content truth"):  # lostrules.py
        row = c["crawls"][name]
        assert row["lost_by_rules"] + row["not_reached"] == row["missed"]
    assert c["crawls"]["scrapy + hand canonicalizer"]["lost_by_rules"] == 0  # the ceiling merges no different pages
