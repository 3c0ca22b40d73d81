"""``dustbuster``: the command line.

One module per command, each with the same two functions: ``add_parser(subparsers, common)``
adds its parser (``common`` is the parent parser of the -v/-q options) and returns it, and
``run(args) -> int`` runs it.  A command module imports at its top only what building its parser
needs; what it runs (Kafka, Faust, the fetcher) is imported inside ``run``, so the commands that
need no Kafka (mine, canonize --rules) import no Faust.
"""

from __future__ import annotations

import argparse
import sys

from dustbuster import __version__
from dustbuster.core.errors import DustError

from . import (broker, candidates, canonize, common, eval, export, feed, frontier, keys, learn, mine, report, rules,
               sim_site, truth, validate, worker)

#: the commands in the order ``dustbuster --help`` lists them
COMMANDS = (mine, validate, truth, eval, report, learn, canonize, rules, export, frontier, broker, feed, candidates,
            sim_site, worker, keys)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dustbuster",
        description="Learn per-site DUST rules (Different URLs with Similar Text) from logs, "
        "validate them against the live site, and canonize URLs for crawlers.",
    )
    ap.add_argument("--version", action="version", version=f"dustbuster {__version__}")
    common.add_global_options(ap)
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    parent = common.parent_parser()
    for command in COMMANDS:
        command.add_parser(sub, parent).set_defaults(run=command.run)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    common.setup_logging(a.verbose)
    if not a.cmd:
        ap.print_help()
        return 2
    try:
        return a.run(a)
    except DustError as exc:
        sys.stderr.write(f"dustbuster {a.cmd}: error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


__all__ = ["COMMANDS", "build_parser", "main"]
