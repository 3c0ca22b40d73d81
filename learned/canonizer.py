"""A site's trained model as a URL → URL function (seq2seq paper §2, "we apply the model to each
URL in the crawling queue to get its canonical form"): encode with placeholders, translate, put the
arguments back (:mod:`dustbuster.core.urls.urltokens`).

Used for the paper's evaluation of the model alone (``dustbuster eval --model``) and by
``dustbuster learn propose``, which turns the rewrites into candidate rules for the validator.  No
part of the service canonizes URLs with it (by design: the model never rewrites a URL by itself).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from dustbuster.core.canon.rulecheck import is_http_url
from dustbuster.core.urls.urltokens import FunctionTokens, decode, encode

from .seq2seq import Model
from .store import load_model

log = logging.getLogger(__name__)
BATCH = 256


@dataclass(frozen=True)
class Rewrite:
    url: str  #: the model's canonical form (never the input itself)
    confidence: float


class LearnedCanonizer:
    """``canon(url)``: the model's canonical form, or ``url`` when the model keeps it, is unsure
    (confidence below ``min_confidence``) or says something that is not an http(s) URL of the
    input's arguments (an unknown token, a placeholder the input lacks, an empty output), and for
    a URL longer than the model was trained on (``Hyper.max_len`` tokens)."""

    def __init__(self, model: Model, functions: FunctionTokens, min_confidence: float = 0.0,
                 path: Path | None = None) -> None:
        self.model = model
        self.functions = functions
        self.min_confidence = min_confidence
        self.path = path
        self.memo: dict[str, str] = {}
        self.dropped = {"unsure": 0, "not_a_url": 0, "too_long": 0}

    @classmethod
    def load(cls, directory: Path, min_confidence: float = 0.0) -> "LearnedCanonizer":
        model = load_model(directory)
        meta = json.loads((Path(directory) / "model.json").read_text(encoding="utf-8")).get("meta") or {}
        return cls(model, FunctionTokens.from_json(meta.get("functions") or ()), min_confidence, Path(directory))

    def rewrites(self, urls: Iterable[str]) -> dict[str, Rewrite]:
        """The URLs the model rewrites, each to its form (batched prediction)."""
        todo = list(dict.fromkeys(urls))
        out: dict[str, Rewrite] = {}
        for k in range(0, len(todo), BATCH):
            chunk = todo[k:k + BATCH]
            enc = [encode(u, self.functions) for u in chunk]
            longest = self.model.hyper.max_len  # never trained on longer: left as they are
            short = [(u, e) for u, e in zip(chunk, enc) if len(e.tokens) <= longest]
            self.dropped["too_long"] += len(chunk) - len(short)
            for (u, e), p in zip(short, self.model.predict([e.tokens for _, e in short])):
                v = decode(p.tokens, e.args) if p.finished else None
                if v is None or not is_http_url(v):
                    self.dropped["not_a_url"] += 1
                elif v != u and p.confidence < self.min_confidence:
                    self.dropped["unsure"] += 1
                elif v != u:
                    out[u] = Rewrite(v, p.confidence)
        log.info("model rewrites %s of %s URLs (%s)", len(out), len(todo), self.dropped)
        return out

    def canonicalize_all(self, urls: Sequence[str]) -> None:
        """Predict every URL once (one batched pass) so that calls are lookups."""
        got = self.rewrites(u for u in urls if u not in self.memo)
        for u in urls:
            self.memo.setdefault(u, got[u].url if u in got else u)

    def __call__(self, url: str) -> str:
        if url not in self.memo:
            self.canonicalize_all([url])
        return self.memo[url]


__all__ = ["LearnedCanonizer", "Rewrite"]
