"""What the links of a fetched page cost (issue 28 item 5): :func:`dustbuster.core.validation.identity.page_identity`
with the links resolved (what the fetcher does) and without (``same_origin_links`` replaced by a
function that returns nothing: the hrefs are still collected by the one parse), per page, medians.

Pages (synthetic, deterministic): ``wiki`` 30 KiB, 300 links (250 same-origin, relative, some
repeated, 50 external); ``listing`` 200 KiB, 3,000 links (same-origin, query strings); ``hostile``
256 KiB of 20,000 external links then one of the site (only MAX_HREFS = 5,000 distinct hrefs are
resolved).  A body of 32 KiB and more is parsed in a thread by the fetcher (fetch/client.py).

    .venv/bin/python bench/bench_links.py [--repeat 7] [--small] [--out bench/out/bench_links.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from unittest import mock

from dustbuster.core.validation import identity
from dustbuster.core.validation.identity import page_identity

URL = "http://wiki.test/index.php?title=Main_Page"
OUT = Path(__file__).resolve().parent / "out"


def wiki() -> bytes:
    nav = "".join(f'<li><a href="/index.php?title=Page_{i % 120}&amp;action=view">P{i}</a></li>' for i in range(250))
    ext = "".join(f'<a href="https://ext{i}.example/x">e</a>' for i in range(50))
    text = "<p>" + " ".join(f"word{i}" for i in range(2500)) + "</p>"
    return f"<html><head><title>Main</title></head><body>{text}<ul>{nav}</ul>{ext}</body></html>".encode()


def listing() -> bytes:
    rows = "".join(f'<tr><td><a href="?p={i}&amp;sort=name">item {i}</a> {i * 7}</td></tr>' for i in range(3000))
    return f"<html><title>List</title><table>{rows}</table></html>".encode()


def hostile() -> bytes:
    ext = "".join(f'<a href="http://o{i}.test/">' for i in range(20000))
    return (ext + '<a href="/own">').encode()[:262_144]


def per_page(body: bytes, repeat: int, links: bool) -> float:
    times = []
    for _ in range(repeat):
        n, t0 = 0, time.perf_counter()
        while n < 5 or time.perf_counter() - t0 < 0.3:
            if links:
                page_identity(URL, URL, [], 200, body, "text/html")
            else:
                with mock.patch.object(identity, "same_origin_links", lambda *a: ()):
                    page_identity(URL, URL, [], 200, body, "text/html")
            n += 1
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--small", action="store_true", help="one repeat (CI: it runs, nothing is asserted of a time)")
    ap.add_argument("--out", type=Path, default=OUT / "bench_links.json", help="the JSON results")
    a = ap.parse_args()
    repeat = 1 if a.small else a.repeat
    print("| page | bytes | links kept | page_identity ms | without links ms | links' share |")
    print("|---|---|---|---|---|---|")
    rows = []
    for name, body in (("wiki", wiki()), ("listing", listing()), ("hostile", hostile())):
        kept = len(page_identity(URL, URL, [], 200, body, "text/html").links)
        with_links, without = per_page(body, repeat, True), per_page(body, repeat, False)
        rows.append({"page": name, "bytes": len(body), "links": kept, "ms": round(with_links * 1e3, 3),
                     "ms_without_links": round(without * 1e3, 3)})
        print(f"| {name} | {len(body):,} | {kept} | {with_links * 1e3:.2f} | {without * 1e3:.2f} | "
              f"{(with_links - without) / with_links:.0%} |")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"repeat": repeat, "pages": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
