"""The crawler-facing subcommands: ``rules``, ``canonize``, ``export``, ``frontier`` (issue 5)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from collections import Counter

from dustbuster.core.errors import DustError, RuleError
from dustbuster.core.export import FORMATS
from dustbuster.core.params import DustParams
from dustbuster.logs.formats import has_surrogate

EPILOG_CANON = """\
examples:
  dustbuster validate access.log --site s.com --sites sites.json -o rules.json
  cut -f1 urls.txt | dustbuster canonize --rules rules.json > canonical.txt
  dustbuster mine access.log --site s.com --json > cands.json
  cut -f1 urls.txt | dustbuster canonize --rules cands.json --unvalidated   # candidates: at your risk
  dustbuster canonize --from-topic --tsv < frontier.txt      # every site's current validated rules
Reads one URL a line on stdin, writes its canonical URL (or, with --tsv, URL<TAB>canonical).
At the end the discovered redundancy (WWW 2007 §3 "Metrics") is reported on stderr.
Only validated rules apply (status 'valid'); a set that fails admission (a rule that feeds itself,
non-convergence, non-URLs, off-site hosts: docs/canonizer.md) is an error.
--from-topic normalizes first (RFC 3986, as the workers do; --no-normalize turns it off);
--rules does not unless --normalize (a mine document describes raw log URLs).
"""

EPILOG_RULES = """\
examples:
  dustbuster rules                          # every site's current rule set, with evidence
  dustbuster rules --site forum.test --follow   # then each new version as it is published
  dustbuster rules --json                   # one RuleSet JSON document a line
A tombstone (the site lost its rules) prints "site: deleted" ({"site": ..., "deleted": true} with --json).
"""

EPILOG_EXPORT = """\
examples:
  dustbuster export --from-topic --site forum.test --to nutch > regex-normalize.xml
  dustbuster export --rules rules.json --site forum.test --to clearurls -o dust.clearurls.json
Nutch: set urlnormalizer.loop.count to 10 (MA) so the list repeats like thesis Figure 5.5.
ClearURLs holds only parameter removals; other rules are listed under "x-dustbuster".skipped.
"""


def add_commands(sub, common) -> None:
    c = sub.add_parser("canonize", parents=[common], help="canonize URLs from stdin (rule file or rules topic)",
                       description="Canonize URLs (thesis Fig. 5.5) with the rules of a RuleSet or `dustbuster "
                       "mine --json` document, or with every site's current rule set from the rules topic.",
                       epilog=EPILOG_CANON, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--rules", metavar="RULES.json", help="rule file (RuleSet or mine --json output)")
    src.add_argument("--from-topic", action="store_true", help="read every site's rules from the rules topic")
    c.add_argument("--site", help="apply this site's rules to every URL (default: found from each URL's host)")
    norm = c.add_mutually_exclusive_group()
    norm.add_argument("--normalize", dest="normalize", action="store_true", default=None,
                      help="RFC 3986 normalization first (default with --from-topic)")
    norm.add_argument("--no-normalize", dest="normalize", action="store_false", help="no normalization")
    c.add_argument("--ma", type=int, default=DustParams().ma, help="max iterations (default %(default)s)")
    c.add_argument("--tsv", action="store_true", help="write URL<TAB>canonical")
    c.add_argument("--json", action="store_true", help="write one JSON object a line (url, canonical, rules, version)")
    c.add_argument("-o", "--output", metavar="FILE", help="write the canonical URLs here instead of stdout")
    c.add_argument("--unvalidated", action="store_true",
                   help="with --rules: also apply rules that are not validated (mine's 'likely' candidates, even "
                   "'invalid' ones) and print how many URLs each rule changed; by default only 'valid' rules apply")
    c.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")

    r = sub.add_parser("rules", parents=[common], help="print the current validated rule sets",
                       description="Read the compacted rules topic from the start and print each site's current "
                       "rule set: each rule with its evidence (positives/negatives of its validation, test URLs it "
                       "changes, a sample pair), or with --json one RuleSet document a line; with --follow keep "
                       "printing new versions.",
                       epilog=EPILOG_RULES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--site", help="only this site")
    r.add_argument("--follow", action="store_true", help="keep following the topic (Ctrl-C to stop)")
    r.add_argument("--json", action="store_true", help="one RuleSet JSON document a line (for programs)")
    r.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")

    e = sub.add_parser("export", parents=[common], help="write a site's rules for Nutch or ClearURLs",
                       description="Write one site's rules in a format crawlers already read: Apache Nutch's "
                       "regex-normalize.xml (urlnormalizer-regex), ClearURLs provider JSON (parameter "
                       "removals), or our RuleSet JSON.", epilog=EPILOG_EXPORT,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--to", required=True, choices=FORMATS,
                   help="output format: Nutch regex-normalize.xml, ClearURLs provider JSON, or our RuleSet JSON "
                   "(--format is the log format in mine/feed)")
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument("--rules", metavar="RULES.json", help="rule file (RuleSet or mine --json output)")
    src.add_argument("--from-topic", action="store_true", help="the site's current rule set from the rules topic")
    e.add_argument("--site", required=True, help="the site whose rules to export")
    e.add_argument("-o", "--output", help="write here instead of stdout")
    e.add_argument("--unvalidated", action="store_true",
                   help="also export rules that are not validated (status 'likely' or 'invalid')")
    e.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")

    f = sub.add_parser("frontier", parents=[common], help="send URLs to the frontier topic (canonized by workers)",
                       description="Read URLs (one a line) and send them to the frontier topic, keyed by site, "
                       "in JSON batches; workers answer on the canonical topic (docs/canonizer.md).")
    f.add_argument("urls", nargs="?", default="-", metavar="FILE|-", help="URLs one a line (default: stdin)")
    f.add_argument("--site", required=True, help="the site the URLs belong to (the message key)")
    f.add_argument("--batch-lines", dest="batch", type=int, default=500, metavar="N", help="URLs per message (default %(default)s)")
    f.add_argument("--wait", action="store_true", help="then print the workers' answers from the canonical topic: "
                   "new|seen<TAB>URL<TAB>canonical")
    f.add_argument("--timeout", type=float, default=120, help="seconds to wait for the answers (default %(default)s)")
    f.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")


def _settings(a):
    from dustbuster.stream.settings import Settings

    return Settings.from_env(kafka_bootstrap=getattr(a, "bootstrap", None))


def _read_doc(path: str) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DustError(f"no such rule file: {path}") from None
    except ValueError as exc:
        raise DustError(f"{path} is not JSON: {exc}") from None


def _topic_sets(a) -> dict[str, dict]:
    """Every site's current rule set on the rules topic, as a worker holds it: a record the rule
    book refuses (dustbuster.stream.rulesview's strict decoding: Infinity, NaN, 1e400, deep nesting...; then
    dustbuster.core.admission) is skipped with a warning, and its site keeps its previous set."""
    from dustbuster.core.rulebook import RuleBook
    from dustbuster.stream.rulesview import TopicFollower, topic_partitions

    s = _settings(a)
    check = RuleBook(getattr(a, "ma", DustParams().ma))
    out: dict[str, dict] = {}

    def update(site: str, doc: dict | None) -> None:
        check.update(site, doc)  # raises for a set the workers would not apply: the follower skips it
        if doc is None:
            out.pop(site, None)
        else:
            out[site] = doc

    async def run() -> None:
        if not await topic_partitions(s.kafka_bootstrap, s.rules_topic):
            return
        f = TopicFollower(s.kafka_bootstrap, s.rules_topic, update)
        await f.start()
        try:
            while not f.ready.is_set():
                await f.poll()
        finally:
            await f.stop()

    asyncio.run(run())
    return out


def _valid_only(doc: dict, unvalidated: bool) -> tuple[dict, int]:
    """The document with only its ``valid`` rules (all of them when ``unvalidated``), and how
    many were left out."""
    from dustbuster.core.rules import rules_from_document

    rules_from_document(doc)  # a malformed rule is an error, whatever its status
    if unvalidated:
        return doc, 0
    out, skipped = dict(doc), 0
    for key in ("rules", "param_rules"):
        if isinstance(doc.get(key), list):
            out[key] = [r for r in doc[key] if isinstance(r, dict) and r.get("status") == "valid"]
            skipped += len(doc[key]) - len(out[key])
    return out, skipped


def _screened(site: str, doc: dict, ma: int, quiet: bool) -> dict:
    """Unvalidated rules that would mangle URLs on their own (dustbuster.core.admission.screen_rules) are left
    out, with a warning each."""
    from dustbuster.core.admission import screen_rules
    from dustbuster.core.rules import ParamRule, rules_from_document

    try:
        ok, bad = screen_rules(site, rules_from_document(doc), ma)
    except RuleError as exc:
        raise DustError(f"bad rule document: {exc}") from None
    for r, why in bad:
        if not quiet:
            sys.stderr.write(f"warning: not applying {r.text}: {why}\n")
    return dict(doc, param_rules=[r.to_json() for r in ok if isinstance(r, ParamRule)],
                rules=[r.to_json() for r in ok if not isinstance(r, ParamRule)])


def _book(a, unvalidated: bool):
    """A rule book (site → rules) from --rules or --from-topic."""
    from dustbuster.core.rulebook import RuleBook

    normalize = a.normalize if a.normalize is not None else bool(a.from_topic)
    book = RuleBook(a.ma, normalize)
    if a.from_topic:
        for site, doc in _topic_sets(a).items():
            try:
                book.update(site, doc)
            except Exception as exc:  # whatever a record on the topic holds, the other sites still apply
                sys.stderr.write(f"warning: skipping the rule set of {site}: {type(exc).__name__}: {str(exc)[:300]}\n")
    else:
        doc = _read_doc(a.rules)
        a.site = (a.site or doc.get("site") or "rules-file").lower()  # every URL gets the file's rules
        doc, skipped = _valid_only(doc, unvalidated)
        if unvalidated:
            doc = _screened(a.site, doc, a.ma, a.quiet)
        if skipped and not a.quiet:
            sys.stderr.write(f"note: {skipped} rules of {a.rules} are not validated and are not applied "
                             "(--unvalidated applies them)\n")
        try:
            book.update(a.site, doc, unvalidated)
        except RuleError as exc:
            raise DustError(f"the rules of {a.rules} are not applied: {exc}") from None
    return book, [r for sr in book.sites.values() for r in sr.rules]


def cmd_canonize(a: argparse.Namespace) -> int:
    from dustbuster.core.canonize import Redundancy

    book, rules = _book(a, a.unvalidated)
    unchecked = [r for r in rules if r.status != "valid"]
    if unchecked and not a.quiet:
        sys.stderr.write(f"warning: applying {len(unchecked)} rules that are not validated (--unvalidated)\n")
    changed: Counter = Counter()
    before: set[str] = set()
    after: set[str] = set()
    n = unconverged = 0
    out = open(a.output, "w", encoding="utf-8") if a.output else sys.stdout
    for raw in sys.stdin.buffer:
        url = raw.decode("utf-8", "replace").strip()
        if not url:
            continue
        n += 1
        res = book.canonize(url, a.site)
        unconverged += not res.converged
        changed.update(set(res.rules))
        before.add(url)
        after.add(res.canonical)
        if a.json:
            out.write(json.dumps(res.to_json(), ensure_ascii=False) + "\n")
        else:
            out.write(f"{url}\t{res.canonical}\n" if a.tsv else res.canonical + "\n")
    if a.output:
        out.close()
    red = Redundancy(n, len(before), len(after))
    if not a.quiet:
        sys.stderr.write(
            f"{n} URLs, {red.unique_before} unique before, {red.unique_after} after canonization: "
            f"discovered redundancy {red.discovered_redundancy:.1%} ({len(rules)} rules"
            + (f" of {len(book.sites)} sites" if a.from_topic else "")
            + (f"; {unconverged} stopped at MA={a.ma}" if unconverged else "")
            + ")\n"
        )
        if unchecked:
            sys.stderr.write("URLs changed by each rule (not validated: check before you trust them):\n")
            for r in rules:
                sys.stderr.write(f"{changed[r.text]:>8}  {r.text}  [{r.status}]\n")
    return 0


def _print_set(site: str, doc: dict | None) -> None:
    """One line of ``dustbuster rules``: the RuleSet (without faust's namespace), or a deletion.
    Always strict JSON: a value JSON cannot hold (Infinity, NaN) is a warning, never printed."""
    line = {"site": site, "deleted": True} if doc is None else {k: v for k, v in doc.items() if k != "__faust"} | {"site": site}
    try:
        text = json.dumps(line, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        sys.stderr.write(f"warning: the rule set of {site} is not printable as JSON ({exc}); skipped\n")
        return
    if has_surrogate(text):  # not UTF-8 text: escape it
        text = json.dumps(line, allow_nan=False)
    print(text, flush=True)


def _print_readable(site: str, doc: dict | None) -> None:
    """A site's rule set for a person: each rule with the evidence of its validation."""
    import time as _time

    if doc is None:
        print(f"{site}: deleted (no valid rules any more)", flush=True)
        return
    try:
        from dustbuster.core.rules import rules_from_document

        rules = rules_from_document(doc)
        stats = doc.get("stats") if isinstance(doc.get("stats"), dict) else {}
        created = doc.get("created")
        when = _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(created)) if isinstance(created, (int, float)) else "?"
        sc = stats.get("set_check") if isinstance(stats.get("set_check"), dict) else {}
        check = (f"; the whole set checked on {sc.get('positives', 0) + sc.get('negatives', 0)} URLs: "
                 f"{sc.get('positives', 0)} same page, {sc.get('negatives', 0)} not") if sc else ""
        print(f"{site}  v{doc.get('version')}  published {when}: {len(rules)} rules"
              f" ({stats.get('fetches', '?')} pages fetched{check})", flush=True)
        for k, r in enumerate(rules, 1):
            ev = r.evidence if isinstance(r.evidence, dict) else {}
            print(f"  {k:>3}. {r.text}", flush=True)
            line = (f"       status {r.status}: {ev.get('positives', '?')} same page / {ev.get('negatives', '?')} not, "
                    f"changes {ev.get('applicable', '?')} test URLs, support {r.support}")
            print(line, flush=True)
            samples = [x for x in ev.get("samples") or [] if isinstance(x, list) and len(x) >= 2]
            if samples:
                print(f"       e.g. {samples[0][0]}  ->  {samples[0][1]}", flush=True)
    except (DustError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        sys.stderr.write(f"warning: the rule set of {site} cannot be shown ({exc}); skipped\n")


def cmd_rules(a: argparse.Namespace) -> int:
    from dustbuster.core.rulebook import RuleBook
    from dustbuster.stream.rulesview import TopicFollower

    s = _settings(a)
    want = a.site.lower() if a.site else None
    found: dict[str, dict] = {}
    check = RuleBook()

    def show(site: str, doc: dict | None) -> None:
        if want and site != want:
            return
        check.update(site, doc)  # a set the workers would refuse raises: skipped, the previous one stays
        if doc is None:
            found.pop(site, None)
        else:
            found[site] = doc
        if follower.ready.is_set():
            show_set(site, doc)

    show_set = _print_set if a.json else _print_readable
    follower = TopicFollower(s.kafka_bootstrap, s.rules_topic, show)

    async def run() -> None:
        await follower.start(wait_s=5.0)
        try:
            while not follower.ready.is_set():
                await follower.poll()
            for site, doc in sorted(found.items()):
                show_set(site, doc)
            if want and want not in found and not a.follow:
                raise DustError(f"no rule set for site {want!r} on {s.rules_topic}")
            if a.follow:
                await follower.run()
        finally:
            await follower.stop()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    from dustbuster.core.export import to_clearurls_json, to_nutch_xml
    from dustbuster.core.rules import rules_from_document

    site = a.site.lower()
    if a.from_topic:
        sets = _topic_sets(a)
        if site not in sets:
            raise DustError(f"no rule set for site {site!r} on the rules topic (dustbuster rules lists them)")
        doc = sets[site]
    else:
        doc = _read_doc(a.rules)
    rules = [r for r in rules_from_document(doc) if a.unvalidated or r.status == "valid"]
    if len(rules) < len(rules_from_document(doc)) and not a.quiet:
        sys.stderr.write(f"note: {len(rules_from_document(doc)) - len(rules)} rules are not validated and are not "
                         "exported (--unvalidated exports them)\n")
    version = doc.get("version")
    if a.to == "nutch":
        text = to_nutch_xml(site, rules, version)
    elif a.to == "clearurls":
        text = to_clearurls_json(site, rules, version)
    else:
        text = json.dumps({"schema": "dustbuster/ruleset@1", "site": site, "version": version,
                           "rules": [r.to_json() for r in rules]}, indent=1, ensure_ascii=False) + "\n"
    if a.output:
        Path(a.output).write_text(text, encoding="utf-8")
        if not a.quiet:
            sys.stderr.write(f"wrote {len(rules)} rules of {site} to {a.output} ({a.to})\n")
    else:
        sys.stdout.write(text)
    return 0


def cmd_frontier(a: argparse.Namespace) -> int:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    from dustbuster.stream.rulesview import topic_partitions

    s = _settings(a)
    site = a.site.lower()
    fh = sys.stdin if a.urls == "-" else open(a.urls, encoding="utf-8", errors="replace")
    urls = [u.strip() for u in fh if u.strip()]

    async def run() -> list[dict]:
        from dustbuster.stream.admin import ensure_topics

        await ensure_topics(s)  # our partitions, leaders elected: no auto-creation noise
        c = None
        if a.wait:  # note where the answers will start before asking
            c = AIOKafkaConsumer(bootstrap_servers=s.kafka_bootstrap, group_id=None, enable_auto_commit=False)
            await c.start()
            tps = [TopicPartition(s.canonical_topic, p) for p in await topic_partitions(s.kafka_bootstrap, s.canonical_topic, 10)]
            if not tps:
                await c.stop()
                raise DustError(f"no topic {s.canonical_topic}: is a worker running?")
            c.assign(tps)
            for tp, off in (await c.end_offsets(tps)).items():
                c.seek(tp, off)
        p = AIOKafkaProducer(bootstrap_servers=s.kafka_bootstrap, acks="all", enable_idempotence=True)
        await p.start()
        try:
            for i in range(0, len(urls), a.batch):
                await p.send_and_wait(s.frontier_topic, json.dumps({"urls": urls[i:i + a.batch]}).encode(),
                                      key=site.encode())
        finally:
            await p.stop()
        answers: list[dict] = []
        if c is None:
            return answers
        want = set(urls)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + a.timeout
        try:
            while len(answers) < len(urls) and loop.time() < deadline:
                for msgs in (await c.getmany(timeout_ms=500)).values():
                    for m in msgs:
                        try:
                            d = json.loads(m.value)
                        except (TypeError, ValueError):
                            continue
                        if d.get("url") in want and (m.key or b"").decode("utf-8", "replace") in (site, d.get("site")):
                            answers.append(d)
                            print(f"{'seen' if d.get('seen') else 'new'}\t{d['url']}\t{d['canonical']}", flush=True)
        finally:
            await c.stop()
        if len(answers) < len(urls):
            raise DustError(f"{len(answers)} of {len(urls)} answers within {a.timeout:.0f}s: is a worker running?")
        return answers

    answers = asyncio.run(run())
    if not a.quiet:
        dup = sum(1 for d in answers if d.get("seen"))
        sys.stderr.write(f"sent {len(urls)} URLs of {site} to {s.frontier_topic}"
                         + (f"; {len(answers)} answers, {dup} already seen\n" if a.wait else "\n"))
    return 0
