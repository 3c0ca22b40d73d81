"""The rule model: every rule type (substring rules of WWW 2007 §4, the thesis's parameter rules
§5.3, and ours beyond them: scoped parameter, query, case and pattern rules), their registry, their
JSON form, the evidence a rule carries, versions of a published set and their signatures.

Imports only ``dustbuster.core.urls`` and the core's root modules.
"""
