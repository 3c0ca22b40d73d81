"""Token-class rules: substring rules with one typed placeholder (beyond the papers; docs/rules.md).

The paper's rules are literal: mining a site whose page size, page number or timestamp takes many
values yields one rule per pair of values (``"=50&" → "=20&"``, ``"=100&" → "=20&"``).  A pattern
rule says it once: α holds one placeholder that stands for one URL token (WWW 2007 §3's tokens) of
a class, and β is literal or copies the value with the same placeholder (the seq2seq paper's
argument placeholders, SIGIR 2017 §2.1, in a form people can read):

* ``{digits}`` — a token of digits ``[0-9]+``;
* ``{hex}`` — a token of hexadecimal digits with at least one digit and one letter, one case;
* ``{word}`` — any alphanumeric token.

Matching is token-aligned as for substring rules; anchors are shared by α and β (§3); an α that
is not anchored at ``^`` matches in the path and query only (after ``scheme://authority``): a
placeholder rule never rewrites a host.  Applying it
rewrites the first match whose rewrite differs from the matched text (a match that already reads
as β is skipped, so ``"={digits}&" → "=20&"`` rewrites ``=20&a=5&`` at ``=5&``): the rule is
idempotent and a URL has at most as many applications as matches.  A literal ``{`` that is not a
placeholder is an ordinary character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from dustbuster.core.errors import RuleError
from dustbuster.core.model import regexforms as rx
from dustbuster.core.model.rulebase import AnchoredPair, check_status
from dustbuster.core.model.ruletype import RuleType, Unexpressible, register
from dustbuster.core.urls.scope import split_url
from dustbuster.core.urls.tokens import END, START, display

CLASSES = {
    "digits": r"[0-9]+",
    "hex": r"(?=[a-f]*[0-9])(?=[0-9]*[a-f])[0-9a-f]+|(?=[A-F]*[0-9])(?=[0-9]*[A-F])[0-9A-F]+",
    "word": r"[A-Za-z0-9]+",
}
_PH = re.compile(r"\{(" + "|".join(CLASSES) + r")\}")
_ALNUM = "A-Za-z0-9"


def token_class(token: str) -> str | None:
    """The narrowest class of an alphanumeric token: digits, hex, word (None: not a token)."""
    for name, regex in CLASSES.items():
        if re.fullmatch(regex, token):
            return name
    return None


def _compile(alpha: str) -> re.Pattern:
    parts: list[str] = []
    pos = 0
    for m in _PH.finditer(alpha):
        parts.append(re.escape(alpha[pos:m.start()]))
        parts.append(f"(?<![{_ALNUM}])(?P<v>{CLASSES[m.group(1)]})(?![{_ALNUM}])")
        pos = m.end()
    parts.append(re.escape(alpha[pos:]))
    body = "".join(parts)
    if alpha[:1].isalnum() and alpha[:1].isascii():
        body = f"(?<![{_ALNUM}])" + body
    if alpha[-1:].isalnum() and alpha[-1:].isascii():
        body += f"(?![{_ALNUM}])"
    return re.compile(body)


@register
@dataclass(frozen=True)
class PatternRule(AnchoredPair, RuleType):
    alpha: str  #: internal form (anchors as in SubstringRule), one placeholder
    beta: str  #: literal, or the same placeholder once (the value is copied)
    support: int = 0
    members: int = 0  #: literal likely rules of the family it generalises
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    type = "pattern"
    rank = 4  #: last: they generalise literal substring rules

    def __post_init__(self) -> None:
        check_status(self.status)
        found = _PH.findall(self.alpha)
        if len(found) != 1:
            raise RuleError(f"a pattern rule's alpha has exactly one placeholder, not {len(found)}: {self.text}")
        copied = _PH.findall(self.beta)
        if copied and copied != found:
            raise RuleError(f"beta may only copy alpha's placeholder {{{found[0]}}}: {self.text}")
        self.check_pair()

    @cached_property
    def _regex(self) -> re.Pattern:
        return _compile(self.alpha)

    @property
    def placeholder(self) -> str:
        return _PH.search(self.alpha).group(1)  # type: ignore[union-attr]


    @property
    def scan_key(self) -> str:
        return max(_PH.split(self.alpha)[::2], key=len)

    def output(self, value: str) -> str:
        return _PH.sub(lambda m: value, self.beta)

    def apply_internal(self, w: str) -> str:
        # an unanchored α matches in the path and query only, never in scheme://authority; matches
        # may overlap ("/5/5/" for "/{digits}/"): search again one character on
        k = 1 if w.startswith(START) else 0
        pos = 0 if self.anchor_start else k + len(split_url(w[k:])[0])
        while (m := self._regex.search(w, pos)) is not None:
            out = self.output(m.group("v"))
            if out != m.group(0):
                return w[:m.start()] + out + w[m.end():]
            pos = m.start() + 1
        return w

    def to_json(self) -> dict:
        strip = lambda s: s[1 if s.startswith(START) else 0: -1 if s.endswith(END) else None]  # noqa: E731
        return {"type": "pattern", "alpha": strip(self.alpha), "beta": strip(self.beta),
                "anchor_start": self.anchor_start, "anchor_end": self.anchor_end, "display": self.text,
                "support": self.support, "members": self.members, "direction": self.direction,
                "status": self.status, "evidence": dict(self.evidence)}

    def maps_values(self) -> bool:
        """A literal β maps every matched value to one (core/model/evidence.py)."""
        return "{" + self.placeholder + "}" not in self.beta

    def self_feeding(self) -> str | None:
        """It feeds itself when an output β(v) holds a match of α that rewrites to something else
        (``"/{digits}/" → "/{digits}/x/"``); a match that already reads as β is skipped, so a
        literal β that matches α (``"={digits}&" → "=20&"``) is fine."""
        for v in PATTERN_SAMPLES[self.placeholder]:
            out = self.output(v)
            if self.apply_internal(out) != out:
                return f"self_feeding: alpha matches its output {display(out)!r} again"
        return None

    def nutch_regexes(self) -> list[tuple[str, str]]:
        return pattern_regexes(self)

    def after_pairs(self) -> bool:
        """Decided after the pairs it generalises, unless it stands over literal pairs."""
        return "over_literals" not in (self.evidence or {})

    def site_advice(self) -> dict[str, str]:
        return {"redirect": f"a 301 from the URLs the rule rewrites to their rewritten form ({self.text})"}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "PatternRule":
        alpha, beta = obj["alpha"], obj["beta"]
        if not isinstance(alpha, str) or not isinstance(beta, str):
            raise RuleError("alpha and beta must be strings")
        pre = START if obj.get("anchor_start") else ""
        post = END if obj.get("anchor_end") else ""
        return cls(pre + alpha + post, pre + beta + post, int(obj.get("support", 0)), int(obj.get("members", 0)), **common)


#: values a pattern rule's placeholder is tried with when its outputs are checked for new matches
PATTERN_SAMPLES = {"digits": ("7", "20"), "hex": ("0a", "3F"), "word": ("x", "7", "a1")}


#: an unanchored pattern rule matches after scheme://authority (dustbuster.core.model.pattern): consumed
#: atomically, so the lazy prefix after it never starts inside the host
_NOT_HOST = r"(?>(?:[^:/?#]+://[^/?#]*)?)"


def _pattern_parts(s: str) -> tuple[str, str, str | None]:
    """(before, after, placeholder class) of an internal α or β without its anchors."""
    s = s[1:] if s.startswith(START) else s
    s = s[:-1] if s.endswith(END) else s
    m = _PH.search(s)
    return (s, "", None) if m is None else (s[:m.start()], s[m.end():], m.group(1))


def _pattern_alpha(rule: PatternRule, group: bool, value: str | None = None) -> str:
    """α as a regex on the plain URL (dustbuster.core.model.pattern's matching): the placeholder as its
    class (captured when ``group``) or as the literal token ``value``."""
    pre, post, cls = _pattern_parts(rule.alpha)
    assert cls is not None  # a pattern rule's α holds one placeholder (PatternRule.__post_init__)
    inner = rx.java_escape(value) if value is not None else ("(" if group else "(?:") + CLASSES[cls] + ")"
    body = rx.java_escape(pre) + rx.BEFORE + inner + rx.AFTER + rx.java_escape(post)
    edge = rule.alpha[:1], rule.alpha[-1:]
    return (("^" if rule.anchor_start else rx.BEFORE if rx.ALNUM.match(edge[0]) and edge[0].isascii() else "") + body
            + ("$" if rule.anchor_end else rx.AFTER if rx.ALNUM.match(edge[1]) and edge[1].isascii() else ""))


def pattern_regexes(rule: PatternRule) -> list[tuple[str, str]]:
    a = _pattern_alpha(rule, True)
    h = "" if rule.anchor_start else _NOT_HOST  # an α anchored at ^ starts at the URL's start
    bpre, bpost, copies = _pattern_parts(rule.beta)
    if copies is None:
        same = rule._regex.fullmatch(rule.beta)  # a match reading as β exactly: the rule steps over it
        if same is None:
            return [(rf"^({h}[\s\S]*?){a}", "$1" + rx.after_group(bpre))]
        b = _pattern_alpha(rule, False, same.group("v"))  # the leftmost match that does not read as β
        return [(rf"^({h}[\s\S]*?)(?!{b}){a}", "$1" + rx.after_group(bpre))]
    apre, apost, _ = _pattern_parts(rule.alpha)
    if len(apre) + len(apost) == len(bpre) + len(bpost) and len(apre) != len(bpre):
        raise Unexpressible("the output may equal the matched text for some value (the rule steps over "
                            "such a match; a regex cannot tell it from the others)")
    return [(rf"^({h}[\s\S]*?){a}", "$1" + rx.after_group(bpre) + "$2" + rx.after_group(bpost))]
