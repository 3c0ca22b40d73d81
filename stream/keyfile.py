"""The trusted keys of a file (``DUST_TRUSTED_KEYS_FILE``), read again whenever it changes, so keys
are added and revoked without restarting a consumer: base64 Ed25519 public keys separated by commas,
spaces or lines; ``#`` starts a comment.  A file that cannot be read or parsed, or holds no key,
keeps the keys read before (and says why): a half-written file never drops every site's rules, and
an emptied one never turns the checks off."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from dustbuster.core.errors import ConfigError, DustError
from dustbuster.core.model.signing import parse_key_list

if TYPE_CHECKING:
    from dustbuster.core.canon.rulebook import RuleBook

log = logging.getLogger(__name__)

#: how often a worker looks at the file (seconds)
RELOAD_S = 10.0


def parse_key_text(text: str) -> dict[str, bytes]:
    """Key id → raw key of a keys file's text (comments after ``#`` left out)."""
    return parse_key_list(" ".join(line.split("#", 1)[0] for line in text.splitlines()))


def read_key_file(path: Path) -> dict[str, bytes]:
    """The keys of the file at ``path``; ConfigError naming it when it is missing or malformed."""
    try:
        keys = parse_key_text(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read the trusted keys file {path}: {exc.strerror or exc}") from None
    except DustError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not keys:
        raise ConfigError(f"the trusted keys file {path} holds no key")
    return keys


class KeyFile:
    """Watches one keys file: :meth:`changed` gives its keys when its content changed since the
    last call (None otherwise, or when it cannot be read now: the last keys stand)."""

    def __init__(self, path: Path) -> None:
        """ConfigError when the file cannot be read at first, or holds no key."""
        self.path = Path(path)
        self.keys = read_key_file(self.path)
        self._digest: bytes | None = hashlib.sha256(self.path.read_bytes()).digest()

    def changed(self) -> dict[str, bytes] | None:
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            log.warning("trusted keys file %s cannot be read (%s): the keys read before stand", self.path, exc)
            return None
        digest = hashlib.sha256(raw).digest()
        if digest == self._digest:
            return None
        self._digest = digest  # said once per content, valid or not
        try:
            keys = parse_key_text(raw.decode("utf-8", "replace"))
        except DustError as exc:
            log.warning("trusted keys file %s is not valid (%s): the keys read before stand", self.path, exc)
            return None
        if not keys:  # no keys would mean "check nothing": an emptied file never turns the checks off
            log.warning("trusted keys file %s holds no key: the keys read before stand", self.path)
            return None
        self.keys = keys
        return keys


def apply_keys(book: "RuleBook", keys: dict[str, bytes], fixed: dict[str, bytes], source: object) -> tuple[list, list]:
    """``keys`` (a file's) with ``fixed`` (the ones set otherwise, which stay) into ``book``
    (``RuleBook.set_keys``); says what changed.  Returns (sites dropped, sites admitted)."""
    dropped, admitted = book.set_keys(fixed | keys)
    log.warning("trusted keys from %s: %s keys now; %s sites lost their rule set (key revoked)%s; %s sites admitted",
                source, len(book.keys), len(dropped), f": {', '.join(dropped[:10])}" if dropped else "", len(admitted))
    return dropped, admitted


__all__ = ["KeyFile", "RELOAD_S", "apply_keys", "parse_key_text", "read_key_file"]
