"""What every rule type shares: the statuses (docs/rules.md) and their check."""

from __future__ import annotations

from dustbuster.core.errors import RuleError
from dustbuster.core.urls.tokens import END, START, display, shrinks

STATUSES = ("likely", "valid", "invalid")


def check_status(status: str) -> None:
    if status not in STATUSES:
        raise RuleError(f"status must be one of {STATUSES}, not {status!r}")


class AnchoredPair:
    """What the two rule types of strings α → β in internal form share (SubstringRule, PatternRule):
    anchors shared by α and β (WWW 2007 §3), direction, display, and the checks of the pair."""

    alpha: str
    beta: str

    def check_pair(self) -> None:
        for s in (self.alpha, self.beta):
            body = s[1:] if s.startswith(START) else s
            body = body[:-1] if body.endswith(END) else body
            if START in body or END in body:
                raise RuleError(f"misplaced anchor in {display(s)!r}")
        if self.anchor_start != self.beta.startswith(START) or self.anchor_end != self.beta.endswith(END):
            raise RuleError(f"alpha and beta must share anchors: {self.text}")
        if self.alpha == self.beta:
            raise RuleError(f"alpha equals beta: {self.text}")

    @property
    def anchor_start(self) -> bool:
        return self.alpha.startswith(START)

    @property
    def anchor_end(self) -> bool:
        return self.alpha.endswith(END)

    @property
    def direction(self) -> str:
        return "shrinking" if shrinks(self.alpha, self.beta) else "growing"

    def is_inverse_of(self, other: object) -> bool:
        """``other`` undoes it: the same type, α and β swapped (core/canon/rulecheck.py)."""
        return type(other) is type(self) and self.alpha == other.beta and self.beta == other.alpha

    @property
    def text(self) -> str:
        return f'"{display(self.alpha)}" → "{display(self.beta)}"'


def apply_to_url(w: str, rewrite) -> str:
    """Run ``rewrite`` (a function of a plain URL) on a wrapped URL ``^url$``; ``w`` itself when
    nothing changed (so callers can compare by identity or equality)."""
    url = w[1:-1]
    out = rewrite(url)
    return w if out == url else w[0] + out + w[-1]
