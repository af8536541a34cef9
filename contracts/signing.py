"""Publisher keys and bundle signatures (ed25519, via `cryptography`).

A signature covers a *statement*, never the archive bytes alone: the canonical JSON
of the bundle's name, version, publisher, the archive's sha256 and its scopes. So a
valid signature cannot be moved to another name or version, and a gallery cannot
list other scopes than the publisher signed without the check failing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from dreamer.contracts.errors import DreamerError

STATEMENT_FORMAT = "dreamer-bundle-signature/1"


@dataclass(frozen=True)
class Statement:
    name: str
    version: str
    publisher: str
    sha256: str
    scopes: tuple[str, ...]

    def encode(self) -> bytes:
        body = {
            "format": STATEMENT_FORMAT, "name": self.name, "version": self.version, "publisher": self.publisher,
            "sha256": self.sha256, "scopes": sorted(self.scopes),
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def public_key_text(key: Ed25519PublicKey) -> str:
    """The public key as base64 of its 32 raw bytes: short enough to paste, exact to compare."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def parse_public_key(text: str) -> Ed25519PublicKey:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
        if len(raw) != 32:
            raise ValueError
        return Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError):
        raise DreamerError(
            "invalid_argument", "the public key must be base64 of a 32-byte ed25519 key (as `dreamer keys show` prints it)"
        ) from None


def fingerprint(public_key: str) -> str:
    """A short, stable name for a public key: 'ed25519:' and 32 hex digits of its sha256."""
    raw = base64.b64decode(public_key)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:32]


def sign(key: Ed25519PrivateKey, statement: Statement) -> str:
    return base64.b64encode(key.sign(statement.encode())).decode()


def verify(public_key: str, signature: str, statement: Statement) -> None:
    """Raise DreamerError('signature_invalid') unless the signature is the publisher's over this statement."""
    try:
        raw = base64.b64decode(signature.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    try:
        if len(raw) != 64:
            raise InvalidSignature
        parse_public_key(public_key).verify(raw, statement.encode())
    except InvalidSignature:
        raise DreamerError(
            "signature_invalid",
            f"the signature of {statement.name} {statement.version} is not valid for the key of publisher "
            f"{statement.publisher}; sign it again with that publisher's key",
        ) from None


# ------------------------------------------------------------------ key files


def generate_key(path: Path, *, overwrite: bool = False) -> Ed25519PrivateKey:
    """Make a new key at path (PEM, PKCS#8, mode 0600 from the first byte on)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if overwrite else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise DreamerError(
            "conflict", f"a publisher key already exists at {path}; pass --force to replace it (the gallery then needs the new key)"
        ) from None
    with os.fdopen(fd, "wb") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(pem)
    return key


def load_key(path: Path) -> Ed25519PrivateKey:
    try:
        mode = path.stat().st_mode & 0o777
        data = path.read_bytes()
    except FileNotFoundError:
        raise DreamerError("not_found", f"no publisher key at {path}; make one with `dreamer keys generate`") from None
    if mode & 0o077:
        raise DreamerError("forbidden", f"{path} is readable by others (mode {mode:o}); run `chmod 600 {path}`")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise DreamerError("invalid_argument", f"{path} is not an unencrypted ed25519 private key in PEM form") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise DreamerError("invalid_argument", f"{path} holds a key that is not ed25519")
    return key
