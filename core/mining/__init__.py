"""Mining candidate rules from a URL list: Figure 1 (``detect``: envelopes, buckets, supports),
Figure 2 (``refine``: elimination), the thesis's parameter rules (§5.3: ``paramrules``), and
ours beyond the papers (scoped, query, case and pattern rules, their generalisation), up to
``mine``, the whole pipeline, and ``incremental``, the URL list kept in a store for the streaming
windows.

Imports only the stages below it: ``urls``, ``model`` and ``canon``.
"""
