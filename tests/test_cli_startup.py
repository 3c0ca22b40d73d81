"""The command line imports only the command it runs (issue 25: start-up), and importing a small
core module does not import the engine."""

from __future__ import annotations

import json
import subprocess
import sys

from dustbuster.cli import COMMAND_MODULES, requested
from tests.conftest import ROOT


def test_the_command_named_on_the_line():
    assert requested(["mine", "x.log"]) == "mine"
    assert requested(["-v", "-q", "sim-site", "--port", "0"]) == "sim-site"
    assert requested(["mine", "-h"]) == "mine"
    assert requested(["-h", "mine"]) is None  # the top-level help: every command listed
    assert requested(["--", "mine"]) is None
    assert requested(["bogus"]) is None and requested([]) is None
    assert [n for n, _ in COMMAND_MODULES][:2] == ["mine", "validate"]


def _imported_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('dustbuster', 'numpy')))))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_command_imports_no_other_command():
    mods = _imported_after("import contextlib, io\nfrom dustbuster.cli import main\n"
                           "with contextlib.redirect_stdout(io.StringIO()):\n"
                           "    try:\n        main(['canonize', '--help'])\n    except SystemExit:\n        pass")
    commands = {f"dustbuster.cli.{m}" for _, m in COMMAND_MODULES}
    assert "dustbuster.cli.canonize" in mods
    assert not (commands - {"dustbuster.cli.canonize"}) & set(mods)
    assert "numpy" not in mods  # canonize needs no engine


def test_core_names_on_first_use():
    mods = _imported_after("import dustbuster.core.errors")
    assert "numpy" not in mods and "dustbuster.core.mining.detect" not in mods
    mods = _imported_after("from dustbuster.core import mine\nassert callable(mine) and mine.__name__ == 'mine'\n"
                           "import types, dustbuster.core.mining.mine as m\n"
                           "assert isinstance(m, types.ModuleType) and m.mine is mine")
    assert "dustbuster.core.mining.mine" in mods
