"""One format table (issue 24): every list of log formats is read off ``dustbuster.logs.formats.TABLE``,
a format added to the table reaches the sniffer, the reader, FORMATS and ``mine --help`` with no
other edit, and logs/ has no import cycle (the parsers do not know of the table)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from dustbuster.logs import fastparse, parsers
from dustbuster.logs.formats import (BY_NAME, FAST_PARSERS, FORMATS, HOSTLESS, PARSERS, SNIFF_ORDER, TABLE,
                                     format_help, header_check, is_header_line, sniff)
from dustbuster.logs.record import Context

from dustdev.parsers import REFERENCE_PARSERS

ROOT = Path(__file__).resolve().parents[1]
LOGS_DIR = ROOT / "logs"


def test_derived_lists_are_the_table():
    names = [f.name for f in TABLE]
    assert len(set(names)) == len(names)
    assert list(FORMATS) == names == list(BY_NAME) == list(PARSERS) == list(REFERENCE_PARSERS)
    assert HOSTLESS == {f.name for f in TABLE if f.hostless}
    assert FAST_PARSERS == {f.name: f.fast for f in TABLE if f.fast}
    assert all(PARSERS[f.name] is (f.fast or f.parser) for f in TABLE)
    assert all(REFERENCE_PARSERS[f.name] is f.parser for f in TABLE)
    assert set(SNIFF_ORDER) == {f.name for f in TABLE if f.sniff_rank is not None}
    ranks = [BY_NAME[n].sniff_rank for n in SNIFF_ORDER]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_the_table_is_what_it_was():
    """The formats, hostless ones, fast paths and sniff order before the table (behaviour unchanged)."""
    assert FORMATS == ("common", "combined", "vhost", "jsonl", "heritrix", "cdx", "cdxj", "tsv", "urls")
    assert HOSTLESS == {"common", "combined"}
    assert tuple(FAST_PARSERS) == ("common", "combined", "vhost", "jsonl", "tsv")
    assert SNIFF_ORDER == ("combined", "vhost", "common", "jsonl", "heritrix", "cdxj", "cdx")
    assert all(f.parser is getattr(parsers, "parse_" + f.name) for f in TABLE)
    assert all(f.fast is getattr(fastparse, "parse_" + f.name) for f in TABLE if f.fast)


def test_help_lists_every_format():
    help_text = subprocess.run([sys.executable, "-m", "dustbuster", "mine", "--help"], capture_output=True,
                               text=True, check=True, cwd=ROOT).stdout
    flat = " ".join(help_text.split())
    assert format_help() in flat
    assert all(name in format_help() for name in FORMATS)


def test_header_checks():
    tsv = "host\tlogname\ttime\tmethod\turl\tresponse\tbytes"
    assert is_header_line("tsv", tsv) and not is_header_line("common", tsv) and not is_header_line(None, tsv)
    assert is_header_line("cdx", " CDX N b a m s k r M S V g") and not is_header_line("cdx", tsv)
    assert header_check("auto")(tsv) and header_check("tsv")(tsv) and not header_check("tsv")("a b c")
    assert header_check("combined") is None and header_check("no-such-format") is None
    assert sniff([tsv, "x\t-\t-\tGET\t/a\t200\t5"], Context(site="s.test")) == "tsv"


#: a format of our own making ("pipe": ``METHOD|TARGET|STATUS``), added to a copy of the table
NEW_FORMAT = '''
def _parse_pipe(line, ctx):
    f = line.split("|")
    if len(f) != 3 or not f[2].isdigit():
        raise ParseError("malformed", "not a pipe line")
    return LogRecord(absolute_url(f[1], None, ctx), int(f[2]), None)


TABLE = TABLE + (LogFormat("pipe", _parse_pipe, hostless=True, sniff_rank=99, note="method|target|status"),)
'''

PROBE = r'''
import importlib.util, io, sys, contextlib
spec = importlib.util.spec_from_file_location("dustbuster.logs.formats", {path!r})
mod = importlib.util.module_from_spec(spec)
src = open({path!r}).read()
cut = src.index("\nBY_NAME")
src = src[:cut] + "\nfrom .record import absolute_url\n" + {new!r} + src[cut:]
sys.modules["dustbuster.logs.formats"] = mod
exec(compile(src, {path!r}, "exec"), mod.__dict__)
from dustbuster.logs.reader import read_urllist
from dustbuster.cli import main
from dustdev.parsers import REFERENCE_PARSERS
print("FORMATS", mod.FORMATS[-1], "pipe" in REFERENCE_PARSERS, "pipe" in mod.HOSTLESS)
print("SNIFF", mod.sniff(["GET|/a|200", "GET|/b|200"], mod.Context(site="s.test")))
ul, stats = read_urllist([{log!r}], site="s.test")
print("READ", sorted(ul.infos), stats.formats)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["mine", "--help"])
    except SystemExit:
        pass
print("HELP", "pipe (method|target|status)" in " ".join(out.getvalue().split()))
'''


def test_a_new_format_needs_only_its_table_entry(tmp_path):
    """A format added to the table (and nothing else) is in FORMATS, the reference table, HOSTLESS,
    the sniffer, the file reader and ``mine --help``."""
    log = tmp_path / "pipe.log"
    log.write_text("GET|/a?x=1|200\nGET|/b|200\n")
    code = PROBE.format(path=str(LOGS_DIR / "formats.py"), new=NEW_FORMAT, log=str(log))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert lines["FORMATS"] == "pipe True True"
    assert lines["SNIFF"] == "pipe"
    assert lines["READ"] == "['http://s.test/a?x=1', 'http://s.test/b'] {'%s': 'pipe'}" % log
    assert lines["HELP"] == "True"


#: imports inside a function that run back up logs/'s import order (deferred: no cycle at import
#: time): none since the line loop moved out of the reader (lineloop.py), under both readers
DEFERRED_BACK_EDGES: set[tuple[str, str]] = set()


def _imported_module(node: ast.AST, here: set[str]) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        if node.level == 1:
            mods = [node.module] if node.module else [a.name for a in node.names]
        elif node.level == 0 and (node.module or "").startswith("dustbuster.logs"):
            rest = node.module.split(".")[2:]
            mods = rest[:1] if rest else [a.name for a in node.names]
        else:
            mods = []
    elif isinstance(node, ast.Import):
        mods = [a.name.split(".")[2] for a in node.names if a.name.startswith("dustbuster.logs.")]
    else:
        mods = []
    return {m.split(".")[0] for m in mods if m and m.split(".")[0] in here}


def _logs_imports(path: Path) -> tuple[set[str], set[str]]:
    """The logs/ modules a logs/ module imports when it is imported, and those its functions import."""
    here = {p.stem for p in LOGS_DIR.glob("*.py")}
    tree = ast.parse(path.read_text(), str(path))
    at_import: set[str] = set()
    todo = list(tree.body)
    while todo:  # module level, try/if blocks included, functions and classes' methods not
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        at_import |= _imported_module(node, here)
        todo += list(ast.iter_child_nodes(node))
    anywhere = set().union(*(_imported_module(n, here) for n in ast.walk(tree)))
    return at_import - {path.stem}, anywhere - at_import - {path.stem}


def _assert_acyclic(graph: dict[str, set[str]]) -> None:
    done: set[str] = set()

    def visit(mod: str, path: tuple[str, ...]) -> None:
        assert mod not in path, "import cycle in logs/: " + " -> ".join(path[path.index(mod):] + (mod,))
        if mod in done:
            return
        for dep in sorted(graph.get(mod, ())):
            visit(dep, path + (mod,))
        done.add(mod)

    for mod in sorted(graph):
        visit(mod, ())


def test_no_import_cycle_in_logs():
    """No cycle among logs/' imports at import time; the imports inside functions too form none but
    the allowed deferred back edges.  The parsers and the record know nothing of the table (before
    the table, formats.py and fastparse.py imported each other and fastparse filled PARSERS)."""
    imports = {p.stem: _logs_imports(p) for p in LOGS_DIR.glob("*.py")}
    at_import = {m: a for m, (a, _) in imports.items()}
    _assert_acyclic(at_import)
    deferred = {(m, d) for m, (_, late) in imports.items() for d in late}
    _assert_acyclic({m: at_import[m] | {d for (x, d) in deferred - DEFERRED_BACK_EDGES if x == m} for m in imports})
    assert deferred >= DEFERRED_BACK_EDGES, "a deferred back edge is gone: remove it from DEFERRED_BACK_EDGES"
    assert at_import["reader"] >= {"bulkread", "lineloop"} and "reader" not in at_import["bulkread"]
    for base in ("parsers", "fastparse", "record"):
        assert "formats" not in at_import[base] | {d for (x, d) in deferred if x == base}, base
    assert at_import["formats"] >= {"parsers", "fastparse"}
