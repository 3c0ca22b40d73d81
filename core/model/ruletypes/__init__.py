"""Rule types beyond the core's, one module each: every module here is imported by
:func:`dustbuster.core.model.ruletype.load_plugins` and registers its type with
:func:`dustbuster.core.model.ruletype.register`; nothing else in the package names it
(docs/architecture.md, "Where to add": a rule type)."""
