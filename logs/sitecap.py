"""``dustbuster mine``'s per-site URL cap: the memory of a read bounded by the sites, not by the log.

A site is a URL's host (``scheme://host[:port]``, as the URL list holds it).  The URL list keeps the
first ``max_urls`` distinct URLs of each site in log order (the order the URL list keeps them in);
a record of a URL the list already holds goes on being observed (hits, size interval, digests), a
record of a new URL of a site that holds ``max_urls`` is left out and counted.  That is the streaming
worker's rule for a site's window (``DUST_MAX_URLS_PER_SITE``, core/mining/incremental.py), with the
same default, so ``mine`` on a log and a worker window of the same lines see the same URLs.  Where no
site reaches the cap nothing is left out: the URL list, hence every rule, is the uncapped one.

Where a site reaches it, its rules are mined on a sample — its first ``max_urls`` URLs — and the
read says so (:meth:`SiteCap.to_dict`, the JSON's ``stats.sample``; a warning per site on stderr).
Beyond the papers (they mine a URL list whole; WWW 2007 §5.1 and thesis §5.1 count on buckets of
a few URLs, which a sample of a site's first URLs keeps for the families it has seen).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

DEFAULT_MAX_URLS_PER_SITE = 100_000  #: the streaming worker's default (stream/settings.py)
#: distinct left-out URLs remembered per read to count them exactly (beyond it: "at least")
MAX_COUNTED_LEFT_OUT = 1_000_000


def site_of(url: str) -> str:
    """The site (host, with its port if any) of an absolute URL; "" for another string."""
    parts = url.split("/", 3)
    return parts[2] if len(parts) > 2 and parts[0].endswith(":") and not parts[1] else ""


@dataclass
class SiteCap:
    """The URLs a read takes per site (0 = no cap) and what it left out."""

    max_urls: int = DEFAULT_MAX_URLS_PER_SITE
    held: dict[str, int] = field(default_factory=dict)  #: URLs taken, per site
    records_left_out: dict[str, int] = field(default_factory=dict)  #: records of URLs left out, per site
    urls_left_out: dict[str, int] = field(default_factory=dict)  #: distinct URLs left out, per site
    _out: set[int] = field(default_factory=set, repr=False)  #: hashes of the URLs left out (bounded)
    counted_exactly: bool = True  #: False once more distinct URLs were left out than are remembered

    def admit(self, url: str, records: int = 1) -> bool:
        """Whether a URL new to the list is taken (counted for its site), else counted as left out
        with its ``records``.  Call it once per new URL in log order."""
        return True if not self.max_urls else self._admit(url, site_of(url), records)

    def taken(self, urls: list[str], records: list[int]) -> list[bool]:
        """:meth:`admit` of each of ``urls`` (new to the list, in log order), at once."""
        if not self.max_urls:
            return [True] * len(urls)
        sites = list(map(site_of, urls))
        held, need = self.held, Counter(sites)
        if all(held.get(s, 0) + n <= self.max_urls for s, n in need.items()):  # no site fills: all taken
            for s, n in need.items():
                held[s] = held.get(s, 0) + n
            return [True] * len(urls)
        return list(map(self._admit, urls, sites, records))

    def _admit(self, url: str, site: str, records: int) -> bool:
        n = self.held.get(site, 0)
        if n < self.max_urls:
            self.held[site] = n + 1
            return True
        self.records_left_out[site] = self.records_left_out.get(site, 0) + records
        h = hash(url)
        if h not in self._out:
            if len(self._out) < MAX_COUNTED_LEFT_OUT:
                self._out.add(h)
                self.urls_left_out[site] = self.urls_left_out.get(site, 0) + 1
            else:
                self.counted_exactly = False
        return False

    @property
    def sampled(self) -> bool:
        return bool(self.records_left_out)

    def to_dict(self) -> dict:
        """The JSON's ``stats.sample``: the cap, whether any site reached it, and per such site the
        URLs kept and the URLs and records left out."""
        return {"max_urls_per_site": self.max_urls, "sampled": self.sampled,
                "rule": "the first max_urls_per_site distinct URLs of each site (host) in log order",
                "sites": {s: {"urls_kept": self.held.get(s, 0), "urls_left_out": self.urls_left_out.get(s, 0),
                              "records_left_out": r} for s, r in sorted(self.records_left_out.items())},
                **({} if self.counted_exactly else {"urls_left_out_at_least": True})}

    def warnings(self) -> list[str]:
        """One line per site that reached the cap, for stderr."""
        more = "" if self.counted_exactly else "at least "
        return [f"warning: site {s} reached --max-urls-per-site {self.max_urls}: mined on a sample, its first "
                f"{self.held.get(s, 0)} URLs in log order; {more}{self.urls_left_out.get(s, 0)} later URLs "
                f"({r} records) left out (0 = no cap)" for s, r in sorted(self.records_left_out.items())]
