"""The repository's layout rules (docs/architecture.md), checked without importing our code.

One import namespace, ``dustbuster.*``; the layers are top-level folders, linked into the package
as ``dustbuster/<layer>`` -> ``../<layer>`` (symbolic links: the package is a plain folder tree).  Every check here reads files: the Python
sources through :mod:`ast`, pyproject.toml through :mod:`tomllib`.  The last one builds a wheel
(a few seconds) and looks inside it.

The rules:

* the import rule: ``core`` imports nothing of ours but itself; ``logs``, ``fetch``, ``state`` and
  ``stream`` import only the core (and themselves); ``sim`` only the core; ``agents`` and the CLI
  (``dustbuster/``) sit on top and may import any layer;
* ``dustcanon.py`` imports only the standard library (crawlers copy it alone);
* no function over 60 lines but the allow-listed ones; modules over 400 lines are listed for
  review (a warning), never failed on size alone;
* ``bench/`` and ``tests/`` are outside the package and do not import each other; the package does
  not import either;
* nothing imports the old top-level names (``dust``, ``stream``, ...): everything says ``dustbuster.``;
* pyproject.toml installs ``dustbuster`` and its subpackages (found through the links) and the
  ``dustcanon`` module, nothing else, and the wheel holds every module;
* test support is ``dustdev/``, outside the package: not installed, never imported by the package
  (tests and bench import it); no module of the package imports a test tool (pytest, Hypothesis,
  docker, testcontainers) or is a test oracle or development helper by its name.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
import warnings
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]

#: import name of each layer (dustbuster.<layer>) -> its folder: the symbolic links dustbuster/<layer>
#: -> ../<folder>, the one place the mapping is declared
LAYER_DIRS: dict[str, str] = {link.name: Path(os.readlink(link)).name
                              for link in sorted((ROOT / "dustbuster").iterdir()) if link.is_symlink() and link.is_dir()}
#: the CLI package keeps its name as its folder
FOLDERS: dict[str, str] = {**{folder: f"dustbuster.{layer}" for layer, folder in LAYER_DIRS.items()},
                           "dustbuster": "dustbuster"}
TOP = "dustbuster"  #: the pseudo-layer of modules directly in dustbuster/ (the CLI and its helpers)

#: which layers each lower layer may import (always itself too).  agents and the CLI may import all.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "logs": {"core"},
    "fetch": {"core"},
    "state": {"core"},
    "stream": {"core"},
    "sim": {"core"},
    "learned": {"core"},  # the seq2seq model (JAX, optional extra [learned]): beside the core
}

#: the names the code had before it moved into one namespace; none may be imported any more
OLD_NAMES = {"dust", "stream", "state", "agents", "sim", "core", "logs", "fetch"}

REVIEW_MODULE_LINES = 400  #: over this a module is listed for review (a warning, not a failure)
MAX_FUNCTION_LINES = 60
#: functions allowed over MAX_FUNCTION_LINES, with the most lines each may have.  Only the core's hot
#: path belongs here: a function whose locals stay in one frame because splitting it costs time
#: measured in the benchmarks.
LONG_FUNCTIONS: dict[tuple[str, str], int] = {
    # Figure 1 as one pass of numpy over every URL's envelopes (tokens, prefix/suffix ids, the
    # sort into buckets, the pairs of each usable bucket): bench/bench_mine.py measures it.
    ("core/mining/detect.py", "count_supports"): 130,
}

SKIP_DIRS = {"__pycache__", "var", "build", "dist", "node_modules"}


def _repo_python_files() -> list[Path]:
    """Every .py file of the repository: hidden folders, outputs (var/, build/), egg-info and any
    virtual environment (a folder with pyvenv.cfg) left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                             and not d.endswith(".egg-info") and not (here / d / "pyvenv.cfg").exists())
        out += [here / f for f in sorted(filenames) if f.endswith(".py")]
    return out


def _package_files() -> list[Path]:
    """The .py files that the wheel installs: the package folders and dustcanon.py."""
    files = [p for folder in FOLDERS for p in sorted(_walk(ROOT / folder)) if "__pycache__" not in p.parts]
    return files + [ROOT / f"{m}.py" for m in SETUPTOOLS.get("py-modules", [])]


def _walk(folder: Path) -> list[Path]:
    """The .py files below a folder, not through the links of dustbuster/ (each layer is walked
    from its own folder)."""
    return [p for p in folder.rglob("*.py") if not any(q.is_symlink() for q in p.relative_to(ROOT).parents
                                                     if q != Path(".") and (ROOT / q).is_symlink())]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _module_name(path: Path) -> tuple[str, bool]:
    """(dotted import name, is a package __init__) of a file under a package folder."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    base = FOLDERS[parts[0]]
    rest = list(parts[1:])
    is_pkg = bool(rest) and rest[-1] == "__init__"
    if is_pkg:
        rest.pop()
    return ".".join([base, *rest]), is_pkg


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module name a file imports, relative imports resolved: (line, dotted name).
    ``from X import a, b`` gives ``X.a`` and ``X.b`` (a name may be a submodule; the first parts
    decide the layer either way)."""
    tree = ast.parse(path.read_text(), str(path))
    here, is_pkg = _module_name(path) if path.relative_to(ROOT).parts[0] in FOLDERS else (None, False)
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if here is None:
                    continue  # a relative import outside the package folders: not ours to resolve
                pkg = here.split(".") if is_pkg else here.split(".")[:-1]
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out += [(node.lineno, mod if a.name == "*" else f"{mod}.{a.name}") for a in node.names]
    return out


def _layer(name: str) -> str | None:
    """The layer of a dotted name of ours (``dustbuster.stream.records`` -> ``stream``), ``TOP``
    for dustbuster itself and its direct modules (the CLI), None for a name not of ours."""
    parts = name.split(".")
    if parts[0] != "dustbuster":
        return None
    if len(parts) > 1 and parts[1] in LAYER_DIRS:
        return parts[1]
    return TOP


# --- the import rule -------------------------------------------------------------------------

@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_import_rule(layer):
    """A lower layer imports only the layers below it: the core nothing, the others only the core."""
    folder = LAYER_DIRS[layer]
    allowed = ALLOWED[layer] | {layer}
    bad = set()
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, name in _imports(path):
            other = _layer(name)
            if other is not None and other not in allowed:
                bad.add(f"{_rel(path)}:{line} imports {name} (layer {other})")
    assert not bad, (f"dustbuster.{layer} may import only {sorted(allowed)}:\n  " + "\n  ".join(sorted(bad)))


#: the core's stages, lowest first: a stage imports only the ones before it (and the core's root
#: modules, ``errors``, ``params``, ``strictjson``, below them all)
CORE_STAGES = ("urls", "model", "canon", "mining", "validation", "report")
MAX_FOLDER_MODULES = 25  #: modules in one folder of the package, at most


def _stage(name: str) -> str | None:
    """The core stage of a dotted name (``dustbuster.core.mining.detect`` -> ``mining``), ``""`` for
    the core's root modules, None outside the core."""
    parts = name.split(".")
    if parts[:2] != ["dustbuster", "core"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in CORE_STAGES else ""


def test_core_stages_import_only_down():
    """Each stage of the core imports only the stages below it (docs/architecture.md), function-level
    imports included; the root modules import no stage."""
    bad = []
    for path in _walk(ROOT / "core"):
        here = _stage(_module_name(path)[0])
        rank = CORE_STAGES.index(here) if here else -1
        for line, name in _imports(path):
            there = _stage(name)
            if there and CORE_STAGES.index(there) > rank:
                bad.append(f"{_rel(path)}:{line} imports {name} (stage {there} is above {here or 'the root'})")
    assert not bad, "\n  ".join(bad)


def test_every_core_module_is_in_a_stage_or_the_root():
    root = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert root == ["__init__.py", "errors.py", "params.py", "strictjson.py"], root
    assert sorted(p.name for p in (ROOT / "core").iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(CORE_STAGES)


def test_no_folder_of_the_package_holds_too_many_modules():
    """A folder is a room a reader walks into: past ~25 modules it wants cutting by stage."""
    crowded = {}
    for folder in FOLDERS:
        for d in [ROOT / folder, *[p for p in (ROOT / folder).rglob("*") if p.is_dir() and p.name != "__pycache__"]]:
            if d.is_symlink():
                continue
            n = len(list(d.glob("*.py")))
            if n > MAX_FOLDER_MODULES:
                crowded[_rel(d)] = n
    assert not crowded, crowded


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    """:func:`_imports` less the imports under ``if TYPE_CHECKING:`` (they never run: they only name
    the types a signature takes)."""
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for stmt in node.body for n in ast.walk(stmt)}
    lines = {n.lineno for n in ast.walk(tree) if id(n) in typing_only and isinstance(n, (ast.Import, ast.ImportFrom))}
    return [(line, name) for line, name in _imports(path) if line not in lines]


def test_no_import_cycle_between_modules():
    """The modules of the package and their imports, function-level ones included, form no cycle:
    a reader can take them in order, each after what it uses."""
    mods = {(_module_name(p)[0] if p.parent != ROOT else p.stem): p for p in _package_files()}
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        out = set()
        for _, imported in _runtime_imports(path):
            parts = imported.split(".")
            target = next((".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in mods), None)
            if target is not None and target != name and not name.startswith(target + "."):
                out.add(target)
        edges[name] = out
    cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(trail[trail.index(nxt):] + [node, nxt]) if nxt in trail else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles:\n  " + "\n  ".join(cycles)


def test_layers_are_the_mapped_folders():
    """Every layer the import rule names is a top-level folder linked from dustbuster/ under its own
    name; agents sits on top."""
    assert set(ALLOWED) | {"agents"} == set(LAYER_DIRS)
    for layer, folder in LAYER_DIRS.items():
        assert layer == folder and os.readlink(ROOT / "dustbuster" / layer) == f"../{folder}", layer
    for folder in FOLDERS:
        assert (ROOT / folder / "__init__.py").is_file(), folder


def test_the_package_is_importable_from_a_clean_checkout():
    """No install and no import hook: the repository root on sys.path is enough (the links), as for
    an editor, a type checker or ``python -m pytest`` in a fresh clone."""
    code = "import dustbuster.core.mining.mine as m, dustbuster.stream.settings as s; print(m.__file__, s.__file__)"
    no_hook = "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]"
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0] = [{str(ROOT)!r}]; {no_hook}\n{code}"],
                         capture_output=True, text=True, cwd="/", timeout=120)
    assert out.returncode == 0 and str(ROOT / "dustbuster" / "core") in out.stdout, out.stderr[-2000:]


def test_dustcanon_imports_only_the_standard_library():
    """dustcanon.py is copied into crawlers alone: the standard library is all it may import."""
    bad = [f"dustcanon.py:{line} imports {name}" for line, name in _imports(ROOT / "dustcanon.py")
           if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "__future__"
           and not name.startswith("dustcanon")]
    assert not bad, "\n".join(bad)


# --- sizes -----------------------------------------------------------------------------------

def test_long_modules_are_listed_for_review():
    """A module's size is a reason to look at it, not a cap to golf under: modules over
    REVIEW_MODULE_LINES are listed as a warning (``pytest -rw``) for a reviewer to judge whether
    they hold more than one idea.  Nothing fails on size alone."""
    long = [f"{_rel(p)}: {n} lines" for p in _package_files()
            if (n := len(p.read_text().splitlines())) > REVIEW_MODULE_LINES]
    if long:
        warnings.warn(f"modules over {REVIEW_MODULE_LINES} lines, to review:\n  " + "\n  ".join(long), stacklevel=1)


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function, nested ones included (``outer.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def test_no_function_over_60_lines():
    """Lines from ``def`` to the function's last line, docstring and nested functions included."""
    long = []
    for path in _package_files():
        for qual, node in _functions(ast.parse(path.read_text(), str(path))):
            n = node.end_lineno - node.lineno + 1
            limit = LONG_FUNCTIONS.get((_rel(path), qual), MAX_FUNCTION_LINES)
            if n > limit:
                long.append(f"{_rel(path)}:{node.lineno} {qual}: {n} lines (limit {limit})")
    assert not long, "functions too long:\n  " + "\n  ".join(long)


def test_long_function_allow_list_names_real_functions():
    """An allow-list entry whose function was split or renamed must go."""
    for (rel, qual) in LONG_FUNCTIONS:
        names = {q for q, _ in _functions(ast.parse((ROOT / rel).read_text()))}
        assert qual in names, f"{rel} has no function {qual}: remove it from LONG_FUNCTIONS"


# --- bench, tests and the package ------------------------------------------------------------

#: an import statement inside a string of source code that a script runs in a child process
_SOURCE_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+([\w.]+)", re.M)


def _top_imports(paths: list[Path], top: str) -> list[str]:
    """Imports of the top-level name ``top``: import statements, and the import lines of source
    code held in a string (the benchmarks run such code in child processes)."""
    bad = [f"{_rel(p)}:{line} imports {name}" for p in paths for line, name in _imports(p)
           if name.split(".")[0] == top]
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                bad += [f"{_rel(p)}:{node.lineno} runs code that imports {m}"
                        for m in _SOURCE_IMPORT.findall(node.value) if m.split(".")[0] == top]
    return bad


def test_package_and_bench_do_not_import_tests():
    paths = _package_files() + sorted((ROOT / "bench").rglob("*.py"))
    bad = _top_imports(paths, "tests")
    assert not bad, "tests/ is not importable from bench/ or the package:\n  " + "\n  ".join(bad)


def test_package_does_not_import_bench():
    bad = _top_imports(_package_files(), "bench")
    assert not bad, "\n  ".join(bad)


#: top-level names only tests and development use (the ``test`` extra): never imported by the package
TEST_TOOLS = ("pytest", "hypothesis", "docker", "testcontainers", "dustdev")
#: module names of test support (oracles, reference implementations, development helpers)
TEST_SUPPORT_MODULE = re.compile(r"^(dev\w*|reference\w*|checkref|\w*oracle\w*|conftest|test_\w+)$")


@pytest.mark.parametrize("tool", TEST_TOOLS)
def test_package_does_not_import_test_tools(tool):
    """The wheel holds what runs in production: no module of it imports pytest, Hypothesis, docker,
    testcontainers or dustdev/ (where the tests' and benchmarks' support lives)."""
    bad = _top_imports(_package_files(), tool)
    assert not bad, f"test support belongs in dustdev/, not the package:\n  " + "\n  ".join(bad)


def test_no_test_support_module_in_the_package():
    bad = [_rel(p) for p in _package_files() if TEST_SUPPORT_MODULE.match(p.stem)]
    assert not bad, "test support belongs in dustdev/: " + ", ".join(bad)


def test_dustdev_is_not_installed_and_imports_neither_tests_nor_bench():
    assert (ROOT / "dustdev" / "__init__.py").is_file()
    assert "dustdev" not in FOLDERS and "dustdev" not in LAYER_DIRS.values()
    paths = sorted((ROOT / "dustdev").rglob("*.py"))
    bad = _top_imports(paths, "tests") + _top_imports(paths, "bench")
    assert not bad, "\n  ".join(bad)


def test_tests_do_not_import_bench():
    bad = _top_imports(sorted((ROOT / "tests").rglob("*.py")), "bench")
    assert not bad, "bench/ is not importable from tests/:\n  " + "\n  ".join(bad)


def test_no_import_of_the_old_top_level_names():
    bad = []
    for path in _repo_python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if isinstance(node, ast.Constant) and isinstance(node.value, str):  # code run in a child process
                names = _SOURCE_IMPORT.findall(node.value)
            bad += [f"{_rel(path)}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in OLD_NAMES]
    assert not bad, "import them as dustbuster.<name>:\n  " + "\n  ".join(bad)


# --- pyproject.toml and the wheel ------------------------------------------------------------

def test_pyproject_installs_only_dustbuster_and_dustcanon():
    """The packages are found (through the links), never listed by hand: only dustbuster.*."""
    assert SETUPTOOLS.get("py-modules") == ["dustcanon"]
    assert "package-dir" not in SETUPTOOLS
    assert SETUPTOOLS["packages"]["find"]["include"] == ["dustbuster", "dustbuster.*"]


def _source_copy(dest: Path) -> Path:
    """The files a wheel is built from, copied: pyproject.toml, README.md, dustcanon.py and the
    package folders.  Building in the working tree would leave build/ there, and setuptools puts
    whatever a stale build/lib holds into the wheel."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", *(f"{m}.py" for m in SETUPTOOLS.get("py-modules", []))):
        shutil.copy2(ROOT / name, dest / name)
    (dest / "deploy" / "kafka").mkdir(parents=True)
    shutil.copy2(ROOT / "deploy" / "kafka" / "pom.xml", dest / "deploy" / "kafka" / "pom.xml")  # linked from dustbuster/
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, dest / folder, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def test_wheel_holds_dustbuster_dustcanon_and_the_dashboard(tmp_path):
    src = _source_copy(tmp_path / "src")
    out = tmp_path / "wheel"
    base = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)]
    # without build isolation when this environment has a recent enough setuptools; else pip
    # installs the build requirements of pyproject.toml into an isolated environment
    run = subprocess.run(base[:4] + ["--no-build-isolation"] + base[4:], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        run = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    wheels = list(out.glob("dustbuster-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    tops = {n.split("/")[0] for n in names}
    dist_info = {t for t in tops if re.fullmatch(r"dustbuster-[^/]+\.dist-info", t)}
    assert len(dist_info) == 1 and tops == {"dustbuster", "dustcanon.py"} | dist_info, sorted(tops)
    assert "dustdev" not in tops and not [n for n in names if TEST_SUPPORT_MODULE.match(Path(n).stem)], names
    assert [n for n in names if re.fullmatch(r"dustbuster/agents/dashboard_static/[^/]+\.html", n)], \
        "the dashboard's page is not in the wheel"
    assert "dustbuster/kafka-broker.pom.xml" in names, "the broker's recipe is not in the wheel"
    # installed, away from a checkout, `dustbuster broker` builds the shipped recipe in its own home
    site = tmp_path / "site"
    zipfile.ZipFile(wheels[0]).extractall(site)
    code = ("import dustbuster.broker as b, pathlib; h = b.broker_home(); "
            "print(h, (pathlib.Path(b.__file__).parent / 'kafka-broker.pom.xml').read_text()[:5])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path), timeout=120,
                         env={**os.environ, "PYTHONPATH": str(site), "DUST_BROKER_HOME": str(tmp_path / "bh")})
    assert out.stdout.split() == [str(tmp_path / "bh"), "<?xml"], out.stderr[-2000:]
    # every module of the package folders, at its import path
    expected = {_module_name(p)[0].replace(".", "/") + ("/__init__.py" if p.name == "__init__.py" else ".py")
                for p in _package_files() if p.parent != ROOT}
    missing = sorted(expected - set(names))
    assert not missing, "modules missing from the wheel: " + ", ".join(missing)



def test_offline_commands_load_no_kafka_client_and_no_agent(tmp_path):
    """``--help`` and the offline commands start no Kafka client and load no agent: run in a fresh
    interpreter (on a tiny log; ``validate`` and ``truth`` until they stop on a missing sites file,
    after their imports), they pull in neither Faust nor aiokafka nor dustbuster.agents."""
    import subprocess
    import sys

    log = tmp_path / "a.log"
    log.write_text('1.2.3.4 - - [01/Jan/2026:00:00:00 +0000] "GET /a?x=1 HTTP/1.1" 200 10\n' * 3)
    rules = tmp_path / "r.json"
    rules.write_text('{"schema": "dustbuster/ruleset@1", "site": "s.test", "version": 1, "rules": []}')
    runs = [["--help"], ["mine", str(log), "--site", "s.test", "-q"],
            ["validate", str(log), "--site", "s.test", "--sites", str(tmp_path / "none.json"), "-q"],
            ["truth", str(log), "--site", "s.test", "--sites", str(tmp_path / "none.json"), "-o", str(tmp_path / "t"), "-q"],
            ["canonize", "--rules", str(rules), "-q"]]
    for argv in runs:
        code = ("import sys, contextlib, io\nfrom dustbuster.cli import main\n"
                "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
                "    try:\n        main(sys.argv[1:])\n    except (SystemExit, Exception):\n        pass\n"
                "print(sorted(m for m in sys.modules if m.split('.')[0] in ('faust', 'aiokafka') "
                "or m.startswith('dustbuster.agents')))")
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                             input="http://s.test/a\n")
        assert out.stdout.strip() == "[]", (argv, out.stdout)
