"""What a publisher sends a gallery besides the archive, and how the publisher makes it.

Shared by the publisher (the CLI), the gallery that checks it and the client between
them: the claims (name, version, digest, scopes) the archive must match, signed.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dreamer.contracts.bundle_facts import BundleFacts, read_bundle
from dreamer.contracts.signing import sign


@dataclass(frozen=True)
class Upload:
    """What a publisher sends besides the archive: the claims the archive must match."""

    name: str
    version: str
    sha256: str
    signature: str
    scopes: list[str]


def signed_upload(data: bytes, key: Ed25519PrivateKey) -> tuple[Upload, BundleFacts]:
    """Check the archive locally (the same reader the gallery runs) and sign what it says."""
    facts = read_bundle(data)
    upload = Upload(facts.name, facts.version, facts.sha256, sign(key, facts.statement()), facts.scopes)
    return upload, facts
