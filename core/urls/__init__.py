"""URLs as the papers read them: tokens and envelopes' substrings, normalization, the URL list with
its size intervals, scopes and families of paths, queries, and the links of a page.

The lowest stage of the core: it imports only ``dustbuster.core.errors`` and ``.params``.
Papers: WWW 2007 §3 (URL lists, size intervals, tokens), thesis §4.2.
"""
