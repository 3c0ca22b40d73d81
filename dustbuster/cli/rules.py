"""``dustbuster rules``: each site's current rule set on the compacted rules topic, with the
evidence of its validation (or one RuleSet JSON document a line), and with --follow each new
version as it is published."""

from __future__ import annotations

import argparse
import json
import sys

from dustbuster.core.errors import DustError
from dustbuster.core.strictjson import has_surrogate

from .common import settings as kafka_settings

EPILOG = """\
examples:
  dustbuster rules                          # every site's current rule set, with evidence
  dustbuster rules --site forum.test --follow   # then each new version as it is published
  dustbuster rules --json                   # one RuleSet JSON document a line
A tombstone (the site lost its rules) prints "site: deleted" ({"site": ..., "deleted": true} with --json).
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    r = sub.add_parser("rules", parents=[common], help="print the current validated rule sets",
                       description="Read the compacted rules topic from the start and print each site's current "
                       "rule set: each rule with its evidence (positives/negatives of its validation, test URLs it "
                       "changes, a sample pair), or with --json one RuleSet document a line; with --follow keep "
                       "printing new versions.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--site", help="only this site")
    r.add_argument("--follow", action="store_true", help="keep following the topic (Ctrl-C to stop)")
    r.add_argument("--json", action="store_true", help="one RuleSet JSON document a line (for programs)")
    r.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return r


def run(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.core.canon.rulebook import RuleBook
    from dustbuster.stream.rulesview import TopicFollower

    s = kafka_settings(a)
    want = a.site.lower() if a.site else None
    found: dict[str, dict] = {}
    check = RuleBook(keys=s.public_keys, max_skew_s=s.max_version_skew_s)  # as the workers admit
    show_set = _print_set if a.json else _print_readable

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

    follower = TopicFollower(s.kafka_bootstrap, s.rules_topic, show)

    async def follow() -> None:
        await follower.start(wait_s=5.0)
        try:
            await follower.read_to_end()
            for site, doc in sorted(found.items()):
                show_set(site, doc)
            if want and want not in found and not a.follow:
                raise DustError(f"no rule set for site {want!r} on {s.rules_topic}")
            if a.follow:
                await follower.run()
        finally:
            await follower.stop()

    try:
        asyncio.run(follow())
    except KeyboardInterrupt:
        pass
    return 0


def _print_set(site: str, doc: dict | None) -> None:
    """One line of ``dustbuster rules --json``: the RuleSet (without faust's namespace), or a deletion.
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


def _one_page_text(op: dict) -> str:
    """A one-page decision's evidence (core/validation/onepage.py) for a person."""
    ids = op["identity"] if isinstance(op.get("identity"), dict) else {}
    how = ", ".join(f"{k} {n}" for k, n in ids.items())
    return (f"decided on one page {op.get('page', '?')}: {op.get('values', '?')} values of {op.get('parameter', '?')}, "
            f"same page by {how or 'nothing'}" + (f" (not enough: {op['why_not']})" if op.get("why_not") else ""))


def _print_readable(site: str, doc: dict | None) -> None:
    """A site's rule set for a person: each rule with the evidence of its validation."""
    if doc is None:
        print(f"{site}: deleted (no valid rules any more)", flush=True)
        return
    try:
        from dustbuster.core.model.rules import rules_from_document

        rules = rules_from_document(doc)
        print(_set_header(site, doc, len(rules)), flush=True)
        for k, r in enumerate(rules, 1):
            ev = r.evidence if isinstance(r.evidence, dict) else {}
            print(f"  {k:>3}. {r.text}", flush=True)
            line = (f"       status {r.status}: {ev.get('positives', '?')} same page / {ev.get('negatives', '?')} not, "
                    f"changes {ev.get('applicable', '?')} test URLs, support {r.support}")
            print(line, flush=True)
            samples = [x for x in ev.get("samples") or [] if isinstance(x, list) and len(x) >= 2]
            if samples:
                print(f"       e.g. {samples[0][0]}  ->  {samples[0][1]}", flush=True)
            fams = [f for f in ev.get("families") or [] if isinstance(f, dict)]
            if len(fams) > 1:
                print("       by family: " + "; ".join(_family_text(f) for f in fams), flush=True)
            pars = [f for f in ev.get("parameters") or [] if isinstance(f, dict)]
            if pars:
                print("       by parameter: " + "; ".join(_family_text(f) for f in pars), flush=True)
            kept = [x for x in ev.get("untested") or [] if isinstance(x, dict) and x.get("kept")]
            untested = [str(x.get("parameter")) for x in kept if not x.get("negatives")]
            refuting = [f"{x.get('parameter')} ({x.get('negatives')} negatives)" for x in kept if x.get("negatives")]
            if refuted := ", ".join(refuting):
                print("       kept, the refuted rule's negatives carried them (core/validation/narrow.py): " + refuted, flush=True)
            if untested:
                print("       kept, never tested (core/validation/narrow.py): " + ", ".join(untested), flush=True)
            for x in [x for x in ev.get("identities") or [] if isinstance(x, dict)][:1]:
                print("       identity: " + identity_text(x), flush=True)
            if isinstance(ev.get("one_page"), dict):
                print("       " + _one_page_text(ev["one_page"]), flush=True)
            if isinstance(ev.get("made_samples"), int):
                print(f"       made samples (core/validation/madesamples.py): {ev['made_samples']} compared, "
                      f"{ev.get('made_skipped', 0)} skipped (no page)", flush=True)
        stats = doc["stats"] if isinstance(doc.get("stats"), dict) else {}
        for p in stats.get("partial_evidence") or []:
            if isinstance(p, dict):
                fams_text = "; ".join(_family_text(f) for f in p.get("families") or [] if isinstance(f, dict))
                print(f"  undecided, part of the site without evidence: {p.get('rule')}: {fams_text}", flush=True)
    except (DustError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        sys.stderr.write(f"warning: the rule set of {site} cannot be shown ({exc}); skipped\n")


def _ident_side(d: object) -> str:
    """One page's identity evidence in a few words: status, title, canonical, where it redirected."""
    if not isinstance(d, dict):
        return "?"
    parts = [str(d.get("status", "?"))]
    if d.get("title"):
        parts.append(f"title {str(d['title'])[:60]!r}")
    if d.get("canonical"):
        parts.append(f"canonical {d['canonical']}")
    if d.get("chain"):
        parts.append(f"redirected to {d.get('final_url')}")
    return ", ".join(parts)


def identity_text(x: dict) -> str:
    """A sample pair's identity evidence (core/validation/identity.py): ``u: 200, title 'a' | v: … → outcome``."""
    return f"u: {_ident_side(x.get('u'))} | v: {_ident_side(x.get('v'))} → {x.get('outcome', '?')}"


def _family_text(f: dict) -> str:
    """One URL family's evidence: ``http://h/a 1 same page of 360 URLs (needs 2), failed: status_500 5``."""
    fails = f.get("failures") if isinstance(f.get("failures"), dict) else {}
    need = f" (needs {f.get('required')})" if f.get("short") else ""
    why = (", failed: " + ", ".join(f"{k} {n}" for k, n in fails.items())) if fails else ""
    return f"{f.get('family')} {f.get('positives', '?')} same page of {f.get('urls', '?')} URLs{need}{why}"


def _set_header(site: str, doc: dict, n: int) -> str:
    """The first line of a readable rule set: version, when it was published, the set-level check."""
    import time

    stats = doc["stats"] if isinstance(doc.get("stats"), dict) else {}
    created = doc.get("created")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)) if isinstance(created, (int, float)) else "?"
    sc = stats.get("set_check") if isinstance(stats.get("set_check"), dict) else {}
    check = (f"; the whole set checked on {sc.get('positives', 0) + sc.get('negatives', 0)} URLs: "
             f"{sc.get('positives', 0)} same page, {sc.get('negatives', 0)} not") if sc else ""
    return f"{site}  v{doc.get('version')}  published {when}: {n} rules ({stats.get('fetches', '?')} pages fetched{check})"
