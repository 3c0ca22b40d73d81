"""Signed rule sets (docs/canonizer.md "Signed rule sets").

Whoever can write to the rules topic (or to a rule file, or stand between the API and a crawler)
decides what every crawler skips.  Kafka ACLs stop unauthorized producers where a deployment has
them; a signature stops everyone who lacks the validator's private key, wherever the set travels.
The validator signs each RuleSet it publishes with Ed25519 (the ``cryptography`` library); every
consumer configured with trusted public keys refuses a set that is unsigned (``unsigned``) or not
signed by one of them (``bad_signature``).  Several trusted keys may be configured: rotation.

**What is signed** (:func:`content_bytes`, reproduced by dustcanon.py with the standard library):
the document without its ``signature`` field and without ``__faust`` (the Faust record's
namespace, added on the wire), serialized by Python's ``json.dumps`` with ``sort_keys=True``,
``separators=(",", ":")`` and ``ensure_ascii=True``, as ASCII bytes.  A JSON document parsed and
serialized again gives the same bytes (Python writes floats as their shortest repr), so the
signature holds on the topic, in a file, and through the API.

**The signature field**: ``{"alg": "ed25519", "key_id": <16 hex digits>, "sig": <base64 of the
64-byte signature>}``; ``key_id`` is the first 8 bytes of SHA-256 of the raw public key, in hex
(:func:`key_id`), so a consumer finds the key among its trusted ones without trying each.

**Keys**: a private key is a PEM PKCS#8 file (``dustbuster keys`` writes one, mode 0600; ``openssl
genpkey -algorithm ed25519`` makes the same); a public key is the base64 of its 32 raw bytes (one
word for an environment variable) or a PEM ``PUBLIC KEY`` block (:func:`public_key_bytes`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any, Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dustbuster.core.errors import ConfigError, RuleSetRejected

ALG = "ed25519"
#: fields of a document that the signature does not cover: itself, and Faust's record namespace
UNSIGNED_FIELDS = ("signature", "__faust")
#: the DER head of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the raw 32-byte key follows it
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def content_bytes(doc: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers (the module's docstring)."""
    body = {k: v for k, v in doc.items() if k not in UNSIGNED_FIELDS}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def key_id(public: bytes) -> str:
    """The id of a raw 32-byte public key: the first 8 bytes of its SHA-256, in hex."""
    return hashlib.sha256(public).hexdigest()[:16]


def public_key_bytes(text: str) -> bytes:
    """The raw 32 bytes of a public key given as base64 of them or as a PEM ``PUBLIC KEY`` block;
    ConfigError otherwise."""
    body = "".join(line for line in text.strip().splitlines() if not line.startswith("-----"))
    try:
        raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"not an Ed25519 public key (base64 or PEM): {text[:60]!r}") from None
    if len(raw) == 44 and raw.startswith(SPKI_PREFIX):
        raw = raw[12:]
    if len(raw) != 32:
        raise ConfigError(f"an Ed25519 public key has 32 bytes, not {len(raw)}: {text[:60]!r}")
    return raw


def trusted_keys(texts: Iterable[str]) -> dict[str, bytes]:
    """Key id → raw public key for each key text (:func:`public_key_bytes`); empty texts skipped."""
    raws = [public_key_bytes(t) for t in texts if t.strip()]
    return {key_id(raw): raw for raw in raws}


def parse_key_list(value: str) -> dict[str, bytes]:
    """The trusted keys of a setting: base64 public keys separated by commas or white space."""
    return trusted_keys(value.replace(",", " ").split())


def load_private_key(data: bytes) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM PKCS#8 file's bytes (unencrypted); ConfigError otherwise."""
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"the signing key must be Ed25519, not {type(key).__name__}")
    return key


def raw_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def new_key() -> tuple[bytes, str]:
    """A new key pair: the private key as PEM PKCS#8 bytes, the public key as base64 text."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return pem, base64.b64encode(raw_public(key)).decode("ascii")


def sign_document(doc: Mapping[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """``doc`` with its ``signature`` field (replacing any), signed by ``key``."""
    sig = key.sign(content_bytes(doc))
    return {k: v for k, v in doc.items() if k != "signature"} | {"signature": {
        "alg": ALG, "key_id": key_id(raw_public(key)), "sig": base64.b64encode(sig).decode("ascii")}}


def verify_document(doc: Mapping[str, Any], keys: Mapping[str, bytes]) -> str:
    """The id of the trusted key that signed ``doc``; RuleSetRejected ``unsigned`` (no signature
    field) or ``bad_signature`` (another algorithm, a key not among ``keys``, a signature that does
    not verify: the document was changed, or signed by another key)."""
    sig = doc.get("signature")
    if sig is None:
        raise RuleSetRejected("unsigned", "a trusted key is configured and the set carries no signature")
    if not isinstance(sig, Mapping) or sig.get("alg") != ALG or not isinstance(sig.get("sig"), str):
        raise RuleSetRejected("bad_signature", f"not an {ALG} signature: {str(sig)[:80]!r}")
    kid = sig.get("key_id")
    if not isinstance(kid, str) or kid not in keys:
        raise RuleSetRejected("bad_signature", f"signed by key {str(kid)[:20]!r}, not a trusted one")
    try:
        raw = base64.b64decode(sig["sig"], validate=True)
        Ed25519PublicKey.from_public_bytes(keys[kid]).verify(raw, content_bytes(doc))
    except (binascii.Error, ValueError, InvalidSignature):
        raise RuleSetRejected("bad_signature", f"the signature by key {kid} does not verify") from None
    return kid


__all__ = ["ALG", "SPKI_PREFIX", "UNSIGNED_FIELDS", "content_bytes", "key_id", "load_private_key", "new_key",
           "parse_key_list", "public_key_bytes", "raw_public", "sign_document", "trusted_keys", "verify_document"]
