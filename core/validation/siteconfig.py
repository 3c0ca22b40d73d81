"""The sites file (``DUST_VALIDATOR_SITES``, ``--sites``): which sites the validator may fetch, and how.

A JSON object, site → ``{"origins": [...], "allow_private": false, "resolve": {host: ip},
"robots": true, "rate_per_s": 10, "concurrency": 4}``.  Only the origins listed there are ever
fetched; a site that is not listed, or lists no origin, is never fetched.  :func:`parse_sites`
reads the whole file once into :class:`SiteConfig` objects; anything malformed is a
:class:`ConfigError` naming the file and the site.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from dustbuster.core.errors import ConfigError


@dataclass(frozen=True)
class SiteConfig:
    """How one site may be fetched (the fetch policy's inputs, as the file says them)."""

    origins: tuple[str, ...] = ()  #: as written; the fetcher reduces each to scheme://host[:port]
    allow_private: bool = False  #: loopback and private addresses may be fetched
    resolve: Mapping[str, str] = field(default_factory=dict)  #: host (lower case) → IP address to use
    robots: bool = True  #: obey the origin's robots.txt
    rate_per_s: float = 10.0
    concurrency: int = 4  #: fetches in flight per host

    @property
    def fetchable(self) -> bool:
        """The site names at least one origin: without one nothing of it is ever fetched."""
        return bool(self.origins)


def parse_sites(text: str | bytes, source: str = "the sites file") -> dict[str, SiteConfig]:
    """Every site of a sites file; ConfigError (naming ``source`` and the site) for anything malformed."""
    try:
        doc = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{source}: must be a JSON object: site -> {{\"origins\": [...], ...}}")
    return {site: _site_config(conf, f"{source}: site {site!r}") for site, conf in doc.items()}


def _site_config(conf: Any, where: str) -> SiteConfig:
    if not conf:
        return SiteConfig()
    if not isinstance(conf, dict):
        raise ConfigError(f"{where}: must be a JSON object")
    origins = conf.get("origins") or []
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        raise ConfigError(f"{where}: 'origins' must be a list of URLs")
    resolve = conf.get("resolve") or {}
    if not isinstance(resolve, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in resolve.items()):
        raise ConfigError(f"{where}: 'resolve' must map host names to IP addresses")
    try:
        return SiteConfig(origins=tuple(origins), allow_private=bool(conf.get("allow_private", False)),
                          resolve={k.lower(): v for k, v in resolve.items()}, robots=bool(conf.get("robots", True)),
                          rate_per_s=float(conf.get("rate_per_s", 10.0)), concurrency=int(conf.get("concurrency", 4)))
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
