"""``dustbuster export``: one site's rules in a format crawlers already read (Nutch
regex-normalize.xml, ClearURLs provider JSON: dustbuster.core.report.export) or as a RuleSet document
(dustbuster.core.model.rules.ruleset_document)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dustbuster.core.report.crawlerexport import FORMATS as MORE_FORMATS
from dustbuster.core.report.crawlerexport import NUTCH_SCOPES, STORM_PACKAGES
from dustbuster.core.errors import DustError
from dustbuster.core.report.export import FORMATS

from .common import read_doc
from .rulesets import topic_sets, trusted, verified

EPILOG = """\
examples:
  dustbuster export --from-topic --site forum.test --to nutch > regex-normalize.xml
  dustbuster export --rules rules.json --site forum.test --to clearurls -o dust.clearurls.json
  dustbuster export --rules rules.json --site forum.test --to heritrix -o dust-canon-beans.xml
  dustbuster export --rules rules.json --site forum.test --to stormcrawler --storm-package legacy -o urlfilters.json
  dustbuster export --rules rules.json --site forum.test --to nutch-site --regex-file regex-normalize-forum.xml
  dustbuster export --rules rules.json --site forum.test --to clean-param >> robots.txt
Nutch: set urlnormalizer.loop.count to 10 (MA) so the list repeats like thesis Figure 5.5.
ClearURLs holds only parameter removals; other rules are listed under "x-dustbuster".skipped.
Heritrix and StormCrawler apply their lists once: the export repeats them MA times.
Heritrix: import the file from the job's crawler-beans.cxml and give the RulesCanonicalizationPolicy
its list (<property name="rules" ref="dustbusterRules"/>): the file's header shows both lines.
StormCrawler: 3.0 and later read org.apache.stormcrawler class names; --storm-package legacy writes
the com.digitalpebble.stormcrawler names of the releases before (1.x, 2.x).
ClearURLs rewrites the whole query of a URL it cleans (encodeURIComponent): decode before keying.
Every format lists what it cannot say, with the reason (docs/exports.md); a rule under a query-parameter
scope (remove returnto=* under /index.php?title=Special:UserLogin) is skipped by every format, never widened.
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    e = sub.add_parser("export", parents=[common], help="write a site's rules for Nutch, Heritrix, StormCrawler, ClearURLs or robots.txt",
                       description="Write one site's rules in a format crawlers already read: Apache Nutch's "
                       "regex-normalize.xml (urlnormalizer-regex), ClearURLs provider JSON (parameter "
                       "removals), or our RuleSet JSON.", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--to", required=True, choices=FORMATS + MORE_FORMATS,
                   help="output format: Nutch regex-normalize.xml, ClearURLs provider JSON, our RuleSet JSON, "
                   "Heritrix RegexRule beans, StormCrawler urlfilters.json, nutch-site.xml properties per "
                   "normalizer scope, robots.txt Clean-param lines (--format is the log format in mine/feed)")
    e.add_argument("--regex-file", default="", help="nutch-site: the regex file's name (default "
                   "regex-normalize-SITE.xml)")
    e.add_argument("--nutch-scopes", default=",".join(NUTCH_SCOPES),
                   help="nutch-site: the normalizer scopes given the file (default %(default)s)")
    e.add_argument("--storm-package", choices=tuple(STORM_PACKAGES), default="apache",
                   help="stormcrawler: the class names of StormCrawler 3.0 and later (apache: org.apache.stormcrawler, "
                   "the default) or of the releases before (legacy: com.digitalpebble.stormcrawler)")
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument("--rules", metavar="RULES.json", help="rule file (RuleSet or mine --json output)")
    src.add_argument("--from-topic", action="store_true", help="the site's current rule set from the rules topic")
    e.add_argument("--site", required=True, help="the site whose rules to export")
    e.add_argument("-o", "--output", help="write here instead of stdout")
    e.add_argument("--unvalidated", action="store_true",
                   help="also export rules that are not validated (status 'likely' or 'invalid')")
    e.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return e


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.model.rules import rules_from_document

    site = a.site.lower()
    if a.from_topic:
        sets = topic_sets(a)
        if site not in sets:
            raise DustError(f"no rule set for site {site!r} on the rules topic (dustbuster rules lists them)")
        doc = sets[site]
    else:
        doc = read_doc(a.rules)
        verified(doc, trusted(a), a.rules)  # with DUST_TRUSTED_KEYS, as the workers would apply it
    every = rules_from_document(doc)
    rules = [r for r in every if a.unvalidated or r.status == "valid"]
    if len(rules) < len(every) and not a.quiet:
        sys.stderr.write(f"note: {len(every) - len(rules)} rules are not validated and are not "
                         "exported (--unvalidated exports them)\n")
    if a.to in MORE_FORMATS:
        from dustbuster.core.report.crawlerexport import render

        text = render(a.to, site, rules, doc.get("version"), a.regex_file, [s for s in a.nutch_scopes.split(",") if s],
                      a.storm_package, Path(a.output).name if a.output else "")
    else:
        text = _render(a.to, site, rules, doc.get("version"))
    if a.output:
        Path(a.output).write_text(text, encoding="utf-8")
        if not a.quiet:
            left = _skipped_count(a.to, rules)
            part = _partly_count(a.to, rules)
            notes = ([f"{left} skipped"] if left else []) + ([f"{part} partly covered"] if part else [])
            said = f"{len(rules) - left} of {len(rules)} rules" + (f" ({', '.join(notes)}: the file says which and why)"
                                                                      if notes else "")
            what = "the site file" if a.to == "nutch-site" else said
            sys.stderr.write(f"wrote {what} of {site} to {a.output} ({a.to})\n")
    else:
        sys.stdout.write(text)
    return 0


def _skipped_count(fmt: str, rules: list) -> int:
    """How many of ``rules`` the format cannot say exactly (the file lists them with the reason)."""
    if fmt in ("nutch", "clearurls"):
        from dustbuster.core.report.export import unexported

        return len(unexported(rules, fmt))
    if fmt in ("heritrix", "stormcrawler", "clean-param"):
        from dustbuster.core.report.crawlerexport import skipped

        return len(skipped(rules, fmt))
    return 0


def _partly_count(fmt: str, rules: list) -> int:
    """How many written rules the format covers only in part (Clean-param: a scope's own page,
    the file's ``# partly:`` lines)."""
    if fmt != "clean-param":
        return 0
    from dustbuster.core.report.crawlerexport import uncovered_pages

    return len(uncovered_pages(rules))


def _render(fmt: str, site: str, rules: list, version) -> str:
    if fmt == "nutch":
        from dustbuster.core.report.export import to_nutch_xml

        return to_nutch_xml(site, rules, version)
    if fmt == "clearurls":
        from dustbuster.core.report.export import to_clearurls_json

        return to_clearurls_json(site, rules, version)
    import json

    from dustbuster.core.model.rules import ruleset_document

    doc = ruleset_document(site, version, [r.to_json() for r in rules])
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
