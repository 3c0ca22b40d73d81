"""docs/quality.md from the results of bench/quality/run.py."""

from __future__ import annotations

import platform
import time
from pathlib import Path

from crawleff import crawl_table  # bench/quality/crawleff.py

ROWS = (("KeepAll", "KeepAll (every URL crawled)"), ("w3lib", "w3lib `canonicalize_url`"),
        ("unvalidated", "our unvalidated top-50 candidates"),
        ("rules-paper", "the paper's rule language, validated (substring + global parameter rules)"),
        ("validated", "our validated rule set (extended language)"),
        ("ceiling", "hand-written per-app canonicalizer (ceiling)"))


def _pct(x) -> str:
    return "–" if x is None else f"{x:.1%}"


def _pick(results: list[dict], key: str) -> dict | None:
    for r in results:
        if r["name"].startswith(key):
            return r
    for r in results:
        if r.get("kind") == key and not r["name"].startswith("rules-paper"):
            return r
    return None


def app_table(res: dict) -> str:
    ev, sec, rs = res["eval"], res["seconds"], res["ruleset"]["stats"]
    ps = (res.get("paper_ruleset") or {}).get("stats") or {}
    out = ["| canonicalizer | rules | redundancy | coverage | removed correctly | false merges: groups (URLs) "
           "| precision | recall | F1 | fetches per decided rule | minutes |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, label in ROWS:
        r = _pick(ev["results"], key)
        if r is None:
            out.append(f"| {label} | not run (w3lib missing) | | | | | | | | | |")
            continue
        s = r["overall"]
        rules = r.get("applied", "–")
        fetches = {"validated": f"{rs.get('fetches_per_decided_rule')} ({rs.get('fetches')} fetches)",
                   "rules-paper": f"{ps.get('fetches_per_decided_rule')} ({ps.get('fetches')} fetches)",
                   "unvalidated": "0"}.get(key, "–")
        minutes = {"validated": f"{(sec['mine'] + sec['validate']) / 60:.1f}",
                   "unvalidated": f"{sec['mine'] / 60:.2f}"}.get(key, "–")
        out.append(f"| {label} | {rules} | {_pct(s['redundancy'])} | {_pct(s['coverage'])} | {_pct(s['removed_share'])} "
                   f"| {s['false_merge_groups']} ({s['false_merge_urls']}) | {s['precision']:.3f} | {s['recall']:.3f} "
                   f"| **{s['f1']:.3f}** | {fetches} | {minutes} |")
    return "\n".join(out)


def type_table(res: dict) -> str:
    """Each rule type's share of the duplicates the validated set removes (bench/quality/run.py by_type)."""
    bt = res.get("by_type")
    if not bt:
        return ""
    dups = _pick(res["eval"]["results"], "KeepAll")["overall"]["duplicates_before"]
    out = [f"Rule types of the validated set: duplicate URLs of the test log removed ({bt['all']['removed']} of {dups} "
           "with every type) and removed only thanks to that type (the set without it removes that many fewer):", "",
           "| rule type | rules | duplicates removed only by this type |", "|---|---:|---:|"]
    for k, v in bt.items():
        if k != "all":
            out.append(f"| {k} | {v['rules']} | {v['only_this_type']} |")
    return "\n".join(out)


def class_table(res: dict, n: int = 10) -> str:
    ev = res["eval"]["results"]
    cols = [(label, _pick(ev, key)) for key, label in ROWS if _pick(ev, key)]
    first = cols[0][1]["classes"]
    names = list(first)[:n]
    head = "| class | URLs | duplicates | " + " | ".join(f"F1 {label.split(' (')[0]}" for label, _ in cols) + " |"
    out = [head, "|---|---:|---:|" + "---:|" * len(cols)]
    for c in names:
        cells = []
        for _, r in cols:
            s = r["classes"].get(c)
            cells.append(f"{s['f1']:.3f}" + (f" ({s['false_merge_groups']} fm)" if s and s["false_merge_groups"] else "")
                         if s else "")
        out.append(f"| `{c}` | {first[c]['urls']} | {first[c]['duplicates_before']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def examples(res: dict) -> str:
    out = []
    for key in ("validated", "rules-paper", "ceiling", "unvalidated"):
        r = _pick(res["eval"]["results"], key)
        if not r or not r["overall"]["false_merge_examples"]:
            continue
        out.append(f"False merges of the {key} set ({r['overall']['false_merge_groups']} groups), e.g.:\n")
        for m in r["overall"]["false_merge_examples"][: 4 if key == "validated" else 2]:
            seen, lines = set(), []
            for u, c in m["urls"]:
                if c not in seen:
                    seen.add(c)
                    lines.append(f"    content {c}: {u}")
            out.append(f"    {m['canonical']}  ←\n" + "\n".join(lines[:4]) + "\n")
    return "\n".join(out)


def left_section(res: dict) -> str:
    """What the validated set leaves, and why candidates were not published."""
    st = res["ruleset"]["stats"]
    left = res.get("left")
    why = (f"{st['undecided']} undecided: too few test URLs that the rule changes, or the fetch budget; "
           if st["undecided"] else "")
    out = [f"Validation decided {st['decided']} of {st['candidates']} candidates ({why}{st['dropped_refinements']} "
           "dropped as refinements of valid rules before any fetch)."]
    if left:
        diff = ", ".join(f"{n} differ in the {k}" for k, n in sorted(left["by_difference"].items(), key=lambda kv: -kv[1]))
        out.append(f"Contents still reached under several canonical URLs after the validated set: {left['contents']} "
                   f"({diff or 'none'}), e.g.:\n")
        for k, exs in left["examples"].items():
            for a, b in exs[:2]:
                out.append(f"    {k:<10}  {a}\n                {b}")
    if left and left.get("families"):
        out += ["", "The families of duplicate URL pairs the validated set leaves apart (each content's first "
                "canonical URL paired with each of its others; bench/quality/run.py leftovers), the largest first, "
                "and why: a mined candidate (candidates.json) merges the example but was refuted or left "
                "undecided, or no candidate merges it, or no rule should merge it (a revision-like parameter "
                "names a state of the page that equals today's page by chance):", "",
                "| family | pairs | example | why |", "|---|---:|---|---|"]
        for f in left["families"]:
            a, b = f["example"]
            out.append(f"| {f['family']} | {f['pairs']} | `{a}` `{b}` | {f.get('why', '–')} |")
    return "\n".join(out) + "\n"


def crawl_time(res: dict) -> str:
    c = res.get("crawl") or {}
    return f", crawls {c['seconds'] / 60:.1f} min" if c.get("seconds") else ""


def repeat_line(res: dict) -> str:
    """Two validate runs on the same logs, seed and site (run.py --twice), when the run made them."""
    rep = res.get("repeat")
    if not rep:
        return ""
    diff = "".join(f"\n  * only in the {k.split('_')[1]} run: `{t}`" for k in ("only_first", "only_second")
                   for t in rep[k][:10])
    return f"\nValidated twice on the same logs, seed and site: {rep['summary']}.{diff}\n"


def app_section(res: dict) -> str:
    ev, rs = res["eval"], res["ruleset"]
    keep = _pick(ev["results"], "KeepAll")["overall"]
    lines = res["lines"]
    rules = "\n".join(f"* `{r['display']}`" for r in rs["rules"]) or "* (none)"
    return f"""## {res['app']}: {res['kind']}

Logs (lines): train {lines['train']:,}, validate {lines['validate']:,}, test {lines['test']:,}.  Truth of the test
log: {keep['urls']:,} pages fetched and clustered ({ev['left_out']['failed']} failed fetches left out),
{keep['clusters']:,} distinct contents, {keep['duplicates_before']:,} duplicate URLs
({keep['duplicates_before'] / keep['urls']:.1%}).  Candidates and rules learned from train + validate; scored on
test only.

{app_table(res)}

Validated rule set ({len(rs['rules'])} rules, set-level check {'passed' if rs['stats']['set_check']['passed'] else 'not passed'}):

{rules}
{repeat_line(res)}
{type_table(res)}

Per URL class (the largest classes of the test log; "fm" = false-merge groups):

{class_table(res)}

{examples(res)}
{left_section(res)}
{crawl_table(res)}
Times: traffic {res['seconds']['traffic'] / 60:.1f} min, truth {res['seconds']['truth'] / 60:.1f} min,
mine {res['seconds']['mine']:.0f} s, validate {res['seconds']['validate'] / 60:.1f} min{crawl_time(res)}; whole app
{res['seconds']['total'] / 60:.1f} min.
"""


HISTORY = """## Before and after issue 12 (the extended rule language)

Before (this file's run of 2026-11-26 at commit 5169e3c: the paper's language, N = 100, the exact
size test):

| app | rules | redundancy | coverage | false merges | F1 | fetches per decided rule |
|---|---:|---:|---:|---:|---:|---:|
| trac | 1 | 6.9% | 41.5% | 0 | 0.945 | 68.7 |
| docs | 3 | 17.8% | 73.2% | 0 | 0.959 | 86.8 |

After: the tables above ("our validated rule set (extended language)"); the row "the paper's rule
language, validated" is the papers' rule types under today's validation and mining (2 % size
slack, N = 40), so the difference between those two rows is what the extended types add.

The simulator (`.venv/bin/python bench/trust_sim.py`: validation rounds over 1k, 4k and 12k lines of
its log, the final set judged against the simulator's own pages): 7 rules, discovered redundancy
69.9 %, coverage of its duplicate URLs 99.3 %, **0 false-merge groups**, 0 grown or non-converging
URLs, 3.5 fetches per decided rule in the final round (its verdicts cached from earlier rounds).
"""


HEAD = """# Quality on real web software (`make quality`)

DUST rules scored against the content of real sites nobody here wrote.  Real
applications (Trac, a Sphinx site, MediaWiki, WordPress) run on loopback behind real servers that write real access logs; a seeded, bounded
traffic generator (a breadth-first crawler plus browser-like users with the site's own forms, sort
links, every origin of the site — the `www.` alias and a second port —, campaign parameters and
parameters the app ignores or that name its defaults, the URL spellings clients use, such as
MediaWiki's three spellings of an article, and shortened URLs) makes three logs per site — train,
validate, test — with edits to the site between them, and the site changes once more (pages
edited and deleted, old revisions removed) after the last log is written and before anything is
validated: the logs are older than the site, as in production.  `dustbuster truth` fetches every 2xx URL of
the **test** log once and clusters the pages by content; `dustbuster eval` scores each
canonicalizer on it.  The test log is never used for mining or validation.

Columns: **redundancy** = discovered redundancy (WWW 2007 §3: unique URLs before − after, over
before); **coverage** = WWW 2007's coverage (duplicates before − after, over before; a false merge
also lowers "after"); **removed correctly** = duplicate URLs skipped whose page is the page fetched
for their canonical form, over the duplicates — the duplicates being *all* duplicate URLs of the
truth: every URL of a content cluster beyond its first (dustbuster.core.report.evaluate
`removed_share`, over `duplicates_before` = unique URLs − clusters), so it is the share of all
duplicate URLs a canonicalizer removes without a false merge; the at-a-glance table shows it for
our validated set and the hand-written canonicalizer side by side, with the number of duplicate
URLs; **rules: ours / hand** = the rules of our validated set / the rewrites the hand-written
canonicalizer declares (bench/quality/handcanon.py `RULES`, one per documented rewrite, the `www.`
and second-port host rewrites included); **false merges** = canonical URLs whose URLs show
different content (groups, and the URLs a crawler would wrongly skip); **precision / recall / F1**
= the crawl simulation of Xu, Liu and Callan (SIGIR 2017 §3.2); **fetches per decided rule** =
pages fetched by `dustbuster validate` per rule it decided; **minutes** = mining (+ validation).

Crawl columns (issue 28, bench/quality/crawleff.py): four Scrapy crawls with the same download
budget, seeded with the front page under every origin the site answers to (the bare host and
`www.`, on both of its ports): plain Scrapy, Scrapy with our rules, with the hand-written
canonicalizer, and with the **content truth** as its duplicate filter — the best any canonicalizer
could do: run after the other three, it keys a URL by its content cluster when one of those crawls
got a 200 page of a single content there (first URL or redirect target, clustered as below), any
other URL through the hand-written canonicalizer (which merges only URLs of one page): by the
content of a known URL of its canonical form, else by that form.  **per download** = distinct contents over responses downloaded;
**of the ceiling: hand / content truth** = per download over the hand canonicalizer's crawl's and
over the content-truth crawl's.  The plain crawl's contents a crawl never reached are split
in two (bench/quality/lostrules.py): **lost by the rules** = those that no URL seen in any of the
crawls reaches under the crawl's request key — every URL showing them (first URL and redirect
target) is merged with a URL that showed another content or an error (404), so the crawler may
fetch that one instead, and the crawl did not reach them; one URL merged wrongly and another safe
is not lost; the contents one page of the deployment showed to different crawls (at one URL, or
under another of the origins the harness serves the app at: relative times that moved on) are
versions of one page, never "another content" of each other; the same for the hand canonicalizer
with its function as the key (0 expected: the ceiling merges no different pages); **not reached
within the budget** = the rest: the crawl spent its budget on other pages (a crawl that skips
duplicates reaches further, so another set), or the page changed between the crawls (recent
changes, feeds: counted apart under the table).  Results written before this split show *not
counted*; `.venv/bin/python bench/quality/crawls.py --recount OUTDIR/APP` counts them from the run's
crawls.

Same content (core/report/truth.py): estimated Jaccard resemblance ≥ 0.9 of the 10-word shingles of the
visible text, words and shingles exactly as the validator's sketches (core/validation/sketch.py), estimated
with 256 min-hashes instead of the validator's 4 (4 would split near-identical pages at random:
0.9⁴ ≈ 66 %; 256 estimate it within ±0.015), single link over locality-sensitive-hashing
candidates; non-text by exact digest.
"""


FOOT = """## How it is done, and its limits

* **Apps** (bench/quality/install.sh): Trac 1.6, gunicorn and Sphinx from PyPI in their own
  virtualenv (var/quality/venv), Apache httpd from Debian.  Trac (bench/quality/trac_site.py): one
  wiki page per installed package (description, recent changelog entries, copyright; some with
  several versions), tickets from changelog entries with components, milestones, comments and
  resolutions, a git repository of copyright files and licences in the source browser; everything
  anonymous visitors may see (wiki history and diffs, timeline, roadmap, reports, custom queries
  with sort orders and CSV/TSV/RSS exports, search, preferences, the login link).  Sphinx
  (bench/quality/docs_site.py): one page per package, section indexes, the common licences,
  "show source" pages, genindex and search, served with directory listings (mod_autoindex and its
  sort links), content negotiation (MultiViews) and DirectoryIndex.  Both logs are the servers'
  own: gunicorn's `--access-logformat` and Apache's `LogFormat`, the combined format with the Host
  header first (so `www.` aliases and ports are in the log, as in Debian's vhost_combined).
* **MediaWiki** (bench/quality/mediawiki_site.py): Debian's `mediawiki` 1.39 with SQLite
  (php-sqlite3), installed by `maintenance/install.php` into the run's folder (the code stays in
  /usr/share/mediawiki; Apache prepends a file that defines MW_CONFIG_FILE), MonoBook, short URLs
  `/wiki/Title` beside `/w/index.php?title=…`; one article per installed package with 3-6 revisions
  by four users (maintenance/importDump.php), categories, talk pages, redirects; read-only for
  anonymous visitors (action=edit is "View source").  Edits: rounds 1-2 add revisions to 6 % of the
  pages, add a page and delete 2 %; round 3 (after the logs) edits 15 %, deletes 8 % and deletes every
  old revision of a fifth of the pages (maintenance/deleteOldRevisions.php): their `oldid=`/`diff=`
  URLs in the logs now answer with MediaWiki's error page, status 200.
* **WordPress** (bench/quality/wordpress_site.py): Debian's `wordpress` 6.1 with its own MariaDB
  10.11 server (mariadb-install-db into the run's folder, a Unix socket there, no TCP, started and
  stopped by the harness), Twenty Twenty-Three, pretty permalinks `/%year%/%monthnum%/%postname%/`
  with WordPress's documented rewrite rules in our httpd.conf; one post per installed package with
  3-5 revisions, a category, tags, threaded comments (reply links `?replytocom=`), comment pages of 4,
  a few pages, an archive page (monthly archives, authors, searches `?s=` and `/search/…/`, short
  links `?page_id=`, `?cat=`) and posts linking each other by permalink or `?p=ID`.  Edits: as for
  MediaWiki (posts edited, added and deleted; comments deleted).
* **Hand-written canonicalizers** (bench/quality/handcanon.py, the "ceiling" row): one function per
  app written from its documentation (cited in the code), never from logs, each with its declared
  list of rewrites (`RULES`; the deployment's two: `www.` → the bare host, the second port → the
  first, told by run.py through QUALITY_PORT_ALIASES); scored on the same truth
  through dustbuster.core.report.evaluate (run.py hand_row), and used as a Scrapy request fingerprinter in
  the crawl-efficiency stage (bench/quality/crawleff.py).
* **Traffic** (bench/quality/traffic.py): a breadth-first crawler (40 % of the requests) and
  browser-like sessions; seeds 1, 2, 3 for train, validate, test; bounded by a request count and a
  time limit.  Every app listens on two ports (two `Listen` lines in its httpd.conf, two gunicorn
  `-b` binds) under two names; sessions enter by any of the four origins sometimes, at a page
  drawn section by section (first path segment, namespace, parameter names) from the pages seen so
  far, so the outside links' variants reach every part of the site.  The app drivers (run.py
  `TRAFFIC`) give the spellings clients use — MediaWiki's `/wiki/T`, `/w/index.php?title=T`,
  `/w/index.php/T`, with `action=view` and `printable=yes` sometimes — and no-op parameters:
  `uselang=en` and `useskin=monobook` (the defaults) on MediaWiki, a search-highlight parameter
  (`highlight=`) on the Sphinx site and WordPress, which read none; with the campaign parameters
  they are added to some entries and some links followed, on every kind of page; between runs the site is edited (pages edited, tickets commented and closed, a page
  and tickets added; for Sphinx pages edited, one added, the site rebuilt).  Only 127.0.0.1 is
  connected to; host names are pinned in sites.json (`resolve`).
* **Learning**: `dustbuster mine` and `dustbuster validate` both read train + validate.  The
  paper draws validation URLs from other logs than the detection log; `dustbuster validate` mines
  and validates on the same URL list, so here the two logs are one learning set.  A separate
  validation log would need an option of `dustbuster validate` (e.g. `--test-log`).
* **Truth**: only the 2xx URLs of the test log; a URL whose fetch fails (404 now, robots,
  soft error, timeout) is listed with its reason and left out of the scores.  Redirects are
  followed within the site, so a URL that redirects counts as the page it leads to.
* **The CI version** (tests/test_quality_small.py, in `make test`): the Sphinx site only, 500
  requests a run, about a minute; it asserts invariants, not quality: the truth has one record
  per unique 2xx URL of the test log (in order, a cluster for every fetched page), every score
  obeys the identities of dustbuster.core.report.evaluate.consistent and the per-class URLs add up, the validated
  set is schema-valid and makes no false merge.  tests/test_quality_mediawiki.py runs MediaWiki at
  the small size (300 requests a run, the crawl stage with 200 downloads a crawl, a few minutes)
  and asserts the same invariants, that the hand-written canonicalizer merges no different pages,
  that the site changed after the truth and before validation, and that the crawls ran; it skips,
  saying why, where the Debian packages cannot be installed.  The validated set's false merges on
  MediaWiki and WordPress are reported here, not asserted: issue 23 is about them.
* **Order of a run** (bench/quality/run.py run_app, every app): setup; train traffic; edit round 1;
  validate traffic; edit round 2; test traffic; `dustbuster truth` of the test log (the site as the
  test log saw it); **edit round 3** (the site changes after the logs); `mine`; `validate` (extended
  and paper languages) against the changed site; the crawl-efficiency crawls; `eval` and the
  hand-written canonicalizer's row on the test truth.
* Numbers depend on the machine's installed packages (the text) and on timing only through the
  time bound of the traffic (not reached at these sizes).
"""


def hand_rules(app: str) -> int | None:
    """The number of rewrites the app's hand-written canonicalizer declares (handcanon.RULES)."""
    import handcanon  # bench/quality/handcanon.py

    rules = handcanon.RULES.get(app)
    return len(rules) if rules is not None else None


def overview_section(results: list[dict]) -> str:
    """Every app on one line: our validated set beside the hand-written canonicalizer (the ceiling),
    and the crawl per download (issue 23's, issue 28's and issue 36's numbers)."""
    out = ["## Every app at a glance", "",
           "| app | rules: ours / hand | false-merge groups | duplicate URLs removed correctly, of all in the truth: "
           "ours / hand | coverage: ours / ceiling | F1: ours / ceiling / KeepAll "
           "| fetches per decided rule | crawl, distinct contents per download: plain / our rules / hand / content "
           "truth | our rules' crawl: lost by the rules / not reached within the budget | minutes |",
           "|---|---|---:|---|---|---|---:|---|---:|---:|"]
    for res in results:
        ev = res["eval"]["results"]
        ours, keep = _pick(ev, "validated")["overall"], _pick(ev, "KeepAll")["overall"]
        hand = (_pick(ev, "ceiling") or {}).get("overall")
        c = (res.get("crawl") or {}).get("crawls")
        crawl = (" / ".join(str(c[k]["per_download"]) if k in c else "–" for k in (
            "scrapy", "scrapy + our rules", "scrapy + hand canonicalizer", "scrapy + content truth")) if c else "not run")
        n_hand = hand_rules(res["app"])
        removed = (f"{_pct(ours['removed_share'])} / {_pct(hand['removed_share']) if hand else '–'} "
                   f"of {keep['duplicates_before']:,}")
        out.append(f"| {res['app']} | {len(res['ruleset']['rules'])} / {n_hand if n_hand is not None else '–'} "
                   f"| {ours['false_merge_groups']} | {removed} "
                   f"| {_pct(ours['coverage'])} / {_pct(hand['coverage']) if hand else '–'} "
                   f"| {ours['f1']:.3f} / {hand['f1'] if hand else float('nan'):.3f} / {keep['f1']:.3f} "
                   f"| {res['ruleset']['stats'].get('fetches_per_decided_rule')} | {crawl} "
                   f"| {lost_pair(c['scrapy + our rules']) if c else '–'} | {res['seconds']['total'] / 60:.0f} |")
    return "\n".join(out) + "\n"


def lost_pair(row: dict) -> str:
    """Our rules' crawl: lost by the rules / not reached within the budget (bench/quality/lostrules.py);
    a result written before that split shows its old count of contents missed."""
    if "lost_by_rules" not in row:
        return f"not counted / {row['missed']} missed in all"
    return f"{row['lost_by_rules']} / {row['not_reached']}"


def targets_section(results: list[dict]) -> str:
    """Issue 12's targets, per app, from this run: the extended language's validated set against
    the paper's language under the same validation, and the baselines."""
    out = ["## Targets of the extended rule language (issue 12), this run", "",
           "| app | redundancy: extended / paper (ratio) | coverage | false-merge groups | fetches per decided rule "
           "| rules | F1: extended / paper / KeepAll / w3lib |", "|---|---|---:|---:|---:|---:|---|"]
    for res in results:
        ev = res["eval"]["results"]
        ext, pap = _pick(ev, "validated")["overall"], _pick(ev, "rules-paper")["overall"]
        keep, w3 = _pick(ev, "KeepAll")["overall"], (_pick(ev, "w3lib") or {}).get("overall")
        ratio = f"{ext['redundancy'] / pap['redundancy']:.2f}×" if pap["redundancy"] else "–"
        out.append(f"| {res['app']} | {_pct(ext['redundancy'])} / {_pct(pap['redundancy'])} ({ratio}) "
                   f"| {_pct(ext['coverage'])} | {ext['false_merge_groups']} "
                   f"| {res['ruleset']['stats'].get('fetches_per_decided_rule')} | {len(res['ruleset']['rules'])} "
                   f"| {ext['f1']:.3f} / {pap['f1']:.3f} / {keep['f1']:.3f} / {w3['f1'] if w3 else float('nan'):.3f} |")
    return "\n".join(out) + "\n\nTargets: redundancy ≥ 2× the paper's language, coverage ≥ 50 %, 0 false-merge groups, " \
        "≤ 25 fetches per decided rule, F1 above the paper's language, KeepAll and w3lib.\n"


def write_doc(results: list[dict], path: Path, small: bool = False) -> None:
    when = time.strftime("%Y-%m-%d")
    cmds = """```sh
make quality        # = bash bench/quality/install.sh && .venv/bin/python bench/quality/run.py
# per app, what run.py runs (bench/out/quality/<app>/, also report.html and eval.txt there):
dustbuster truth test.log --site HOST --sites sites.json -o truth.jsonl
dustbuster mine train.log validate.log --json > candidates.json     # top 50 kept: candidates-top50.json
dustbuster validate train.log validate.log --site HOST --sites sites.json -o rules.json
dustbuster validate train.log validate.log --site HOST --sites sites.json -o rules-paper.json --language paper
dustbuster eval --truth truth.jsonl candidates-top50.json rules.json rules-paper.json --json > eval.json
```
"""
    total = sum(r["seconds"]["total"] for r in results) / 60
    body = [HEAD, f"Run of {when} on this project's 2-core machine, shared with other work (Python "
            f"{platform.python_version()}, {'CI size' if small else 'full size'}, {total:.0f} minutes for these apps "
            "after installation):\n", cmds]
    body += [overview_section(results), targets_section(results)] + [app_section(r) for r in results] + [HISTORY, FOOT]
    path.write_text("\n".join(body))


__all__ = ["write_doc"]
