"""dustbuster.core: the pure DustBuster core (no Kafka, no HTTP, no RocksDB).

Papers: Bar-Yossef, Keidar, Schonfeld, "Do not crawl in the DUST", WWW 2007, and Schonfeld's
2006 thesis.  Section numbers in docstrings refer to them.
"""

from .canonize import Canonized, Canonizer, canonical, canonize, redundancy
from .detect import Pair, count_supports, detect
from .errors import ConfigError, DustError, ParseError, RuleError
from .mine import MineResult, mine
from .params import DustParams
from .refine import eliminate, pair_refines, rule_refines
from .rules import ParamRule, SubstringRule, rule_from_json, rules_from_document
from .urllist import URLInfo, URLList, likely_similar

__all__ = [
    "Canonized", "Canonizer", "ConfigError", "DustError", "DustParams", "MineResult", "Pair", "ParamRule",
    "ParseError", "RuleError", "SubstringRule", "URLInfo", "URLList", "canonical", "canonize",
    "count_supports", "detect", "eliminate", "likely_similar", "mine", "pair_refines",
    "redundancy", "rule_from_json", "rule_refines", "rules_from_document",
]
