"""``dustbuster sim-site``: the DUST site simulator (:mod:`dustbuster.sim.site`) on loopback, or
its traffic log and ground truth written to files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub, common) -> argparse.ArgumentParser:
    sm = sub.add_parser("sim-site", parents=[common], help="serve the DUST site simulator (and write its traffic log)",
                        description="A simulated forum site with known DUST (sim/site.py) on loopback: several "
                        "host names, aliases, no-op and content parameters, print versions, growing pages, "
                        "look-alikes, redirects, soft errors, slow and failing pages.")
    sm.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback only; default %(default)s)")
    sm.add_argument("--port", type=int, default=8080, help="port to listen on (default %(default)s)")
    sm.add_argument("--write-log", metavar="FILE", help="write an access log of simulated traffic and exit")
    sm.add_argument("--lines", type=int, default=20000, help="lines of --write-log (default %(default)s)")
    sm.add_argument("--log-port", type=int, help="port to put in the log's host names (default: --port)")
    sm.add_argument("--truth", metavar="FILE", help="write the ground-truth rules as JSON")
    sm.add_argument("--traps", action="store_true", help="add the page-identity traps (sim/traps.py): soft-error "
                    "pages with status 200 for purged revisions, look-alike pages that differ only in their title, "
                    "a revision parameter that matters on a few edited pages, declared canonicals (some wrong), "
                    "redirects; the truth file then lists the rules they make look valid under \"trap_invalid\"")
    sm.add_argument("--wiki", action="store_true", help="add a wiki script with one-page families (sim/wiki.py): "
                    "/index.php?title=Special:UserLogin&returnto=X is one login page for every X (a no-op "
                    "parameter on one page), Special:AllPages&page=K a different listing per K, Special:Recent "
                    "reads returnto; the truth file then lists both rules under \"wiki_valid\" and \"wiki_invalid\"")
    sm.add_argument("--fresh-links", action="store_true", help="every page served links to a URL made for that "
                    "answer (/s0?from=N), as real sites' 'from' views and tokens do: each fetch shows new links")
    return sm


def run(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.sim.site import SimSite, start

    site = SimSite(traps=a.traps, wiki=a.wiki, fresh_links=a.fresh_links)
    if a.truth:
        from dustbuster.sim.traps import TRAP_TRUTH
        from dustbuster.sim.wiki import WIKI_TRUTH

        truth = site.truth() | ({"trap_invalid": TRAP_TRUTH["invalid"]} if a.traps else {})
        truth |= {"wiki_valid": WIKI_TRUTH["valid"], "wiki_invalid": WIKI_TRUTH["invalid"]} if a.wiki else {}
        Path(a.truth).write_text(json.dumps(truth, indent=1))
    if a.write_log:
        port = a.log_port or a.port
        Path(a.write_log).write_text("\n".join(site.log_lines(a.lines, port=port if port != 80 else None)) + "\n")
        if not a.quiet:
            sys.stderr.write(f"wrote {a.lines} lines to {a.write_log}\n")
        return 0

    async def serve():
        runner, port = await start(site, a.host, a.port)
        sys.stderr.write(f"simulated site on http://{a.host}:{port}/ (hosts {', '.join(site.hosts)})\n")
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            await runner.cleanup()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0
