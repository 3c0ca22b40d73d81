"""Every site's current rule set, compiled, and the canonicalization a crawler asks for (issue 5).

A :class:`RuleBook` maps a site (the key of the rules topic) to its :class:`SiteRules`: the RuleSet
document (docs/topics.md), its version, and a compiled :class:`~dust.canonize.Canonizer` over
its rules in canonization order (thesis Figure 5.5, MA iterations).  Rules whose status is
``invalid`` are never applied.

Which site a URL belongs to (our choice; docs/canonizer.md): the site named by the caller (the
frontier topic's key, the API's ``site`` field); else the URL's host, then its parent domains
(``a.b.forum.test`` → ``b.forum.test`` → ``forum.test``), first one with a rule set wins.  A site's
rules are learned from its own URLs, which may span several hosts (``www.forum.test`` and
``forum.test`` when a rule ``^http://www.`` → ``^http://`` holds), so the parent-domain walk finds
them.  A URL of no known site gets only the normalization.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping

from .canonize import Canonizer
from .errors import RuleError
from .normalize import normalize_or_keep
from .rules import Rule, rules_from_document

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Canonicalized:
    url: str
    canonical: str
    site: str | None
    rules: tuple[str, ...]  #: the display form of each rule that changed the URL, in order
    version: int | None  #: the site's rule-set version (None: no rule set)
    normalized: bool  #: False when normalization was on but the URL could not be parsed
    converged: bool = True

    def to_json(self) -> dict:
        return {"url": self.url, "canonical": self.canonical, "site": self.site, "rules": list(self.rules),
                "version": self.version, "normalized": self.normalized, "converged": self.converged}


@dataclass(frozen=True)
class SiteRules:
    site: str
    version: int
    rules: tuple[Rule, ...]
    doc: Mapping[str, Any] = field(compare=False, hash=False)
    canonizer: Canonizer = field(compare=False, hash=False, repr=False, default=None)  # type: ignore[assignment]
    texts: tuple[str, ...] = field(compare=False, hash=False, repr=False, default=())  #: display form per rule

    @classmethod
    def from_document(cls, site: str, doc: Mapping[str, Any], ma: int = 10, include_invalid: bool = False) -> "SiteRules":
        """Parse a RuleSet document (docs/ruleset.schema.json) or a ``mine --json`` one; raises
        RuleError with the reason.  Rules whose status is ``invalid`` are left out unless asked."""
        rules = tuple(r for r in rules_from_document(doc) if include_invalid or r.status != "invalid")
        try:
            version = int(doc.get("version", 0) or 0)
        except (TypeError, ValueError):
            raise RuleError("'version' must be an integer") from None
        return cls(site, version, rules, dict(doc), Canonizer(rules, ma), tuple(r.text for r in rules))


class RuleBook:
    """Site → current compiled rule set.  Not thread-safe; one per event loop."""

    def __init__(self, ma: int = 10, normalize: bool = True) -> None:
        self.ma = ma
        self.normalize = normalize
        self.sites: dict[str, SiteRules] = {}
        self.bad = 0

    def update(self, site: str, doc: Mapping[str, Any] | None, include_invalid: bool = False) -> SiteRules | None:
        """Apply a rules-topic record: a RuleSet document, or None (a tombstone) to drop the site.
        A malformed document raises RuleError and leaves the site's current set in place."""
        site = site.lower()
        if doc is None:
            self.sites.pop(site, None)
            return None
        try:
            sr = SiteRules.from_document(site, doc, self.ma, include_invalid)
        except RuleError:
            self.bad += 1
            raise
        self.sites[site] = sr
        return sr

    def site_for(self, url: str, site: str | None = None) -> SiteRules | None:
        if site:
            return self.sites.get(site.lower())
        host = _host(url)
        while host:
            sr = self.sites.get(host)
            if sr is not None:
                return sr
            dot = host.find(".")
            host = host[dot + 1:] if dot >= 0 else ""
        return None

    def canonicalize(self, url: str, site: str | None = None, normalize: bool | None = None) -> Canonicalized:
        ok = True
        u = url
        if self.normalize if normalize is None else normalize:
            u, ok = normalize_or_keep(url)
        sr = self.site_for(u, site)
        if sr is None:
            return Canonicalized(url, u, site.lower() if site else None, (), None, ok)
        res = sr.canonizer.canonize(u)
        return Canonicalized(url, res.url, sr.site, tuple(sr.texts[i] for i in res.applied), sr.version, ok,
                             res.converged)


def _host(url: str) -> str:
    """The lower-case host of an absolute URL, without port or user info ('' when none)."""
    s = url.find("://")
    if s < 0:
        return ""
    rest = url[s + 3:]
    end = len(rest)
    for c in "/?#":
        k = rest.find(c)
        if 0 <= k < end:
            end = k
    auth = rest[:end].rpartition("@")[2]
    if auth.startswith("["):
        return auth[: auth.find("]") + 1].lower()
    return auth.split(":", 1)[0].lower()
