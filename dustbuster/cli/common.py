"""What the commands of ``dustbuster`` share: the global options (-v/-q, before or after the
command), the DustBuster parameter options, logging, Kafka settings, rule files, and the hint
given when a log yields no URL."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from dustbuster.core.errors import DustError
from dustbuster.core.params import LANGUAGES, DustParams

VERBOSE_HELP = "more logging (-vv: debug)"
QUIET_HELP = "no progress bar, no summary"


def add_global_options(ap: argparse.ArgumentParser) -> None:
    """-v and -q on the top-level parser."""
    ap.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    ap.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)


def parent_parser() -> argparse.ArgumentParser:
    """The parent of every command's parser: -v and -q after the command too (SUPPRESS keeps the
    global value when they are absent)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE_HELP)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=QUIET_HELP)
    return common


def add_params(p: argparse.ArgumentParser) -> None:
    """The options of :class:`dustbuster.core.params.DustParams`, with its defaults."""
    d = DustParams()
    g = p.add_argument_group("DustBuster parameters (defaults: thesis §6.2)")
    g.add_argument("--S", type=int, default=d.S, help="max substring length in tokens (default %(default)s)")
    g.add_argument("--t-low", type=int, default=d.t_low, help="overflow threshold for ranking (default %(default)s)")
    g.add_argument("--t-high", type=int, default=d.t_high, help="overflow threshold for elimination (default %(default)s)")
    g.add_argument("--ms", type=int, default=d.ms, help="minimum support (default %(default)s)")
    g.add_argument("--mrd", type=float, default=d.mrd, help="max relative deficiency (default %(default)s)")
    g.add_argument("--mad", type=int, default=d.mad, help="max absolute deficiency (default %(default)s)")
    g.add_argument("--mw", type=int, default=d.mw, help="max window size (default %(default)s)")
    g.add_argument("--param-min-ratio", type=float, default=d.param_min_ratio, help="parameter rules: min likely-similar fraction (default %(default)s)")
    g.add_argument("--sketch-threshold", type=float, default=d.sketch_threshold, help="sketches: fraction of equal min-hashes (default %(default)s = all)")
    g.add_argument("--no-similarity", action="store_true", help="disable the LikelySimilar filter (sizes/digests)")
    g.add_argument("--validation-count", dest="n", type=int, default=d.n,
                   help="validation: N, the comparisons that decide a rule (Figure 3; default %(default)s)")
    g.add_argument("--epsilon", type=float, default=d.epsilon,
                   help="validation: the refutation threshold ε (Figure 3; default %(default)s)")
    g.add_argument("--size-slack", type=float, default=d.size_slack,
                   help="LikelySimilar on sizes: intervals closer than this fraction of the larger size overlap "
                        "(default %(default)s; 0 = the paper's exact test)")
    g.add_argument("--language", choices=LANGUAGES, default=d.language,
                   help="rule language: 'paper' = substring rules + global parameter rules (WWW 2007, thesis §5.3); "
                        "'extended' adds scoped parameter, query, case and pattern rules (docs/rules.md; default %(default)s)")


def params(a: argparse.Namespace) -> DustParams:
    """The DustParams of the options :func:`add_params` added."""
    return DustParams(
        S=a.S, t_low=a.t_low, t_high=a.t_high, ms=a.ms, mrd=a.mrd, mad=a.mad, mw=a.mw,
        param_min_ratio=a.param_min_ratio, sketch_threshold=a.sketch_threshold,
        similarity=not a.no_similarity, size_slack=a.size_slack, language=a.language,
        n=a.n, epsilon=a.epsilon,
    )


class RetriedLeaderChange(logging.Filter):
    """Drops aiokafka's warning for a send retried because a partition's leader is being elected
    (right after topics are created, or when a broker moves leadership): the client retries it by
    itself, and a send that still fails is reported as an error by our code.  -v shows them."""

    RETRIABLE = ("NotLeaderForPartitionError", "LeaderNotAvailableError")

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not ("retrying" in msg and any(e in msg for e in self.RETRIABLE))


def setup_logging(verbose: int) -> None:
    """Warnings on stderr; -v adds INFO, -vv DEBUG."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not verbose:
        logging.getLogger("aiokafka.producer.sender").addFilter(RetriedLeaderChange())


def settings(a: argparse.Namespace, **overrides):
    """The DUST_* settings, with --bootstrap (when the command has it) and ``overrides`` on top."""
    from dustbuster.stream.settings import Settings

    return Settings.from_env(kafka_bootstrap=getattr(a, "bootstrap", None), **overrides)


def read_doc(path: str) -> dict:
    """A rule file's JSON document; a missing or broken file is a DustError."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DustError(f"no such rule file: {path}") from None
    except ValueError as exc:
        raise DustError(f"{path} is not JSON: {exc}") from None


def read_rules(path: str, what: str = "rule file") -> tuple[dict, list]:
    """A rule document and its rules (dustbuster.core.model.rules.rules_from_document); a missing file is a
    ConfigError, a broken one a DustError naming the file."""
    from dustbuster.core.errors import ConfigError, RuleError
    from dustbuster.core.model.rules import rules_from_document

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        return doc, rules_from_document(doc)
    except FileNotFoundError:
        raise ConfigError(f"no such {what}: {path}") from None
    except (ValueError, RuleError) as exc:
        raise DustError(f"{path}: not a rule document: {exc}") from None


def add_url_lists(p: argparse.ArgumentParser) -> None:
    """``--urls FILE``: URL lists, read as the format ``urls``."""
    p.add_argument("--urls", metavar="FILE", action="append", default=[],
                   help="a URL list (one URL or path per line: a crawler's frontier, a sitemap's URLs; repeatable): "
                   "URLs without sizes, never substring evidence (Figure 1); the validator samples them")


def read_url_lists(ul, files: list[str], site: str | None, scheme: str, stats=None) -> int:
    """Add the URLs of ``files`` (format ``urls``) to ``ul`` as listed URLs; returns how many new."""
    if not files:
        return 0
    from dustbuster.logs.reader import iter_records

    before = len(ul.listed)
    for rec in iter_records(files, "urls", site, scheme, stats=stats):
        ul.list_only(rec.url)
    return len(ul.listed) - before


def nothing_read_hint(logs: list[str], read: dict) -> str:
    """One line that says why no URL came out of the logs, and what to do."""
    names = ", ".join(logs)
    rejected = read.get("rejected") or {}
    if not read.get("lines"):
        return f"no URL read: {names} is empty"
    if rejected.get("no_host"):
        return f"no URL read from {names}: its lines carry no host ({rejected['no_host']} rejected): pass --site HOST"
    if read.get("dropped_status") and not rejected:
        return f"no URL read from {names}: every request failed (status >= 400)"
    why = ", ".join(f"{k}={v}" for k, v in rejected.items()) or "nothing parsed"
    return f"no URL read from {names} ({why}): check the format (--format) or see the lines with --rejects FILE"
