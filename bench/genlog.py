"""A reproducible synthetic access log of a forum site in the spirit of the papers' forum
(WWW 2007 §6, Figure 7): several host names, story_N ≡ story?id=N ≡ story.php3?id=N,
``&LastView=&Close=`` display options, session ids, thread_N ≡ thread?rep=N, "/index.html" ≡ "/",
print versions (different size), list pages whose ``page`` changes content, pages that grow as
comments arrive (so sizes drift), images, 404s and scanner noise.

    python bench/genlog.py --lines 50000 --seed 1 > forum.log        # vhost + combined format

Scale: at --lines 50000 the log has about 16,000 unique URLs (the thesis' forum log: 38,816
lines, 15,608 unique URLs, Table 6.1).  The output is byte-identical for the same arguments.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Iterator

HOSTS = ["www.forum.co.il", "politics.forum.co.il", "movies.forum.co.il", "sport.forum.co.il"]
AGENT = "Mozilla/5.0 (X11; Linux x86_64) dustbuster-genlog"


def generate(lines: int, seed: int = 1) -> Iterator[str]:
    rnd = random.Random(seed)
    n_stories = max(50, int(lines * 0.115))
    n_threads = max(20, lines // 40)
    stories = [(rnd.choice(HOSTS), 1000 + i, 2500 + rnd.randrange(9000)) for i in range(n_stories)]
    threads = [(rnd.choice(HOSTS), 500 + i, 1800 + rnd.randrange(4000)) for i in range(n_threads)]
    comments = [0] * n_stories
    t0 = 1_700_000_000
    for k in range(lines):
        ts = t0 + k * 2
        when = f"[{_clf_time(ts)}]"
        client = f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.{rnd.randrange(1, 255)}"
        r = rnd.random()
        status, vhost = 200, rnd.choice(HOSTS)
        if r < 0.62:  # a story, in one of its forms; zipf-ish popularity
            i = min(int(rnd.paretovariate(0.9)) - 1, n_stories - 1) if rnd.random() < 0.5 else rnd.randrange(n_stories)
            vhost, sid, base = stories[i]
            if rnd.random() < 0.05:
                comments[i] += 1
            size = base + 140 * comments[i]
            form = rnd.random()
            if form < 0.30:
                path = f"/story_{sid}"
            elif form < 0.58:
                path = f"/story?id={sid}"
            elif form < 0.70:
                path = f"/story.php3?id={sid}"
            elif form < 0.78:
                path = f"/story?id={sid}&LastView=&Close="
            elif form < 0.86:
                path = f"/story?id={sid}&sid={rnd.randrange(16**6):06x}"
            elif form < 0.93:
                path, size = f"/print/story_{sid}", int(size * 1.35) + 400
            else:
                path, size = f"/story?id={sid}&page={rnd.randrange(2, 5)}", size // 3 + 97 * rnd.randrange(1, 40)
        elif r < 0.74:  # threads
            vhost, tid, base = rnd.choice(threads)
            path = f"/thread_{tid}" if rnd.random() < 0.5 else f"/thread?rep={tid}"
            if rnd.random() < 0.2:
                path += "&NewOnly=1" + ("&tvqz=2" if rnd.random() < 0.5 else "")
            size = base
        elif r < 0.82:  # list pages: page changes content
            page, cat = rnd.randrange(1, 30), rnd.randrange(1, 12)
            path, size = f"/list?cat={cat}&page={page}", 4000 + 331 * page + 17 * cat + 5003 * HOSTS.index(vhost)
        elif r < 0.88:  # home and section pages
            sec = rnd.choice(["", "news/", "sport/", "culture/", "archive/"])
            path = f"/{sec}" + ("index.html" if rnd.random() < 0.4 else "")
            size = 9000 + 1000 * len(sec) + HOSTS.index(vhost) * 7
        elif r < 0.96:  # images and static files
            img = rnd.randrange(400)
            path, size = f"/images/img{img}.gif", 200 + img * 53 + 30011 * HOSTS.index(vhost)
        else:  # noise: 404s and scanners
            status = 404
            path = rnd.choice(["/wp-login.php", "/admin/", f"/story_{rnd.randrange(10**6)}", "/.env", "/cgi-bin/x"])
            size = 310
        yield f'{vhost} {client} - - {when} "GET {path} HTTP/1.1" {status} {size} "-" "{AGENT}"'


_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _clf_time(ts: int) -> str:
    import time

    t = time.gmtime(ts)
    return f"{t.tm_mday:02d}/{_MONTHS[t.tm_mon - 1]}/{t.tm_year}:{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} +0000"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    out = sys.stdout
    for line in generate(a.lines, a.seed):
        out.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
