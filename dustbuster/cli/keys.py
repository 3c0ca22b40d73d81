"""``dustbuster keys``: a new Ed25519 key pair for signed rule sets (dustbuster.core.model.signing;
docs/canonizer.md "Signed rule sets").  The private key goes to a file only its owner can read
(mode 0600, never overwritten); the public key is printed (and written with ``--public``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dustbuster.core.errors import DustError

EPILOG = """\
examples:
  dustbuster keys -o /etc/dustbuster/rules.key          # prints the public key
  DUST_SIGN_KEY_FILE=/etc/dustbuster/rules.key dustbuster worker        # the validator signs
  DUST_TRUSTED_KEYS=<public key> dustbuster worker                       # consumers verify
  DUST_TRUSTED_KEYS=<old>,<new> ...                     # a rotation: both keys are trusted meanwhile
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    k = sub.add_parser("keys", parents=[common], help="make an Ed25519 key pair to sign rule sets",
                       description="Make an Ed25519 key pair: the validator signs rule sets with the private key "
                       "(DUST_SIGN_KEY_FILE, `validate --sign-key`), consumers trust the public key (DUST_TRUSTED_KEYS).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    k.add_argument("-o", "--output", required=True, metavar="KEY.pem",
                   help="write the private key here (PEM PKCS#8, mode 0600; an existing file is not overwritten)")
    k.add_argument("--public", metavar="KEY.pub", help="also write the public key (base64) to this file")
    return k


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.model.signing import key_id, new_key, public_key_bytes

    pem, public = new_key()
    path = Path(a.output)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise DustError(f"{path} exists: not overwritten (a key in use would be lost)") from None
    except OSError as exc:
        raise DustError(f"cannot write {path}: {exc}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    if a.public:
        Path(a.public).write_text(public + "\n", encoding="ascii")
    sys.stdout.write(public + "\n")
    if not a.quiet:
        sys.stderr.write(f"wrote the private key to {path} (mode 0600; key id {key_id(public_key_bytes(public))}); "
                         "the public key above goes in the consumers' DUST_TRUSTED_KEYS\n")
    return 0
