"""A likely pair (α, β): what Figure 1 (WWW 2007 §4) finds and Figure 2 refines, the candidate of a
substring rule before it is a rule.  Here, below the stages that make it (mining) and read it
(canonization's reach of a validation round), so that neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pair:
    """A likely pair (α, β) in internal form (sentinels ``\\x02``/``\\x03``), oriented α > β."""

    alpha: str
    beta: str
    support: int  #: support with T_low (ranks and filters)
    support_high: int  #: support with T_high (drives elimination)
