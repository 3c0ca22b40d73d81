"""The simulator's one-page families, on with ``SimSite(wiki=True)`` (off by default).
Deterministic.  A wiki script that names the page in the query, as MediaWiki does:

* ``/index.php?title=Special:UserLogin&returnto=X`` — the login page; ``returnto`` is kept for after
  the login (not in the document), so every X shows one page, byte for byte: a no-op parameter on
  the one page that has it (``remove returnto=* where title=Special:UserLogin`` is valid);
* ``/index.php?title=Special:Recent&returnto=X`` — recent changes of page X: there ``returnto`` is
  read (the page differs per X), so ``remove returnto=*`` holds at no path scope and the miner
  proposes it under the login page's query scope (core/mining/qscope.py), as on a real MediaWiki;
* ``/index.php?title=Special:AllPages&page=K`` — one listing per K: ``page`` is not a no-op on
  its one page (``remove page=* where title=Special:AllPages`` is invalid);
* ``/index.php?title=story_N`` — the articles (story N's text).

:data:`WIKI_TRUTH` lists both parameter rules.
"""

from __future__ import annotations

import random

WORDS = ("market election river concert festival bridge harbor season council rally orchestra theater museum "
         "library stadium parliament budget forecast storm drought harvest vaccine hospital school").split()

LOGIN = "Special:UserLogin"
LISTING = "Special:AllPages"
RECENT = "Special:Recent"
WIKI_TRUTH = {
    "valid": [{"type": "parameter", "name": "returnto", "action": "remove", "scope": f"?title={LOGIN}"}],
    "invalid": [{"type": "parameter", "name": "page", "action": "remove", "scope": f"?title={LISTING}"}],
}


class Wiki:
    """Renders ``/index.php`` of a :class:`~dustbuster.sim.site.SimSite` (``site``)."""

    def __init__(self, site) -> None:
        self.site = site

    def render(self, host: str, path: str, query: dict[str, str]) -> tuple[int, str, None] | None:
        """(status, html, None) of a wiki URL, or None for the site's other URLs."""
        if path != "/index.php":
            return None
        title = query.get("title", "")
        if title == LOGIN:
            form = f'<form method="post" action="/index.php?title={LOGIN}"></form>'  # returnto: kept in a cookie
            text = "log in to simwiki username password remember me " + self.site.story_text("wiki", 0, salt="login")
            return 200, self.site.page("Log in - SimWiki", text, chrome=form), None
        if title == RECENT:
            back = query.get("returnto", "")
            n = int(back[6:]) if back.startswith("story_") and back[6:].isdigit() else 0
            return 200, self.site.page("Recent changes - SimWiki", f"recent changes of {back} "
                                       + self.site.story_text("wiki", n, salt="recent")), None
        if title == LISTING:
            k = query.get("page", "1")
            rnd = random.Random(f"allpages:{k}")
            names = " ".join(f"{rnd.choice(WORDS)} {rnd.choice(WORDS)}" for _ in range(80))  # page names
            return 200, self.site.page("All pages - SimWiki", f"all pages page {k} {names}"), None
        if title.startswith("story_") and title[6:].isdigit() and int(title[6:]) < self.site.stories:
            n = int(title[6:])
            return 200, self.site.page(f"story {n} - SimWiki", self.site.story_text("wiki", n)), None
        return None

    @staticmethod
    def log_target(rnd: random.Random, s: int) -> str:
        """One request of the wiki (story ``s`` where a story is named)."""
        r = rnd.random()
        if r < 0.38:
            return f"/index.php?title={LOGIN}&returnto=story_{s}"
        if r < 0.43:
            return f"/index.php?title={LOGIN}"
        if r < 0.46:
            return f"/index.php?title={RECENT}"
        if r < 0.64:
            return f"/index.php?title={RECENT}&returnto=story_{s}"
        if r < 0.82:
            return f"/index.php?title={LISTING}&page={rnd.randrange(1, 40)}"
        return f"/index.php?title=story_{s}"


__all__ = ["LISTING", "LOGIN", "RECENT", "WIKI_TRUTH", "Wiki"]
