"""The worker's trusted keys, read again from ``DUST_TRUSTED_KEYS_FILE`` every few seconds: a key
taken out of the file is revoked at once (every held rule set it signed is dropped and the sites
left without rules are named), a key put in admits the sets refused for want of it — no restart
(core/canon/rulebook.py ``RuleBook.set_keys``; stream/keyfile.py)."""

from __future__ import annotations

import logging

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.signing import parse_key_list
from dustbuster.stream.keyfile import RELOAD_S, KeyFile

from .context import WorkerContext

log = logging.getLogger(__name__)


def apply_keys(book: RuleBook, keys: dict[str, bytes], fixed: dict[str, bytes], source: object) -> tuple[list, list]:
    """``keys`` (the file's) with ``fixed`` (DUST_TRUSTED_KEYS) into ``book``; says what changed."""
    dropped, admitted = book.set_keys(fixed | keys)
    log.warning("trusted keys from %s: %s keys now; %s sites lost their rule set (key revoked)%s; %s sites admitted",
                source, len(book.keys), len(dropped), f": {', '.join(dropped[:10])}" if dropped else "", len(admitted))
    return dropped, admitted


def register(ctx: WorkerContext) -> None:
    """The ``dust-keys`` timer, when DUST_TRUSTED_KEYS_FILE is set."""
    path = ctx.settings.trusted_keys_file
    if path is None:
        return
    watched = KeyFile(path)
    fixed = parse_key_list(ctx.settings.trusted_keys)  # DUST_TRUSTED_KEYS's: they stay

    @ctx.app.timer(RELOAD_S, name="dust-keys")
    async def reload_keys() -> None:
        keys = watched.changed()
        if keys is None:
            return
        dropped, _ = apply_keys(ctx.book, keys, fixed, path)
        for _site in dropped:
            ctx.metrics.rule_sets_rejected.labels("key_revoked").inc()
        ctx.metrics.rule_sets.set(len(ctx.book.sites))
