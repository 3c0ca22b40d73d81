"""dustbuster.core: the pure DustBuster core (no Kafka, no HTTP, no RocksDB).

Papers: Bar-Yossef, Keidar, Schonfeld, "Do not crawl in the DUST", WWW 2007, and Schonfeld's
2006 thesis.  Section numbers in docstrings refer to them.

The core is cut by stage, and each stage imports only the stages before it
(docs/architecture.md draws the graph; tests/test_layout.py keeps it so):

==============  ==========================================================================
``urls``        tokens, envelopes' substrings, normalization, the URL list, scopes, queries
``model``       the rule types, their registry and JSON form, evidence, versions, signatures
``canon``       canonization (thesis Figure 5.5), rule-set checks, admission, the rule book
``mining``      Figure 1 (``detect``), Figure 2 (``refine``), parameter rules, ``mine``
``validation``  Figures 3 and 4 (``validate``), page identity and sketches, set-level checks
``report``      the content truth, the papers' metrics, exports for other crawlers
==============  ==========================================================================

``errors``, ``params`` and ``strictjson`` sit at the root, below every stage.

The names below are the public API, imported on first use (PEP 562) so that importing one small
module (``dustbuster.core.errors``) does not import numpy and the engine:

>>> from dustbuster.core import URLList, mine
>>> ul = URLList()
>>> for i in range(40):
...     ul.add(f"http://s.test/story?id={i}", size=1000 + i)
...     ul.add(f"http://s.test/story_{i}", size=1000 + i)
>>> [r.text for r in mine(ul).substring_rules()]
['"^http://s.test/story?id=" → "^http://s.test/story_"']
"""

from __future__ import annotations

import importlib

#: exported name → the module (under dustbuster.core) that defines it
_EXPORTS = {
    "Canonized": "canon.canonize", "Canonizer": "canon.canonize", "canonical": "canon.canonize",
    "canonize": "canon.canonize", "redundancy": "canon.canonize",
    "Pair": "model.pair", "count_supports": "mining.detect", "detect": "mining.detect",
    "ConfigError": "errors", "DustError": "errors", "ParseError": "errors", "RuleError": "errors",
    "MineResult": "mining.mine", "mine": "mining.mine",
    "DustParams": "params",
    "eliminate": "mining.refine", "pair_refines": "mining.refine", "rule_refines": "mining.refine",
    "ParamRule": "model.rules", "SubstringRule": "model.rules", "rule_from_json": "model.rules",
    "rules_from_document": "model.rules",
    "URLInfo": "urls.urllist", "URLList": "urls.urllist", "likely_similar": "urls.urllist",
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
