"""The real-log regression runs: which logs, which site, and the compact form that is checked in.

Regenerate the expected files after an intended change with ``python -m tests.realruns``
and explain the difference in the commit message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "data" / "logs"
EXPECTED = ROOT / "tests" / "data" / "expected"

RUNS = {
    "monitorware": (["monitorware-twiki/access_log"], "monitorware.example"),
    "semicomplete": (["semicomplete-apache/apache_logs"], "semicomplete.com"),
    "secrepo": (
        ["secrepo-selflogs/access.log.2018-12-15", "secrepo-selflogs/access.log.2021-10-22_to_2021-10-27",
         "secrepo-selflogs/access.log.2022-12-22"],
        "www.secrepo.com",
    ),
    "nasa": (["nasa-ksc-1995-tsv-sample/nasa_19950801_fullday.tsv", "nasa-ksc-1995-tsv-sample/nasa_19950701.tsv"], "ksc.nasa.gov"),
    "netarchive": (
        [f"netarchivesuite-heritrix-crawllogs/{n}" for n in (
            "crawl.2006-02-23.job11.log", "crawl.2006-02-23.job5.log", "crawl.2006-07-07.job42.log",
            "crawl.2007-12-27.job9.log", "crawl.2012-05-23.idna.log", "crawl.2015-05-22.h3.log")],
        None,
    ),
    "cdx": (
        ["webarchive-cdx-samples/pywb_iana.org_2014.cdx", "webarchive-cdx-samples/ia_wayback_archive.org_homepage_2012.cdx",
         "webarchive-cdx-samples/commoncrawl_CC-MAIN-2024-30_cdx-00187_slice.cdxj"],
        None,
    ),
}


def run(name: str) -> dict:
    from dustbuster.core.mining.mine import mine
    from dustbuster.logs.reader import read_urllist

    files, site = RUNS[name]
    ul, st = read_urllist([LOGS / f for f in files], site=site)
    r = mine(ul)
    return {
        "logs": files,
        "site": site,
        "read": {k: v for k, v in st.to_dict().items() if k != "formats"},
        "urls": len(ul),
        "likely_pairs": r.stats["likely_pairs"],
        "after_elimination": r.stats["after_elimination"],
        "rules": [[x.text, x.support, x.support_high] for x in r.substring_rules()],
        "param_rules": [[x.text, x.support, x.disqualified] for x in r.param_rules()],
        "general_rules": [[x.text, x.support] for x in r.general],
    }


def main() -> int:
    EXPECTED.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or RUNS:
        out = run(name)
        (EXPECTED / f"{name}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{name}: {out['urls']} URLs, {out['likely_pairs']} likely, {len(out['rules'])} kept, {len(out['param_rules'])} param")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
