"""``dustbuster``: the command line.

One module per command, each with the same two functions: ``add_parser(subparsers, common)``
adds its parser (``common`` is the parent parser of the -v/-q options) and returns it, and
``run(args) -> int`` runs it.  A command module imports at its top only what building its parser
needs; what it runs (Kafka, Faust, the fetcher) is imported inside ``run``, so the commands that
need no Kafka (mine, canonize --rules) import no Faust.  ``main`` imports the module of the one
command it is asked to run (~0.1 s less start-up for every command); ``--help`` without a
command, and an unknown command, build every parser.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from dustbuster import __version__
from dustbuster.core.errors import DustError

from . import common

#: each command's name and its module under dustbuster.cli, in the order ``dustbuster --help`` lists them
COMMAND_MODULES = (("mine", "mine"), ("validate", "validate"), ("truth", "truth"), ("eval", "eval"),
                   ("report", "report"), ("learn", "learn"), ("canonize", "canonize"), ("rules", "rules"),
                   ("export", "export"), ("frontier", "frontier"), ("broker", "broker"), ("feed", "feed"),
                   ("candidates", "candidates"), ("sim-site", "sim_site"), ("worker", "worker"), ("keys", "keys"))


def command_module(module: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{module}")


def __getattr__(name: str):
    """``COMMANDS``: every command module, imported on first use (the parsers import only theirs)."""
    if name == "COMMANDS":
        return tuple(command_module(m) for _, m in COMMAND_MODULES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def requested(argv: list[str]) -> str | None:
    """The command named on the command line (the first argument that is no option: the global
    options take no value), or None (then every parser is built: ``dustbuster -h mine`` lists
    every command, as the top-level help it asks for)."""
    names = {n for n, _ in COMMAND_MODULES}
    for arg in argv:
        if arg in ("--", "-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg if arg in names else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dustbuster",
        description="Learn per-site DUST rules (Different URLs with Similar Text) from logs, "
        "validate them against the live site, and canonize URLs for crawlers.",
    )
    ap.add_argument("--version", action="version", version=f"dustbuster {__version__}")
    common.add_global_options(ap)
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    parent = common.parent_parser()
    for name, module in COMMAND_MODULES:
        if only is None or name == only:
            command = command_module(module)
            command.add_parser(sub, parent).set_defaults(run=command.run)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = build_parser(requested(argv))
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


__all__ = ["COMMANDS", "COMMAND_MODULES", "build_parser", "main", "requested"]
