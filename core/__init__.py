"""dustbuster.core: the pure DustBuster core (no Kafka, no HTTP, no RocksDB).

Papers: Bar-Yossef, Keidar, Schonfeld, "Do not crawl in the DUST", WWW 2007, and Schonfeld's
2006 thesis.  Section numbers in docstrings refer to them.

The names below are imported on first use (PEP 562), so that importing one small module
(``dustbuster.core.errors``, ``dustbuster.core.params``) does not import numpy and the engine
(issue 25: the command line starts ~0.1 s sooner).  Three of them are also module names
(``mine``, ``detect``, ``canonize``): ``dustbuster.core.mine`` is the function, as it was when this
file imported everything, even after the module ``dustbuster.core.mine`` has been loaded
(:class:`_Core` keeps the import system from binding the module over the function).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

#: exported name → the module (under dustbuster.core) that defines it
_EXPORTS = {
    "Canonized": "canonize", "Canonizer": "canonize", "canonical": "canonize", "canonize": "canonize",
    "redundancy": "canonize",
    "Pair": "detect", "count_supports": "detect", "detect": "detect",
    "ConfigError": "errors", "DustError": "errors", "ParseError": "errors", "RuleError": "errors",
    "MineResult": "mine", "mine": "mine",
    "DustParams": "params",
    "eliminate": "refine", "pair_refines": "refine", "rule_refines": "refine",
    "ParamRule": "rules", "SubstringRule": "rules", "rule_from_json": "rules", "rules_from_document": "rules",
    "URLInfo": "urllist", "URLList": "urllist", "likely_similar": "urllist",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Core(ModuleType):
    """The package's module type: a submodule named like an exported function (``mine``) does not
    replace the function as the package's attribute when it is first imported."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == name:
            sys.modules[__name__].__dict__.pop(name, None)  # resolved again through __getattr__
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Core
