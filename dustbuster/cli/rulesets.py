"""Rule sets for the commands that apply or show them (canonize, rules, export): every site's
current set on the rules topic, and the rules of a rule file that may be applied."""

from __future__ import annotations

import argparse
import sys

from dustbuster.core.errors import DustError, RuleError
from dustbuster.core.params import DustParams

from .common import settings as kafka_settings


def topic_sets(a: argparse.Namespace, keys: dict[str, bytes] | None = None) -> dict[str, dict]:
    """Every site's current rule set on the rules topic, as a worker holds it: a record the rule
    book refuses (dustbuster.stream.rulesview's strict decoding: Infinity, NaN, 1e400, deep nesting...; then
    dustbuster.core.canon.admission, with DUST_TRUSTED_KEYS the signature) is skipped with a warning, and its
    site keeps its previous set.  ``keys``: the trusted keys (default: DUST_TRUSTED_KEYS)."""
    import asyncio

    from dustbuster.core.canon.rulebook import RuleBook
    from dustbuster.stream.consume import latest_by_key

    s = kafka_settings(a)
    check = RuleBook(getattr(a, "ma", DustParams().ma), keys=s.public_keys if keys is None else keys,
                     max_skew_s=s.max_version_skew_s)
    # check.update raises for a set the workers would not apply: latest_by_key skips it
    return asyncio.run(latest_by_key(s.kafka_bootstrap, s.rules_topic, check.update))


def trusted(a: argparse.Namespace) -> dict[str, bytes]:
    """The trusted public keys of a command: its ``--trusted-key`` options, else DUST_TRUSTED_KEYS."""
    from dustbuster.core.model.signing import trusted_keys

    given = getattr(a, "trusted_key", None)
    return trusted_keys(given) if given else kafka_settings(a).public_keys


def verified(doc: dict, keys: dict[str, bytes], path: str) -> None:
    """A rule file's document checked against the trusted keys (nothing to check without keys),
    before any of its rules is left out (that would change what was signed); DustError otherwise."""
    from dustbuster.core.model.signing import verify_document

    if keys:
        try:
            verify_document(doc, keys)
        except RuleError as exc:
            raise DustError(f"the rules of {path} are not applied: {exc}") from None


def valid_only(doc: dict, unvalidated: bool) -> tuple[dict, int]:
    """The document with only its ``valid`` rules (all of them when ``unvalidated``), and how
    many were left out."""
    from dustbuster.core.model.rules import rules_from_document

    rules_from_document(doc)  # a malformed rule is an error, whatever its status
    if unvalidated:
        return doc, 0
    out, skipped = dict(doc), 0
    for key in ("rules", "param_rules"):
        if isinstance(doc.get(key), list):
            out[key] = [r for r in doc[key] if isinstance(r, dict) and r.get("status") == "valid"]
            skipped += len(doc[key]) - len(out[key])
    return out, skipped


def screened(site: str, doc: dict, ma: int, quiet: bool) -> dict:
    """Unvalidated rules that would mangle URLs on their own (dustbuster.core.canon.admission.screen_rules) are left
    out, with a warning each."""
    from dustbuster.core.canon.admission import screen_rules
    from dustbuster.core.model.rules import LEGACY_LISTS, rules_from_document

    try:
        ok, bad = screen_rules(site, rules_from_document(doc), ma)
    except RuleError as exc:
        raise DustError(f"bad rule document: {exc}") from None
    for r, why in bad:
        if not quiet:
            sys.stderr.write(f"warning: not applying {r.text}: {why}\n")
    out = {k: v for k, v in doc.items() if k not in LEGACY_LISTS}
    return out | {"rules": [r.to_json() for r in ok]}  # one list, in canonization order
