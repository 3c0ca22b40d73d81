"""The simulator's traps for "the same page, or only the same text today?", on with
``SimSite(traps=True)`` (``dustbuster sim-site --traps``).  Deterministic; each trap is a URL family
whose pages look alike today while they are different pages, or that the site declares:

* **soft errors** — ``/wiki?title=story_N&oldid=R&diff=K`` (K = prev, cur, next): the log is older
  than the site, so most revisions R are gone and the wiki answers each such URL with one "Error"
  page, status 200, templated with R and N; where R exists, the three diffs are different pages.
  Rules like ``"=prev$" → "=cur$"`` look valid on the error pages alone;
* **look-alikes** — ``/pkg/NAME?view=V``: most packages show one boilerplate text per view, the
  package name only in the title; ``"-noto-mono" → "-droid-fallback"`` holds on the text alone.
  Every view declares the package's main page on the www host as its canonical (wrong: the
  views differ; right about the hosts, which serve one package page alike);
* **a hidden revision** — ``/story?id=N&rev=R``: ``rev`` is ignored except on the few stories
  edited since (:data:`EDITED`), whose older revisions show older text; the log holds several
  revisions of those;
* **declared canonicals** — every story page declares ``http://www.<host>/story_N`` (absolute,
  the preferred host), ``/story_N?ref=X`` included (a no-op parameter); ``/s/N`` redirects (301) to
  ``/story_N``.

:data:`TRAP_TRUTH` lists the rules the traps make look valid and that are not.
"""

from __future__ import annotations

import random

#: stories edited since the log: their older revisions (``rev``) are other pages
EDITED = frozenset({5, 61, 133, 211, 277})
#: stories whose logged wiki revisions still exist (the others were purged: soft errors)
WIKI_LIVE = frozenset({7, 150, 250})
DIFFS = ("prev", "cur", "next")
PACKAGES = ("fonts-noto-mono", "fonts-droid-fallback", "fonts-dejavu-core", "fonts-liberation", "libfoo-dev",
            "libbar-doc", "python3-baz", "tools-misc")
#: packages with a real description (the others show the boilerplate)
DESCRIBED = frozenset({"python3-baz", "tools-misc"})
VIEWS = ("info", "files", "deps", "bugs", "news")

TRAP_TRUTH = {"invalid": [
    {"type": "substring", "alpha": "=prev", "beta": "=cur"},
    {"type": "substring", "alpha": "=cur", "beta": "=next"},
    {"type": "substring", "alpha": "-noto-mono", "beta": "-droid-fallback"},
    {"type": "parameter", "name": "rev", "action": "remove"},
    {"type": "parameter", "name": "view", "action": "remove"},
]}


def revisions(n: int) -> list[int]:
    """Story n's revision ids, oldest first (one unless it was edited)."""
    return [10_000 + 10 * n + k for k in range(3 if n in EDITED else 1)]


def wiki_revisions(n: int) -> list[int]:
    return [50_000 + 10 * n + k for k in range(3)]


class Traps:
    """Renders the trap families of a :class:`~dustbuster.sim.site.SimSite` (``site``)."""

    def __init__(self, site) -> None:
        self.site = site

    def canonical(self, raw_host: str, n: int) -> str:
        host, _, port = raw_host.partition(":")
        host = host.lower()
        pref = "www." + host if host.count(".") == 1 else host
        return f"http://{pref}{':' + port if port else ''}/story_{n}"

    def story_text(self, host: str, n: int, query: dict[str, str]) -> str | None:
        """An older revision's text when ``rev`` names one of an edited story, else None (current)."""
        rev = query.get("rev", "")
        revs = revisions(n)
        if rev.isdigit() and int(rev) in revs[:-1]:
            return f"revision {rev} " + self.site.story_text(host, n, salt=f"rev{rev}")
        return None

    def render(self, raw_host: str, path: str, query: dict[str, str]) -> tuple[int, str, str | None] | None:
        """(status, html, redirect) of a trap URL, or None for the site's other URLs."""
        host = raw_host.split(":")[0].lower()
        if path.startswith("/s/") and path[3:].isdigit():
            return 301, "", f"/story_{path[3:]}"
        if path == "/wiki":
            return self._wiki(host, query)
        if path.startswith("/pkg/") and path[5:] in PACKAGES:
            return self._pkg(raw_host, path[5:], query.get("view", "info"))
        return None

    def _wiki(self, host: str, query: dict[str, str]) -> tuple[int, str, None]:
        title, rev, diff = query.get("title", ""), query.get("oldid", ""), query.get("diff", "cur")
        n = int(title[6:]) if title.startswith("story_") and title[6:].isdigit() else None
        if n is None or not rev.isdigit() or diff not in DIFFS:
            return 200, self.site.page("Error", "Error bad title return to the main page"), None
        if n not in WIKI_LIVE or int(rev) not in wiki_revisions(n):
            msg = (f"Error the revision #{rev} of the page named story {n} does not exist this is usually "
                   "caused by following an outdated diff or history link to a page that has been deleted "
                   "return to the main page")
            return 200, self.site.page("Error", msg), None
        text = f"difference {diff} of revision {rev} " + self.site.story_text(host, n, salt=f"diff{diff}{rev}")
        return 200, self.site.page(f"story {n}: difference between revisions", text), None

    def _pkg(self, raw_host: str, name: str, view: str) -> tuple[int, str, None]:
        if view not in VIEWS:
            view = "info"
        if name in DESCRIBED:
            text = f"{view} {name} " + self.site.story_text("pkg", sum(map(ord, name)), salt=view)
        else:
            rnd = random.Random(f"pkg:{view}")
            text = (f"{view} of this package no description is available for this package "
                    + " ".join(rnd.choice(("maintainer", "version", "section", "priority", "size", "depends"))
                               + str(rnd.randrange(50)) for _ in range(60)))
        host, _, port = raw_host.partition(":")
        canon = f"http://www.{'.'.join(host.split('.')[-2:])}{':' + port if port else ''}/pkg/{name}"
        return 200, self.site.page(f"{name} {view}", text, canonical=canon), None

    def log_target(self, rnd: random.Random, s: int) -> str:
        """One request of the trap families (story ``s`` where a story is named)."""
        r = rnd.random()
        if r < 0.30:
            rev = rnd.choice(wiki_revisions(s))
            return f"/wiki?title=story_{s}&oldid={rev}&diff={rnd.choice(DIFFS)}"
        if r < 0.50:
            return f"/pkg/{rnd.choice(PACKAGES)}?view={rnd.choice(VIEWS)}"
        if r < 0.75:
            e = rnd.choice(sorted(EDITED)) if rnd.random() < 0.12 else s
            return f"/story?id={e}&rev={rnd.choice(revisions(e))}"
        if r < 0.90:
            return f"/story_{s}?ref={rnd.choice(('rss', 'mail', 'home'))}"
        return f"/s/{s}"


__all__ = ["DESCRIBED", "EDITED", "PACKAGES", "TRAP_TRUTH", "Traps", "WIKI_LIVE", "revisions", "wiki_revisions"]
