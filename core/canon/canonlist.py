"""A URL list under a rule set: each URL replaced by its canonical form (thesis Figure 5.5), the
observations of the URLs that share one form merged (ours, beyond the papers; docs/validation.md
"Mining again under the valid rules").

Valid rules map URLs of one page onto one form, so the sizes, digests and hits of those URLs are
observations of that one page, and the list of forms is a log of the site as a crawler with the
rules would see it.  Mining it again (WWW 2007 Figures 1–2, thesis §5.3) finds what the log shows
only once those rules have run: a campaign parameter that always comes with another one
(``?utm_source=a&utm_medium=b``) has no URL without only itself in the log, and has one among the
canonical forms (``?utm_medium=b`` beside the bare page once ``remove utm_source=*`` is valid).

>>> from dustbuster.core.model.rules import ParamRule
>>> from dustbuster.core.urls.urllist import URLList
>>> ul = URLList()
>>> for u, size in (("http://s.test/a?utm_source=n&utm_medium=e", 900), ("http://s.test/a", 901),
...                 ("http://s.test/a?utm_source=f", 902)):
...     ul.add(u, 200, size)
>>> c = canonized_list(ul, [ParamRule("utm_source", "remove", status="valid")])
>>> [(u, c.info(u).interval, c.info(u).hits) for u in c]
[('http://s.test/a?utm_medium=e', (900, 900), 1), ('http://s.test/a', (901, 902), 2)]
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.model.rules import Rule, canonization_order
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.urls.urllist import URLInfo, URLList


def _copy(info: URLInfo) -> URLInfo:
    return dataclasses.replace(info, digests=set(info.digests) if info.digests else None,
                               sketches=set(info.sketches) if info.sketches else None)


def canonized_list(urllist: URLList, rules: Sequence[Rule], ma: int = DEFAULT_MA) -> URLList:
    """The list of the canonical forms of ``urllist``'s URLs under ``rules`` (module docstring), in
    the order each form was first reached; listed URLs and those logged with errors are canonized
    too (a listed form the log holds is the log's)."""
    canon = Canonizer(canonization_order(rules), ma)
    out = URLList()
    for url, info in urllist.infos.items():
        form = canon(url)
        have = out.infos.get(form)
        if have is None:
            out.infos[form] = _copy(info)
        else:
            have.merge(info)
    for url in urllist.listed:
        out.list_only(canon(url))
    out.note_errors(canon(u) for u in urllist.errors)
    return out


__all__ = ["canonized_list"]
