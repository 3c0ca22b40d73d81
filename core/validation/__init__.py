"""Validating rules by fetching pages (WWW 2007 §5, Figures 3 and 4): drawing sample URL pairs,
page identity (shingle sketches, thesis §6.3, and the identity evidence of a fetched page), a
rule's verdict, narrowing a refuted rule, made samples, and the set-level checks of a whole set.
The fetch function is given: nothing here opens a connection.

Imports only the stages below it: ``urls``, ``model``, ``canon`` and ``mining``.
"""
