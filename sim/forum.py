"""The simulated forum, in one place: its host names, its URL families, its DUST truth and a
reproducible access log of its traffic.  In the spirit of the papers' forum (WWW 2007 §6, Figure 7):
several host names, story_N ≡ story?id=N ≡ story.php3?id=N, ``&LastView=&Close=`` display options,
session ids, thread_N ≡ thread?rep=N, "/index.html" ≡ "/", print versions (other content), list
pages whose ``page`` changes content, pages that grow as comments arrive (so sizes drift), images,
404s and scanner noise.

Two users:

* :mod:`dustbuster.sim.site` serves the forum on loopback (``SITE_HOSTS``) and renders every URL's
  page; :data:`TRUTH` lists the rules that are valid on it (and some that look valid but are not);
* :func:`generate` writes a synthetic log of the forum on the papers' hosts (``LOG_HOSTS``) without
  a server: the benchmarks' and tests' input (``bench/genlog.py`` is its command line).  Scale: at
  50,000 lines the log has about 16,000 unique URLs (the thesis' forum log: 38,816 lines, 15,608
  unique URLs, Table 6.1).  The output is byte-identical for the same arguments.

Both write a story's URLs from :data:`STORY` (one template per form).
"""

from __future__ import annotations

import copy
import random
import time
from typing import Iterator

#: the simulator's host names: www. and the bare domain are one site (a valid rule), sections are not
SITE_HOSTS = ("www.forum.test", "forum.test", "politics.forum.test", "movies.forum.test")
#: the host names of the synthetic log (:func:`generate`)
LOG_HOSTS = ["www.forum.co.il", "politics.forum.co.il", "movies.forum.co.il", "sport.forum.co.il"]
AGENT = "Mozilla/5.0 (X11; Linux x86_64) dustbuster-genlog"  #: the synthetic log's user agent

#: the story family: the path (and query) of story ``n`` in each form.  ``alias``, ``query``,
#: ``php3``, ``display`` and ``session`` are one page (DUST); ``print`` and ``page`` are not.
STORY = {
    "alias": "/story_{n}",
    "query": "/story?id={n}",
    "php3": "/story.php3?id={n}",
    "display": "/story?id={n}&LastView=&Close=",
    "session": "/story?id={n}&sid={sid}",
    "print": "/print/story_{n}",
    "page": "/story?id={n}&page={page}",
}
#: query parameters that never change a page of the forum
IGNORED_PARAMS = ("sid", "utm_source", "LastView", "Close")

#: the simulator's ground truth: the rules valid on it, and rules that look valid but are not
TRUTH = {
    "valid": [
        {"type": "substring", "alpha": "story.php3?", "beta": "story?"},
        {"type": "substring", "alpha": "/story?id=", "beta": "/story_"},
        {"type": "substring", "alpha": "/index.html", "beta": "/", "anchor_end": True},
        {"type": "substring", "alpha": "&LastView=&Close=", "beta": "", "anchor_end": True},
        {"type": "substring", "alpha": "http://forum.test/", "beta": "http://www.forum.test/", "anchor_start": True},
        {"type": "parameter", "name": "sid", "action": "remove"},
        {"type": "parameter", "name": "utm_source", "action": "remove"},
    ],
    "invalid": [
        {"type": "substring", "alpha": "http://politics.", "beta": "http://movies.", "anchor_start": True},
        {"type": "parameter", "name": "page", "action": "remove"},
        {"type": "substring", "alpha": "/print/story_", "beta": "/story_"},
    ],
}


def truth() -> dict:
    """A copy of :data:`TRUTH` (the caller may change it)."""
    return copy.deepcopy(TRUTH)


def _story(rnd: random.Random, sid: int, size: int) -> tuple[str, int]:
    """One request of a story of the synthetic log, in one of its forms: (path, size)."""
    form = rnd.random()
    if form < 0.30:
        return STORY["alias"].format(n=sid), size
    if form < 0.58:
        return STORY["query"].format(n=sid), size
    if form < 0.70:
        return STORY["php3"].format(n=sid), size
    if form < 0.78:
        return STORY["display"].format(n=sid), size
    if form < 0.86:
        return STORY["session"].format(n=sid, sid=f"{rnd.randrange(16**6):06x}"), size
    if form < 0.93:
        return STORY["print"].format(n=sid), int(size * 1.35) + 400
    return STORY["page"].format(n=sid, page=rnd.randrange(2, 5)), size // 3 + 97 * rnd.randrange(1, 40)


def _other(rnd: random.Random, r: float, vhost: str, threads: list) -> tuple[str, str, int, int]:
    """One request of the synthetic log that is not a story: (vhost, path, size, status)."""
    if r < 0.74:  # threads
        vhost, tid, base = rnd.choice(threads)
        path = f"/thread_{tid}" if rnd.random() < 0.5 else f"/thread?rep={tid}"
        if rnd.random() < 0.2:
            path += "&NewOnly=1" + ("&tvqz=2" if rnd.random() < 0.5 else "")
        return vhost, path, base, 200
    if r < 0.82:  # list pages: page changes content
        page, cat = rnd.randrange(1, 30), rnd.randrange(1, 12)
        return vhost, f"/list?cat={cat}&page={page}", 4000 + 331 * page + 17 * cat + 5003 * LOG_HOSTS.index(vhost), 200
    if r < 0.88:  # home and section pages
        sec = rnd.choice(["", "news/", "sport/", "culture/", "archive/"])
        path = f"/{sec}" + ("index.html" if rnd.random() < 0.4 else "")
        return vhost, path, 9000 + 1000 * len(sec) + LOG_HOSTS.index(vhost) * 7, 200
    if r < 0.96:  # images and static files
        img = rnd.randrange(400)
        return vhost, f"/images/img{img}.gif", 200 + img * 53 + 30011 * LOG_HOSTS.index(vhost), 200
    # noise: 404s and scanners
    path = rnd.choice(["/wp-login.php", "/admin/", f"/story_{rnd.randrange(10**6)}", "/.env", "/cgi-bin/x"])
    return vhost, path, 310, 404


def generate(lines: int, seed: int = 1) -> Iterator[str]:
    """``lines`` lines of the forum's synthetic access log (vhost + combined format), seeded."""
    rnd = random.Random(seed)
    n_stories = max(50, int(lines * 0.115))
    n_threads = max(20, lines // 40)
    stories = [(rnd.choice(LOG_HOSTS), 1000 + i, 2500 + rnd.randrange(9000)) for i in range(n_stories)]
    threads = [(rnd.choice(LOG_HOSTS), 500 + i, 1800 + rnd.randrange(4000)) for i in range(n_threads)]
    comments = [0] * n_stories
    t0 = 1_700_000_000
    for k in range(lines):
        when = f"[{_clf_time(t0 + k * 2)}]"
        client = f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.{rnd.randrange(1, 255)}"
        r = rnd.random()
        status, vhost = 200, rnd.choice(LOG_HOSTS)
        if r < 0.62:  # a story, in one of its forms; zipf-ish popularity
            i = min(int(rnd.paretovariate(0.9)) - 1, n_stories - 1) if rnd.random() < 0.5 else rnd.randrange(n_stories)
            vhost, sid, base = stories[i]
            if rnd.random() < 0.05:
                comments[i] += 1
            path, size = _story(rnd, sid, base + 140 * comments[i])
        else:
            vhost, path, size, status = _other(rnd, r, vhost, threads)
        yield f'{vhost} {client} - - {when} "GET {path} HTTP/1.1" {status} {size} "-" "{AGENT}"'


_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _clf_time(ts: int) -> str:
    t = time.gmtime(ts)
    return f"{t.tm_mday:02d}/{_MONTHS[t.tm_mon - 1]}/{t.tm_year}:{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} +0000"
