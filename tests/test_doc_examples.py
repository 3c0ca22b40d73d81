"""The runnable examples in the public API's docstrings (as w3lib's functions carry them): each
module below has at least one, and every one gives what it shows."""

from __future__ import annotations

import doctest
import importlib

import pytest

#: the public API a user calls first: mining, canonization, the rule book, one site's validation,
#: the crawler helpers, and the one-file canonizer for crawlers
PUBLIC = ["dustbuster.core", "dustbuster.core.mining.mine", "dustbuster.core.canon.canonize",
          "dustbuster.core.canon.rulebook", "dustbuster.sitevalidation", "dustbuster.scrapy",
          "dustbuster.crawlee", "dustcanon"]


@pytest.mark.parametrize("name", PUBLIC)
def test_the_docstring_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} has no runnable example in its docstrings"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (pytest -s shows them)"
