"""``dustbuster validate``: mine a log and validate the candidates against the live site, without
Kafka — the same code path as the validator agent (dustbuster.sitevalidation.validate_site: WWW 2007
Figures 3–4, then the set-level checks of dustbuster.core.validation.setcheck) and the same RuleSet JSON.
It loads no Faust and no Kafka client."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from dustbuster.core.errors import DustError

from . import progress as prog
from .common import add_params, add_url_lists, nothing_read_hint, params as dust_params, read_url_lists

EPILOG = """\
examples:
  dustbuster validate access.log --site www.example.com --sites sites.json -o rules.json
  cut -f1 urls.txt | dustbuster canonize --rules rules.json      # then apply the valid rules
sites.json names, per site, the origins that may be fetched, e.g.
  {"www.example.com": {"origins": ["https://www.example.com"], "rate_per_s": 5, "concurrency": 2}}
(loopback or private addresses only with "allow_private": true; "resolve" pins host names).
The fetch policy is the validator's: only those origins, robots.txt, rate and size limits.
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    v = sub.add_parser("validate", parents=[common], help="mine a log and validate the rules against the live site",
                       description="Mine likely rules from the logs (as `mine`), then fetch sample pages of the "
                       "site to decide each rule (WWW 2007 Figures 3-4) and check the set as a whole (no growing "
                       "or self-feeding rules, convergence, the composed canonicalization fetched and compared). "
                       "Writes a RuleSet JSON document of the valid rules, like the validator agent publishes.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("logs", nargs="+", metavar="LOG", help="log files (.gz ok; - for stdin)")
    v.add_argument("--site", required=True, help="the site: its key in --sites, and the host of lines that carry none")
    v.add_argument("--sites", required=True, metavar="SITES.json", help="fetch policy per site (origins, rate, ...)")
    v.add_argument("-o", "--output", metavar="RULES.json", help="write the RuleSet here (default: stdout)")
    v.add_argument("--sign-key", metavar="KEY.pem", help="sign the RuleSet with this Ed25519 private key "
                   "(`dustbuster keys`; default: DUST_SIGN_KEY_FILE, unsigned without one)")
    v.add_argument("--scheme", default="http", choices=("http", "https"), help="scheme for lines without one")
    v.add_argument("--format", default="auto", help="log format (default auto; see `mine --help`)")
    v.add_argument("--candidates", metavar="CANDIDATES.json", action="append", default=[],
                   help="more candidate rules to decide with the mined ones (e.g. `dustbuster learn propose`'s "
                   "output): the same Figure 3 sampling and set-level checks; repeatable")
    v.add_argument("--seed", type=int, default=0, help="sampling seed of Figure 3 (default %(default)s)")
    # the old name of --sketch-threshold (add_params), still accepted: the same value, hidden
    v.add_argument("--sketch-min-equal", type=float, dest="sketch_threshold", default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)
    add_url_lists(v)
    add_params(v)
    return v


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.mining.mine import mine
    from dustbuster.logs.record import Limits
    from dustbuster.logs.reader import read_urllist
    from dustbuster.sitevalidation import SiteCandidates, configured_policy, validate_site
    from dustbuster.stream.settings import Settings

    params = dust_params(a)
    site = a.site.lower()
    policy = configured_policy(Path(a.sites), site)  # the sites file, read once
    settings = Settings(params=params)  # validate_site reads its parameters (sketch_threshold among them)
    show = prog.enabled(a.quiet)
    t0 = time.perf_counter()
    ul, read_stats = read_urllist(a.logs, a.format, site, a.scheme, limits=Limits())
    read_url_lists(ul, a.urls, site, a.scheme)
    if not len(ul) and not ul.listed:
        raise DustError(nothing_read_hint(a.logs, read_stats.to_dict()))
    result = mine(ul, params)
    pairs, prules = result.kept, [*result.param_rules(), *result.general]
    extra = extra_candidates(a.candidates)

    def remine(valid):  # the log as the valid rules see it, mined again (dustbuster.sitevalidation.canonical_round)
        from dustbuster.core.canon.canonlist import canonized_list

        forms = canonized_list(ul, valid, params.ma)
        again = mine(forms, params)
        return SiteCandidates(again.kept, [*again.param_rules(), *again.general], forms.test_urls(),
                              logged_errors=list(forms.errors))

    bar = _VerdictBar(len(pairs) + len(prules) + len(extra), show)
    try:
        cands = SiteCandidates(pairs, prules, ul.test_urls(), extra=extra, logged_errors=list(ul.errors))
        sv = asyncio.run(validate_site(cands, policy, settings, on_verdict=bar, remine=remine))
    finally:
        bar.close()
    if sv is None:
        raise DustError(f"{site}: no origin answers ({', '.join(sorted(policy.origins))}): nothing decided")
    from dustbuster.core.model.rules import ruleset_document

    stats = sv.stats(len(pairs) + len(prules) + len(extra)) | {"urls": len(ul), "listed_urls": len(ul.listed), "seconds": round(time.perf_counter() - t0, 3)}
    if extra:
        stats["extra_candidates"] = extra_verdicts(extra, sv)
    # the version the validator agent would give a first set: its publish time in ms (dustbuster.core.model.ruleversion)
    doc = ruleset_document(site, int(time.time() * 1000), [r.to_json() | {"validated_at": round(time.time(), 3)} for r in sv.rules],
                           created=time.time(), stats=stats)
    doc = _signed(a, doc)
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if a.output:
        Path(a.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if not a.quiet:
        _summary(site, doc, a.output, sys.stderr)
    return 0


def _signed(a: argparse.Namespace, doc: dict) -> dict:
    """``doc`` signed with --sign-key (or DUST_SIGN_KEY_FILE), as the validator agent signs; as it is without a key."""
    from dustbuster.core.model.signing import sign_document
    from dustbuster.stream.settings import Settings, read_signing_key

    key = read_signing_key(Path(a.sign_key)) if a.sign_key else Settings.from_env().signing_key
    return doc if key is None else sign_document(doc, key)


def extra_candidates(paths: list[str]) -> list:
    """The rules of candidate documents (any status: each is decided again here), in file order."""
    from .common import read_rules

    out = []
    for path in paths:
        _doc, rules = read_rules(path, "candidates file")
        for r in rules:
            if r.type in ("substring", "pattern") and len(r.beta) > len(r.alpha):
                sys.stderr.write(f"note: {path}: not deciding {r.text}: it lengthens URLs (only the miner's "
                                 "candidates get the check for unobserved outputs that such a rule needs)\n")
                continue
            out.append(replace(r, status="likely"))
    return out


def extra_verdicts(extra: list, sv) -> list[dict]:
    """What became of each --candidates rule: its verdict (valid/invalid/undecided and why), or
    "covered" (the rules found valid before it already do what it does) — for the reader."""
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    covered = {r.text for r in sv.result.covered}
    published = {r.text for r in sv.rules}
    out = []
    for r in extra:
        v = verdicts.get(r.text)
        row = {"rule": r.text, "support": r.support}
        if v is None:
            row["outcome"] = "covered" if r.text in covered else "not decided"
        else:
            row |= {"outcome": "valid" if v.valid and r.text in published else "dropped by the set checks" if v.valid
                    else "invalid" if v.valid is False else "undecided", "reason": v.reason,
                    "positives": v.positives, "negatives": v.negatives, "applicable": v.applicable}
        out.append(row)
    return out


class _VerdictBar:
    """A progress bar over the rules to decide, with the fetches and their rate."""

    def __init__(self, total: int, on: bool) -> None:
        self.bar = None
        self.t0 = time.perf_counter()
        self.counts = {"valid": 0, "invalid": 0, "undecided": 0}
        self.fetches = 0
        if on:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="rules decided", unit="rule", file=sys.stderr, leave=False)

    def __call__(self, v) -> None:
        self.counts["undecided" if v.valid is None else "valid" if v.valid else "invalid"] += 1
        self.fetches += v.fetches
        if self.bar is not None:
            rate = self.fetches / max(time.perf_counter() - self.t0, 1e-6)
            self.bar.set_postfix_str(f"{self.counts['valid']} valid, {self.fetches} fetches, {rate:.0f}/s")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _summary(site: str, doc: dict, output: str | None, out) -> None:
    st = doc["stats"]
    sc = st["set_check"]
    listed = f" + {st['listed_urls']} listed (--urls)" if st.get("listed_urls") else ""
    out.write(f"{site}: {st['urls']} URLs{listed}, {st['candidates']} candidates → {st['valid']} valid rules "
              f"({st['fetches']} pages fetched, {st['fetches_per_decided_rule']} per decided rule, "
              f"{st['undecided']} undecided, {st['seconds']:.1f}s)\n")
    verdict = {True: "passed", False: "refuted", None: "undecided"}[sc["passed"]]
    out.write(f"set-level check {verdict}: {sc['positives']} of {sc['positives'] + sc['negatives']} sampled URLs show "
              f"the same page as their canonical form; {len(sc['dropped'])} rules dropped by the set checks\n")
    sig = st.get("identity_signals") or {}
    if sig:
        turned = sum(n for k, n in sig.items() if k.startswith("positive_turned_negative:"))
        declared = sum(1 for r in doc["rules"] if (r.get("evidence") or {}).get("source") == "declared")
        out.write(f"page identity: {sig.get('soft_errors', 0)} soft-error pages ({sig.get('probes', 0)} probes), "
                  f"{sum(n for k, n in sig.items() if k.startswith('pairs_skipped:'))} pairs skipped as no evidence, "
                  f"{turned} positives turned negative (title or declared canonical), "
                  f"{sig.get('positive_by_redirect', 0)} positives by redirect; {sig.get('declared_pairs', 0)} declared "
                  f"pairs → {sig.get('declared_candidates', 0)} candidates, {declared} published\n")
    again = {k: n for k, n in sig.items() if k.startswith(("narrowed_after_refutation", "one_page_after_canonical_forms"))}
    if again:
        narrowed = again.get("narrowed_after_refutation", 0) + again.get("narrowed_after_refutation:valid", 0)
        out.write(f"decided again: {narrowed} refuted query rules narrowed to keep the "
                  f"parameters their negatives carried ({sig.get('narrowed_after_refutation:valid', 0)} valid), "
                  f"{sig.get('one_page_after_canonical_forms', 0) + sig.get('one_page_after_canonical_forms:valid', 0)} "
                  f"one-page rules under the valid rules' canonical forms "
                  f"({sig.get('one_page_after_canonical_forms:valid', 0)} valid)\n")
    if st.get("made_samples") or st.get("made_skipped"):
        out.write(f"made samples: {st['made_samples']} made URLs compared, {st.get('made_skipped', 0)} skipped "
                  "(rare remove-parameter rules, docs/validation.md)\n")
    for r in doc["rules"]:
        ev = r["evidence"]
        made = f", {ev['made_samples']} of them made" if ev.get("made_samples") else ""
        out.write(f"  {r['display']}   +{ev.get('positives')}/-{ev.get('negatives')}{made}, changes {ev.get('applicable')} URLs\n")
    if output:
        out.write(f"wrote {output}; apply it with: dustbuster canonize --rules {output}\n")


__all__ = ["add_parser", "run"]
