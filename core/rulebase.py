"""What every rule type shares: the statuses (docs/rules.md) and their check."""

from __future__ import annotations

from .errors import RuleError

STATUSES = ("likely", "valid", "invalid")


def check_status(status: str) -> None:
    if status not in STATUSES:
        raise RuleError(f"status must be one of {STATUSES}, not {status!r}")


def apply_to_url(w: str, rewrite) -> str:
    """Run ``rewrite`` (a function of a plain URL) on a wrapped URL ``^url$``; ``w`` itself when
    nothing changed (so callers can compare by identity or equality)."""
    url = w[1:-1]
    out = rewrite(url)
    return w if out == url else w[0] + out + w[-1]
