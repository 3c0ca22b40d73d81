"""URL tokens with argument placeholders: the seq2seq paper's pre-processing (§2.1).

Xu, Liu and Callan (SIGIR 2017, §2.1 "URL Pre-processing", ../shared/papers/seq2seq-dedup-sigir2017.txt)
cut a URL at its delimiters, then tell *function* tokens (``user``, ``http:``: their document
frequency stays stable as the collection grows) from *argument* tokens (``123``, ``mike``: theirs
tends to zero) by the fraction of URLs holding the token, threshold 0.01, and replace the n-th
argument from the left by a placeholder ``arg_n``.  The model learns on placeholders only; its
output's placeholders are then replaced by the source URL's arguments, which "mimics copying".

Our choices (each tested in tests/test_urltokens.py):

* **delimiters are kept as tokens**, static ones (``/``) too: the paper drops ``/``, but then
  ``/browser`` and ``/browser/`` (or ``a//b``) read the same, and a rule must say exactly which
  URL it means.  ``"".join(tokens)`` is the URL again, always (the round trip).  The delimiters
  are ``/ ? & = ; . #`` in the path and query (``.`` too, so ``page.html`` is ``page . html`` and
  the suffix is a function token of its own); the scheme with ``://`` and the authority
  (``host:port``) are one token each;
* delimiters, the scheme and the authority are always function tokens (a site has few hosts);
  another token is a function token when at least ``min_df`` (the paper's 0.01) of the URLs hold
  it **and** at least ``min_urls`` (2) do: in a list of 100 URLs or fewer, 0.01 would make every
  token that occurs once a function token;
* one placeholder per distinct argument *value*, numbered from 1 in order of first occurrence
  (the paper numbers occurrences; a value that occurs twice is then unambiguous to copy), written
  ``<arg1>``, ``<arg2>``, ... — a literal token of that shape, or one of the model's special
  tokens, is always an argument, so a URL can never be mistaken for a placeholder;
* a target URL (the canonical form) is encoded against its *source's* arguments: an argument of
  the target that is a value of the source becomes that value's placeholder, any other stays
  literal (the model can only say it if it is in its vocabulary).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

#: the paper's document-frequency threshold between function and argument tokens (§2.1, Figure 2)
MIN_DF = 0.01
#: our addition: a function token occurs in at least this many URLs (module docstring)
MIN_URLS = 2
DELIMITERS = "/?&=;.#"
SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
_SPLIT = re.compile(r"([/?&=;.#])")
_PLACEHOLDER = re.compile(r"<arg([1-9][0-9]*)>")


def placeholder(k: int) -> str:
    """The k-th argument's placeholder (k from 1): the paper's ``arg_k``."""
    return f"<arg{k}>"


def is_absolute(url: str) -> bool:
    """``scheme://...``: a ``://`` before any ``/``, ``?`` or ``#`` (not one in a relative URL's query)."""
    sep = url.find("://")
    return sep > 0 and not any(c in url[:sep] for c in "/?#")


def url_tokens(url: str) -> list[str]:
    """The tokens of ``url``, delimiters included, so that ``"".join(url_tokens(u)) == u``."""
    head, rest = "", url
    sep = url.find("://")
    if is_absolute(url):
        end = len(url)
        for c in "/?#":
            k = url.find(c, sep + 3)
            if 0 <= k < end:
                end = k
        head, rest = url[:end], url[end:]
    out = [url[:sep + 3], head[sep + 3:]] if head else []
    out = [t for t in out if t]
    out += [t for t in _SPLIT.split(rest) if t]
    return out


def is_structural(token: str, position: int) -> bool:
    """Delimiters, and the scheme and authority (the first two tokens of an absolute URL)."""
    return token in DELIMITERS or (position < 2 and (token.endswith("://") or position == 1))


@dataclass(frozen=True)
class FunctionTokens:
    """The function tokens of a site (paper §2.1): every other token is an argument."""

    tokens: frozenset[str]

    def __contains__(self, token: str) -> bool:
        return token in self.tokens and not _reserved(token)

    def to_json(self) -> list[str]:
        return sorted(self.tokens)

    @classmethod
    def from_json(cls, items: Iterable[str]) -> "FunctionTokens":
        return cls(frozenset(items))


def _reserved(token: str) -> bool:
    return token in SPECIALS or _PLACEHOLDER.fullmatch(token) is not None


def function_tokens(urls: Iterable[str], min_df: float = MIN_DF, min_urls: int = MIN_URLS) -> FunctionTokens:
    """The function tokens of a URL collection by document frequency (paper §2.1, Figure 2)."""
    df: Counter[str] = Counter()
    n = 0
    structural: set[str] = set()
    for u in urls:
        n += 1
        toks = url_tokens(u)
        structural.update(t for i, t in enumerate(toks) if is_structural(t, i) and is_absolute(u))
        df.update(set(toks))
    need = max(min_urls, min_df * n)
    frequent = {t for t, c in df.items() if c >= need}
    return FunctionTokens(frozenset(t for t in frequent | structural | set(DELIMITERS) if not _reserved(t)))


@dataclass(frozen=True)
class Encoded:
    """A URL as the model reads it: tokens with placeholders, and the arguments they stand for."""

    tokens: tuple[str, ...]
    args: tuple[str, ...]  #: args[k-1] is the value of <argk>


def _is_function(token: str, position: int, functions: FunctionTokens, absolute: bool) -> bool:
    if _reserved(token):
        return False
    return token in functions or token in DELIMITERS or (absolute and is_structural(token, position))


def encode(url: str, functions: FunctionTokens) -> Encoded:
    """``url`` with each distinct argument value replaced by its placeholder (§2.1)."""
    toks = url_tokens(url)
    absolute = is_absolute(url)
    args: list[str] = []
    index: dict[str, int] = {}
    out = []
    for i, t in enumerate(toks):
        if _is_function(t, i, functions, absolute):
            out.append(t)
            continue
        if t not in index:
            args.append(t)
            index[t] = len(args)
        out.append(placeholder(index[t]))
    return Encoded(tuple(out), tuple(args))


def encode_target(url: str, source: Encoded, functions: FunctionTokens) -> tuple[str, ...]:
    """The target (canonical) URL's tokens against the source's arguments (module docstring)."""
    index: Mapping[str, int] = {v: k for k, v in reversed(list(enumerate(source.args, 1)))}
    absolute = is_absolute(url)
    out = []
    for i, t in enumerate(url_tokens(url)):
        if not _is_function(t, i, functions, absolute) and t in index:
            out.append(placeholder(index[t]))
        else:
            out.append(t)
    return tuple(out)


def decode(tokens: Sequence[str], args: Sequence[str]) -> str | None:
    """The URL the tokens spell, placeholders replaced by ``args``; None when a token is a special
    one (``<unk>``, ``<s>``, ...) or a placeholder has no argument (the model's output is then
    not a URL: the caller drops it)."""
    out = []
    for t in tokens:
        m = _PLACEHOLDER.fullmatch(t)
        if m:
            k = int(m.group(1))
            if k > len(args):
                return None
            out.append(args[k - 1])
        elif t in SPECIALS:
            return None
        else:
            out.append(t)
    return "".join(out)


__all__ = ["DELIMITERS", "Encoded", "FunctionTokens", "MIN_DF", "MIN_URLS", "SPECIALS", "decode", "encode",
           "encode_target", "function_tokens", "is_absolute", "is_structural", "placeholder", "url_tokens"]
