"""Host rules and the hosts a rule set covers (ours, beyond the papers; docs/validation.md "Host
aliases", docs/canonizer.md "Admission").

A *host rule* is a substring rule that rewrites nothing but a URL's origin, anchored at the URL's
start: ``"^http://www.wiki.test/" → "^http://wiki.test/"`` (dustbuster.core.mining.hostalias makes
one per alias of a site's declared origins).  A site's rule set is keyed by one host (its
``site``), yet a crawler meets the site under each alias, and the set's own host rule moves URLs
from one to the other.  So the hosts a set *covers* are its site and the hosts its host rules join
to it (:func:`set_hosts`); consumers look a URL's host up among them (RuleBook) and admission takes
a move between them as on the site.

How far a set may reach is a matter of trust.  A signed set was published by the validator, which
fetched the same pages under both hosts of each of its host rules, for origins the operator
declared: every host its host rules join is the site's.  An unsigned set (a file, a topic anyone
may write) joins only the site's ``www.`` twin — ``www.x`` and ``x`` — so a forged host rule cannot
claim another site's host, nor move the site's URLs to a host of the forger's choosing.

>>> from dustbuster.core.model.rules import SubstringRule
>>> r = SubstringRule.from_parts("http://www.wiki.test/", "http://wiki.test/", anchor_start=True)
>>> host_rule_hosts(r)
('www.wiki.test', 'wiki.test')
>>> set_hosts("www.wiki.test", [r])
('www.wiki.test', 'wiki.test')
>>> evil = SubstringRule.from_parts("http://www.wiki.test/", "http://evil.test/", anchor_start=True)
>>> set_hosts("www.wiki.test", [evil]), set_hosts("www.wiki.test", [evil], signed=True)
(('www.wiki.test',), ('www.wiki.test', 'evil.test'))
"""

from __future__ import annotations

import re
from typing import Iterable

from dustbuster.core.urls.tokens import START

#: an origin as a host rule writes it: scheme, host (a name or a bracketed IPv6 address), an
#: optional port, then the path's first slash and nothing more
_ORIGIN = re.compile(r"(?i)https?://([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?/\Z")


def origin_host(text: str) -> str | None:
    """The lower-case host of ``text`` when it is a host rule's side (``^scheme://host[:port]/``
    in the internal form, anchored at the start), else None."""
    if not text.startswith(START):
        return None
    m = _ORIGIN.match(text, 1)
    return m.group(1).lower() if m else None


def host_rule_hosts(rule: object) -> tuple[str, str] | None:
    """``(host of α, host of β)`` when ``rule`` is a host rule, else None."""
    alpha, beta = getattr(rule, "alpha", None), getattr(rule, "beta", None)
    if not isinstance(alpha, str) or not isinstance(beta, str) or getattr(rule, "placeholder", None):
        return None
    a, b = origin_host(alpha), origin_host(beta)
    return (a, b) if a and b else None


def within(host: str, site: str) -> bool:
    """``host`` is ``site`` or one of its subdomains."""
    return host == site or host.endswith("." + site)


def www_twins(a: str, b: str) -> bool:
    """``a`` and ``b`` are one host with and without ``www.``."""
    return a == "www." + b or b == "www." + a


def set_hosts(site: str, rules: Iterable[object], signed: bool = False) -> tuple[str, ...]:
    """The hosts a rule set of ``site`` covers: the site first, then each host a host rule joins to
    a host already covered (any such host when ``signed``, else only a ``www.`` twin), in the
    order found; the hosts below a covered host are covered with it."""
    site = site.lower()
    pairs = [p for p in map(host_rule_hosts, rules) if p is not None]
    hosts = [site] if site else []
    grew = bool(hosts)
    while grew:
        grew = False
        for a, b in pairs:
            for new, old in ((b, a), (a, b)):
                if any(within(new, h) for h in hosts) or not any(within(old, h) for h in hosts):
                    continue
                if signed or any(www_twins(new, h) for h in hosts):
                    hosts.append(new)
                    grew = True
    return tuple(hosts)


def covered(host: str, hosts: Iterable[str]) -> bool:
    """``host`` is one of ``hosts`` or below one of them."""
    return any(within(host, h) for h in hosts)


__all__ = ["covered", "host_rule_hosts", "origin_host", "set_hosts", "within", "www_twins"]
