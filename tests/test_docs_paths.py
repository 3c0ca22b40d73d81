"""Every module, attribute and file that README.md and docs/*.md name exists.

What counts as a name (simple regular expressions, on the raw Markdown text):

* a dotted name ``dustbuster.a.b...`` (:data:`DOTTED`): the longest prefix that imports is the
  module, the rest must be attributes of it (``dustbuster.core.mining.detect.count_supports``).  Record
  namespaces such as ``dustbuster.raw.v1`` (ending in ``.v<digits>``) are not modules and are
  skipped;
* an old dotted module name (:data:`OLD_DOTTED`: ``dust.rules``, ``stream.logformats``...): none may
  be left, the code is ``dustbuster.*`` now.  Words whose last part is a file extension
  (``state.json``, ``sim.log``) are file names, not module names;
* a repository path (:data:`PATH`): a word that starts with one of the repository's top folders and
  a slash and ends in a slash or a file extension (``core/canon/canonize.py``, ``agents/dashboard_static/``);
  other words with a slash (``dustbuster/ruleset@1``, a schema id; ``dustbuster/rewritten``, a
  Scrapy stat) are not paths.  Paths under tests/data and the outputs of runs (bench/out,
  deploy/kafka/target, var) are skipped: a checkout does not have them all;
* a Markdown link target that is not a URL or a fragment (:data:`LINK`), resolved from the folder
  of the file that holds it.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

DOTTED = re.compile(r"(?<![\w.-])dustbuster(?:\.[A-Za-z_]\w*)+")
RECORD_NAMESPACE = re.compile(r"\.v\d+$")
OLD_DOTTED = re.compile(r"(?<![\w./-])(?:dust|stream|state|agents|sim|core|logs|fetch)(?:\.[A-Za-z_]\w*)+")
FILE_EXTENSIONS = ("py", "md", "json", "jsonl", "toml", "html", "js", "css", "sh", "xml", "png", "txt", "log",
                   "yml", "yaml", "cfg")
TOP_FOLDERS = ("core", "logs", "fetch", "state", "stream", "agents", "sim", "dustbuster", "dustdev", "bench", "tests",
               "deploy", "docs", "dust")  # dust/: the old name of core/, so a stale path fails
PATH = re.compile(r"(?<![\w./:~-])(?:%s)/[\w./-]*" % "|".join(TOP_FOLDERS))
LINK = re.compile(r"\]\(([^)\s]+)\)")
SKIP_PATHS = ("tests/data/", "bench/out/", "deploy/kafka/target", "var/")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _names() -> list[tuple[str, str]]:
    out = set()
    for doc in DOCS:
        for m in DOTTED.finditer(doc.read_text()):
            if not RECORD_NAMESPACE.search(m.group(0)):
                out.add((_rel(doc), m.group(0)))
    return sorted(out)


def _paths() -> list[tuple[str, str]]:
    out = set()
    for doc in DOCS:
        text = doc.read_text()
        for m in PATH.finditer(text):
            word = m.group(0).rstrip(".")
            last = word.rsplit("/", 1)[-1]
            if word.endswith("/") or ("." in last and last.rsplit(".", 1)[-1] in FILE_EXTENSIONS):
                out.add((_rel(doc), word))
        for m in LINK.finditer(text):
            target = m.group(1).split("#", 1)[0]
            if target and not re.match(r"[a-z][a-z0-9+.-]*:", target):
                rel = Path(os.path.relpath(doc.parent / target, ROOT)).as_posix()
                out.add((_rel(doc), rel + ("/" if target.endswith("/") else "")))
    return sorted((d, p) for d, p in out if not p.startswith(SKIP_PATHS))


def _resolve(name: str) -> str | None:
    """None when ``name`` is a module or an attribute chain of one; else what is missing."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        try:
            obj = importlib.import_module(candidate)
        except ModuleNotFoundError as exc:
            if exc.name and (candidate == exc.name or candidate.startswith(exc.name + ".")):
                continue  # not a module: try a shorter prefix
            raise  # a module that exists but cannot import something it needs
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return f"{'.'.join(parts[:i])} has no attribute {'.'.join(parts[i:])}"
            obj = getattr(obj, attr)
        return None
    return "no module"


@pytest.mark.parametrize("doc,name", _names())
def test_dotted_name_exists(doc, name):
    problem = _resolve(name)
    assert problem is None, f"{doc} names {name}: {problem}"


@pytest.mark.parametrize("doc,path", _paths())
def test_path_exists(doc, path):
    assert (ROOT / path).exists(), f"{doc} names {path}, which is not in the repository"


@pytest.mark.parametrize("doc", [_rel(d) for d in DOCS])
def test_no_old_module_names(doc):
    old = sorted({m.group(0) for m in OLD_DOTTED.finditer((ROOT / doc).read_text())
                  if m.group(0).rsplit(".", 1)[-1] not in FILE_EXTENSIONS})
    assert not old, f"{doc} names modules by their old names (say dustbuster.<layer>...): {old}"


def test_the_extraction_finds_what_it_should():
    """The regular expressions on a sample: what they take and what they leave."""
    sample = ("`dustbuster.core.mining.detect.count_supports`, (`dustbuster.raw.v1`), x-dustbuster.skipped; "
              "core/canon/canonize.py, agents/dashboard_static/ and `dustbuster/ruleset@1`, "
              "DUST_DATA_DIR/state/pNNNN, http://h/core/x.py, state.json, `stream.logformats`.")
    assert [m.group(0) for m in DOTTED.finditer(sample)] == ["dustbuster.core.mining.detect.count_supports",
                                                             "dustbuster.raw.v1"]
    assert RECORD_NAMESPACE.search("dustbuster.raw.v1")
    assert [m.group(0) for m in PATH.finditer(sample)] == ["core/canon/canonize.py", "agents/dashboard_static/",
                                                           "dustbuster/ruleset"]
    assert [m.group(0) for m in OLD_DOTTED.finditer(sample)] == ["state.json", "stream.logformats"]


def test_the_architecture_page_names_every_core_module_in_its_stage():
    """docs/architecture.md's stage table, row by row, is the core on disk: every module (and the
    rule-type plug-in folder) of each stage is named in a row of that stage, and every name there
    is a module of that stage."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## The core, stage by stage"):text.index("## Where to add")]
    rows = re.findall(r"^\| (\(root\)|`\w+`) \| (.+?) \| .+\|$", section, re.M)
    named: set[tuple[str, str]] = set()
    for stage, cells in rows:
        folder = "" if stage == "(root)" else stage.strip("`")
        named |= {(folder, m) for m in re.findall(r"`([\w/]+?(?:\.py|/))`", cells)}
    core = ROOT / "core"
    on_disk = {("", p.name) for p in core.glob("*.py") if p.name != "__init__.py"}
    for stage in (p for p in core.iterdir() if p.is_dir() and p.name != "__pycache__"):
        on_disk |= {(stage.name, p.name) for p in stage.glob("*.py") if p.name != "__init__.py"}
        on_disk |= {(stage.name, p.name + "/") for p in stage.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert named == on_disk, (f"not in the table: {sorted(on_disk - named)}; "
                              f"in the table, not on disk: {sorted(named - on_disk)}")


def test_the_readme_is_a_front_door():
    """README.md: what the tool is, the two set-up commands, an example per kind of user and where
    to read on — the figures live in docs/."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    setup = text[text.index("## Set-up"):].split("```sh", 1)[1].split("```", 1)[0]
    assert re.findall(r"^make \w+", setup, re.M) == ["make demo", "make test"]
    for user in ("site owner", "crawler operator", "streaming operator"):
        assert f"## For a {user}" in text, user
