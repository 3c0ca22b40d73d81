"""``dustbuster canonize``: URLs from stdin canonized (thesis Fig. 5.5) with a rule file's rules or
every site's current rule set on the rules topic, and the discovered redundancy reported."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from dustbuster.core.errors import WARNING_DETAIL_CHARS, DustError, RuleError
from dustbuster.core.params import DustParams

from .common import read_doc
from .rulesets import screened, topic_sets, trusted, valid_only, verified

EPILOG = """\
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


def add_parser(sub, common) -> argparse.ArgumentParser:
    c = sub.add_parser("canonize", parents=[common], help="canonize URLs from stdin (rule file or rules topic)",
                       description="Canonize URLs (thesis Fig. 5.5) with the rules of a RuleSet or `dustbuster "
                       "mine --json` document, or with every site's current rule set from the rules topic.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    c.add_argument("--trusted-key", action="append", metavar="PUBLIC_KEY",
                   help="apply only rule sets signed by this Ed25519 public key (base64; repeatable, for a rotation; "
                   "default: DUST_TRUSTED_KEYS; docs/canonizer.md \"Signed rule sets\")")
    c.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return c


def run(a: argparse.Namespace) -> int:
    book, rules = _book(a, a.unvalidated)
    unchecked = [r for r in rules if r.status != "valid"]
    if unchecked and not a.quiet:
        sys.stderr.write(f"warning: applying {len(unchecked)} rules that are not validated (--unvalidated)\n")
    out = open(a.output, "w", encoding="utf-8") if a.output else sys.stdout
    try:
        red, changed, unconverged = _canonize_stdin(a, book, out)
    finally:
        if a.output:
            out.close()
    if not a.quiet:
        sys.stderr.write(
            f"{red.urls} URLs, {red.unique_before} unique before, {red.unique_after} after canonization: "
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


def _canonize_stdin(a: argparse.Namespace, book, out):
    """Each URL of stdin canonized and written to ``out``; the discovered redundancy (WWW 2007 §3
    "Metrics", dustbuster.core.canon.canonize.RedundancyCount), the URLs each rule changed, and how many URLs
    stopped at MA."""
    from dustbuster.core.canon.canonize import RedundancyCount

    changed: Counter = Counter()
    count = RedundancyCount()
    unconverged = 0
    for raw in sys.stdin.buffer:
        url = raw.decode("utf-8", "replace").strip()
        if not url:
            continue
        res = book.canonize(url, a.site)
        unconverged += not res.converged
        changed.update(set(res.rules))
        count.add(url, res.canonical)
        if a.json:
            out.write(json.dumps(res.to_json(), ensure_ascii=False) + "\n")
        else:
            out.write(f"{url}\t{res.canonical}\n" if a.tsv else res.canonical + "\n")
    return count.result(), changed, unconverged


def _book(a: argparse.Namespace, unvalidated: bool):
    """A rule book (site → rules) from --rules or --from-topic, and every rule in it."""
    from dustbuster.core.canon.rulebook import RuleBook

    normalize = a.normalize if a.normalize is not None else bool(a.from_topic)
    book = RuleBook(a.ma, normalize)
    keys = trusted(a)
    if a.from_topic:
        for site, doc in topic_sets(a, keys).items():
            try:
                book.update(site, doc)
            except Exception as exc:  # noqa: BLE001 - whatever a record on the topic holds, the other sites still apply
                text = str(exc)[:WARNING_DETAIL_CHARS]
                sys.stderr.write(f"warning: skipping the rule set of {site}: {type(exc).__name__}: {text}\n")
        return book, [r for sr in book.sites.values() for r in sr.rules]
    doc = read_doc(a.rules)
    verified(doc, keys, a.rules)
    named = doc.get("site") if isinstance(doc.get("site"), str) else None
    # every URL gets the file's rules, under the site the file names (a set is bound to its site)
    a.site = (named or a.site or "rules-file").lower()
    doc, skipped = valid_only(doc, unvalidated)
    if unvalidated:
        doc = screened(a.site, doc, a.ma, a.quiet)
    if skipped and not a.quiet:
        sys.stderr.write(f"note: {skipped} rules of {a.rules} are not validated and are not applied "
                         "(--unvalidated applies them)\n")
    try:
        book.update(a.site, doc, unvalidated)
    except RuleError as exc:
        raise DustError(f"the rules of {a.rules} are not applied: {exc}") from None
    return book, [r for sr in book.sites.values() for r in sr.rules]
