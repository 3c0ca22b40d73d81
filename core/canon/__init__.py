"""Canonization (thesis Figure 5.5: the rules applied in canonization order, at most MA times) and
what makes a rule set safe to apply: self-feeding and fixed-point checks, the reach of a rule over
the test URLs, coverage, admission of a published set and the rule book of every site.

Imports only the stages below it: ``urls`` and ``model``.
"""
