"""The worker's trusted keys, read again from ``DUST_TRUSTED_KEYS_FILE`` every few seconds: a key
taken out of the file is revoked at once (every held rule set it signed is dropped and the sites
left without rules are named), a key put in admits the sets refused for want of it — no restart
(core/canon/rulebook.py ``RuleBook.set_keys``; stream/keyfile.py)."""

from __future__ import annotations

from dustbuster.core.model.signing import parse_key_list
from dustbuster.stream.keyfile import RELOAD_S, KeyFile, apply_keys

from .context import WorkerContext


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
        ctx.metrics.rule_sets_rejected.labels("key_revoked").inc(len(dropped))
        ctx.metrics.rule_sets.set(len(ctx.book.sites))
