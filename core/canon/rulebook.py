"""Every site's current rule set, compiled, and the canonicalization a crawler asks for.

A :class:`RuleBook` maps a site (the key of the rules topic) to its :class:`SiteRules`: the RuleSet
document (docs/topics.md), its version, and a compiled :class:`~dustbuster.core.canon.canonize.Canonizer` over
its rules in canonization order (thesis Figure 5.5, MA iterations).  A set is applied only when
dustbuster.core.canon.admission admits it: every rule ``valid``, a newer version, converging, never off-site.

Which site a URL belongs to (our choice; docs/canonizer.md): the site named by the caller (the
frontier topic's key, the API's ``site`` field); else the URL's host, then its parent domains
(``a.b.forum.test`` → ``b.forum.test`` → ``forum.test``), first one with a rule set wins.  A site's
rules are learned from its own URLs, which may span several hosts (``www.forum.test`` and
``forum.test`` when a rule ``^http://www.`` → ``^http://`` holds), so the parent-domain walk finds
them.  When no site's set is found so, the same walk looks among the aliases the sets' host rules
join to their sites (dustbuster.core.model.hostrules.set_hosts: ``forum.test`` for a set keyed
``www.forum.test`` whose rule maps ``^http://www.forum.test/`` → ``^http://forum.test/``, or the
other way round): an alias never takes a host from a site keyed by it.  A URL of no known site gets
only the normalization.

>>> book = RuleBook()
>>> book.update("forum.test", {"site": "forum.test", "version": 1, "rules": [
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}]}).version
1
>>> book.canonize("http://WWW.forum.test:80/story?id=5&sid=9").canonical   # normalized, then the rules
'http://www.forum.test/story?id=5'
>>> book.canonize("http://other.test/a?sid=9").canonical                   # no rule set: normalized only
'http://other.test/a?sid=9'
>>> book.update("www.wiki.test", {"site": "www.wiki.test", "version": 1, "rules": [
...     {"type": "substring", "alpha": "http://www.wiki.test/", "beta": "http://wiki.test/", "anchor_start": True,
...      "status": "valid"},
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}]}).hosts
('www.wiki.test', 'wiki.test')
>>> book.canonize("http://wiki.test/a?sid=9").canonical                    # an alias of www.wiki.test
'http://wiki.test/a'
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.errors import RuleError, RuleSetRejected
from dustbuster.core.canon.admission import MAX_SKEW_MS, admit_rules
from dustbuster.core.urls.normalize import normalize_or_keep
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.model.hostrules import set_hosts
from dustbuster.core.model.rules import Rule
from dustbuster.core.model.signing import verify_document

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SiteCanonized:
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
    #: the hosts the set covers: the site, then the aliases its host rules join to it
    #: (dustbuster.core.model.hostrules.set_hosts)
    hosts: tuple[str, ...] = field(compare=False, hash=False, repr=False, default=())

    @classmethod
    def from_document(cls, site: str, doc: Mapping[str, Any], ma: int = DEFAULT_MA, unvalidated: bool = False,
                      held_version: int | None = None, **admission: Any) -> "SiteRules | None":
        """Parse and admit a RuleSet document (docs/ruleset.schema.json) or a ``mine --json`` one
        (dustbuster.core.canon.admission: only ``valid`` rules unless ``unvalidated``, newer than ``held_version``,
        converging, on-site; ``admission``: admit_rules' keywords, held_doc, now_ms, max_skew_ms,
        keys).  None when it is the held version again; raises RuleError with the reason."""
        got = admit_rules(site, doc, held_version, ma, unvalidated, **admission)
        if got is None:
            return None
        version, rules = got
        return cls(site, version, rules, dict(doc), Canonizer(rules, ma), tuple(r.text for r in rules),
                   set_hosts(site, rules, signed=bool(admission.get("keys"))))


#: refusals for a set's signature: the set is kept aside, for a key added later (RuleBook.set_keys)
SIGNATURE_REASONS = ("unsigned", "bad_signature")


class RuleBook:
    """Site → current compiled rule set.  Not thread-safe; one per event loop.

    ``keys`` (key id → raw Ed25519 public key, dustbuster.core.model.signing.trusted_keys): when given,
    only sets signed by one of them are admitted.  ``clock`` (seconds, ``time.time`` by default) and
    ``max_skew_s``: a version more than that ahead of the clock in ms is refused
    (``version_from_future``; dustbuster.core.canon.admission.MAX_SKEW_MS)."""

    def __init__(self, ma: int = DEFAULT_MA, normalize: bool = True, keys: Mapping[str, bytes] | None = None,
                 clock: Callable[[], float] = time.time, max_skew_s: float = MAX_SKEW_MS / 1000) -> None:
        self.ma = ma
        self.normalize = normalize
        self.keys = dict(keys or {})
        self.clock = clock
        self.max_skew_ms = int(max_skew_s * 1000)
        self.sites: dict[str, SiteRules] = {}
        #: alias host -> the site whose set covers it (SiteRules.hosts); a host keyed as a site itself
        #: is looked up as that site first (:meth:`site_for`)
        self.aliases: dict[str, str] = {}
        self.bad = 0
        self.rejected: dict[str, int] = {}  #: rejected rule sets by reason (dustbuster.core.canon.admission)
        self.last_refusal: dict[str, str] = {}  #: site -> the reason its last refused set was refused
        #: site -> its newest set refused for its signature (or dropped when its key was revoked): tried
        #: again when the trusted keys change (:meth:`set_keys`), one document per site at most
        self.unverified: dict[str, Mapping[str, Any]] = {}
        #: site -> the version of its set dropped for a revoked key: no set of that version or older
        #: is admitted for it again (no rollback to a set signed before a rotation), the one set aside excepted
        self.floor: dict[str, int] = {}
        #: updates and key changes one at a time (a large set is admitted on a thread: stream/rulesview.py)
        self.lock = threading.RLock()

    def update(self, site: str, doc: Mapping[str, Any] | None, unvalidated: bool = False) -> SiteRules | None:
        with self.lock:
            return self._update(site, doc, unvalidated)

    def _update(self, site: str, doc: Mapping[str, Any] | None, unvalidated: bool = False) -> SiteRules | None:
        """Apply a rules-topic record: a RuleSet document, or None (a tombstone) to drop the site.
        With trusted keys a tombstone is refused (``unsigned_deletion``: it cannot carry a
        signature): the validator removes a site's rules with a signed set of no rules, which
        also keeps the site's version, so an older signed set cannot be replayed after it.
        A set that is not admitted (dustbuster.core.canon.admission) raises RuleError and leaves the site's current
        set in place; the same version again changes nothing."""
        site = site.lower()
        if doc is None:
            if self.keys:  # a deletion must be signed too: a signed set with no rules
                self.bad += 1
                self.rejected["unsigned_deletion"] = self.rejected.get("unsigned_deletion", 0) + 1
                self.last_refusal[site] = "unsigned_deletion"
                raise RuleSetRejected("unsigned_deletion", f"a tombstone for {site!r:.80} carries no signature; "
                                      "the site keeps its signed set (a signed set with no rules removes them)")
            self.sites.pop(site, None)
            self.last_refusal.pop(site, None)
            self._index_aliases()
            return None
        held = self.sites.get(site)
        try:
            sr = SiteRules.from_document(site, doc, self.ma, unvalidated,
                                         held.version if held else self.floor.get(site),
                                         held_doc=held.doc if held else None, now_ms=int(self.clock() * 1000),
                                         max_skew_ms=self.max_skew_ms, keys=self.keys)
        except RuleError as exc:
            self.bad += 1
            self.rejected[exc.reason] = self.rejected.get(exc.reason, 0) + 1
            self.last_refusal[site] = exc.reason
            if exc.reason in SIGNATURE_REASONS:
                self.unverified[site] = doc
            raise
        if sr is None:
            return held
        self.sites[site] = sr
        self.last_refusal.pop(site, None)
        self.unverified.pop(site, None)
        if sr.hosts[1:] or held is not None and held.hosts[1:]:
            self._index_aliases(site, held.hosts[1:] if held is not None else (), sr.hosts[1:])
        return sr

    def _index_aliases(self, site: str | None = None, old: tuple[str, ...] = (), new: tuple[str, ...] = ()) -> None:
        """Keep :attr:`aliases` (the first site in sort order wins a host two sets claim): ``site``'s
        hosts went from ``old`` to ``new``; rebuilt from every set held when a host it gives up was
        its own (another set may claim it) or no site is named — a set read costs its own hosts,
        not every site's."""
        if site is None or any(self.aliases.get(h) == site for h in old if h not in new):
            self.aliases = {}
            for name in sorted(self.sites):
                for host in self.sites[name].hosts[1:]:
                    self.aliases.setdefault(host, name)
            return
        for host in new:
            if host not in self.aliases or site < self.aliases[host]:
                self.aliases[host] = site

    def set_keys(self, keys: Mapping[str, bytes]) -> tuple[list[str], list[str]]:
        with self.lock:
            return self._set_keys(keys)

    def _set_keys(self, keys: Mapping[str, bytes]) -> tuple[list[str], list[str]]:
        """Trust ``keys`` from now on, without a restart: every held set whose signature none of them
        verifies is dropped (``key_revoked``: a compromised key is revoked at once), and each site's
        newest set refused for its signature is admitted when one of them verifies it (a key
        added).  With no keys, sets are no longer checked (nothing is dropped, nothing set aside is
        admitted).  A site whose set was dropped admits no set of that version or older again but
        the one set aside (no rollback to a set signed before a rotation).  Returns (sites dropped,
        sites admitted)."""
        self.keys = dict(keys)
        dropped: list[str] = []
        if self.keys:
            for site, sr in list(self.sites.items()):
                try:
                    verify_document(sr.doc, self.keys)
                except RuleError:
                    del self.sites[site]
                    self.unverified[site] = sr.doc
                    self.floor[site] = sr.version
                    self.rejected["key_revoked"] = self.rejected.get("key_revoked", 0) + 1
                    self.last_refusal[site] = "key_revoked"
                    dropped.append(site)
        admitted: list[str] = []
        for site, doc in list(self.unverified.items()) if self.keys else ():  # no keys: nothing re-admitted
            if site in self.sites:
                continue
            floor = self.floor.pop(site, None)  # the set aside may come back, not an older one
            counted = (self.bad, dict(self.rejected), self.last_refusal.get(site))
            try:
                self.update(site, doc)
            except RuleError:  # still refused: counted when it was read, not again
                self.bad, self.rejected = counted[0], counted[1]
                if counted[2] is not None:
                    self.last_refusal[site] = counted[2]
                if floor is not None:
                    self.floor[site] = floor
                continue
            admitted.append(site)
        if dropped:
            self._index_aliases()
        return dropped, admitted

    def refused_only(self) -> dict[str, str]:
        """The sites whose every set read so far was refused, each with the last reason: they have
        no rules at all (after a key rotation that dropped the only key their sets were signed with,
        ``bad_signature``), which a consumer should say rather than canonicalize on in silence."""
        return {s: why for s, why in sorted(self.last_refusal.items()) if s not in self.sites}

    def site_for(self, url: str, site: str | None = None) -> SiteRules | None:
        if site:
            return self.sites.get(site.lower())
        host = _host(url)
        for table in (self.sites, self.aliases) if self.aliases else (self.sites,):
            h = host
            while h:
                sr = self.sites.get(h) if table is self.sites else self.sites.get(self.aliases.get(h, ""))
                if sr is not None and sr.rules:  # a set with no rules (a signed removal) hides no parent's
                    return sr
                dot = h.find(".")
                h = h[dot + 1:] if dot >= 0 else ""
        return None

    def canonize(self, url: str, site: str | None = None, normalize: bool | None = None) -> SiteCanonized:
        ok = True
        u = url
        if self.normalize if normalize is None else normalize:
            u, ok = normalize_or_keep(url)
        sr = self.site_for(u, site)
        if sr is None:
            return SiteCanonized(url, u, site.lower() if site else None, (), None, ok)
        res = sr.canonizer.canonize(u)
        return SiteCanonized(url, res.canonical, sr.site, tuple(sr.texts[i] for i in res.applied), sr.version, ok,
                             res.converged)


def trust_warnings(book: RuleBook, keys_setting: str = "DUST_TRUSTED_KEYS") -> list[str]:
    """What a consumer should say once its rule sets are read: that they are not authenticated
    (no trusted keys: whoever can write the topic, a file or an API answer decides what crawlers
    skip), and which sites have no rules because every set read for them was refused.

    >>> trust_warnings(RuleBook())
    ['rule sets are applied unauthenticated: no trusted keys (DUST_TRUSTED_KEYS); docs/canonizer.md "Signed rule sets"']
    """
    out = []
    if not book.keys:
        out.append(f'rule sets are applied unauthenticated: no trusted keys ({keys_setting}); '
                   'docs/canonizer.md "Signed rule sets"')
    refused = book.refused_only()
    if refused:
        shown = ", ".join(f"{s} ({why})" for s, why in list(refused.items())[:10])
        more = f" and {len(refused) - 10} more" if len(refused) > 10 else ""
        out.append(f"{len(refused)} sites have no rule set: every set read for them was refused: {shown}{more}")
    return out


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
