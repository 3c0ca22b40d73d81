"""Trust of the validated rule set on the simulator: validation rounds over growing windows of its
12,000-line log (default 1k, 4k, 12k lines, as the streaming validator sees them), the final
published set judged against the simulator's own pages (redundancy, coverage of its duplicate
URLs, false merges, grown or non-converging canonical URLs, fetches per decided rule).

    .venv/bin/python bench/trust_sim.py [ROOT] [1000,4000,12000] [--traps] [--wiki] [--out FILE] [--small]

Writes bench/out/trust_sim.json (or --out FILE); --small: windows of 300 and 600 lines (CI's check that it runs).

ROOT (default: this checkout) lets the same script run an older checkout (a git worktree) for a
before/after comparison.  --traps: the simulator with its identity traps (sim/traps.py; issue 23),
its soft-error pages counted as no page.  --wiki: with the one-page families of sim/wiki.py (a login page's
no-op returnto, listings by page=; issue 28 item 4)."""
import asyncio, json, sys, tempfile, pathlib, time
from collections import defaultdict
argv = sys.argv[1:]
TRAPS = "--traps" in argv
WIKI = "--wiki" in argv
SMALL = "--small" in argv
OUT = pathlib.Path(__file__).resolve().parent / "out" / "trust_sim.json"
if "--out" in argv:
    if argv.index("--out") + 1 >= len(argv):
        sys.exit("trust_sim.py: --out needs a file")
    OUT = pathlib.Path(argv[argv.index("--out") + 1])
    del argv[argv.index("--out"):argv.index("--out") + 2]
argv = [x for x in argv if x not in ("--small", "--traps", "--wiki")]
root = argv[0] if argv else str(pathlib.Path(__file__).resolve().parent.parent)
sys.path.insert(0, root)
from dustbuster.agents.validator import RoundParts, validation_round
from dustbuster.core.mining.mine import mine
from dustbuster.core.canon.canonize import canonize
from dustbuster.core.model.rules import rules_from_document
from dustbuster.core.urls.urllist import URLList
from dustbuster.sim.forum import SITE_HOSTS
from dustbuster.sim.site import SimSite, start
from dustbuster.state.verdicts import VerdictStore
from dustbuster.logs.reader import parse_lines
from dustbuster.stream.records import CandidateSet
from dustbuster.stream.settings import Settings
WINDOWS = tuple(int(x) for x in (argv[1] if len(argv) > 1 else "300,600" if SMALL else "1000,4000,12000").split(","))


async def go():
    sim = SimSite(**({"traps": True} if TRAPS else {}), **({"wiki": True} if WIKI else {}))
    runner, port = await start(sim)
    tmp = pathlib.Path(tempfile.mkdtemp())
    conf = tmp / "sites.json"
    conf.write_text(json.dumps({"forum.test": {"origins": [f"http://{h}:{port}" for h in SITE_HOSTS], "allow_private": True,
        "resolve": {h: "127.0.0.1" for h in SITE_HOSTS}, "rate_per_s": 2000, "concurrency": 8}}))
    lines = sim.log_lines(12000, port=port)
    store = VerdictStore(tmp / "v")
    sent = []
    async def publish(site, value): sent.append(value)
    settings = Settings(validator_sites=conf, verdict_ttl_s=3600)
    t0 = time.time()
    fetches = 0
    for k, n in enumerate(WINDOWS, 1):
        ul = URLList()
        for rec in parse_lines(lines[:n], "forum.test").records:
            ul.add(*rec)
        doc = mine(ul).to_json()
        cand = CandidateSet(site="forum.test", window=k, rules=doc["rules"], stats=doc["stats"], params=doc["params"], test_urls=list(ul))
        await validation_round("forum.test", cand, RoundParts(settings, store, publish))
    secs = time.time() - t0
    await runner.cleanup()
    final = [json.loads(x.dumps(serializer="json")) for x in sent if x is not None][-1]
    rules = rules_from_document(final)
    urls = list(ul)
    groups = defaultdict(set); grown = unconv = 0
    for u in urls:
        c = canonize(u, rules)
        groups[c.canonical].add(u); grown += len(c.canonical) > len(u) + 3; unconv += not c.converged
    fm_groups = fm_urls = 0
    for c, m in groups.items():
        pages = {sim.page_of(x) for x in m} - {None}
        if len(m) > 1 and len(pages) > 1:
            fm_groups += 1; fm_urls += len(m)
    # truth duplicates: URLs grouped by the simulator's page
    truth = defaultdict(set)
    for u in urls:
        p = sim.page_of(u)
        truth[p if p is not None else u].add(u)
    dup_truth = len(urls) - len(truth)
    removed = len(urls) - len(groups)
    result = {"versions": len(sent), "final_rules": len(rules), "urls": len(urls), "unique_after": len(groups),
        "discovered_redundancy": round(removed / len(urls), 4), "truth_duplicates": dup_truth,
        "coverage_of_truth_duplicates": round(removed / dup_truth, 4) if dup_truth else None,
        "false_merge_groups": fm_groups, "false_merge_urls": fm_urls, "grown_urls": grown, "unconverged": unconv,
        "fetches_total_final_round": final["stats"]["fetches"], "fetches_per_decided_rule_final": final["stats"]["fetches_per_decided_rule"],
        "seconds": round(secs, 1), "windows": list(WINDOWS), "rules": [r.text for r in rules]}
    print(json.dumps({k: v for k, v in result.items() if k != "rules"}, indent=1))
    print("\n".join(r.text for r in rules))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1))
asyncio.run(go())
