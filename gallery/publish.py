"""The publisher's side: read the archive as the gallery will, and sign its statement."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dreamer.gallery.bundle import BundleFacts, read_bundle
from dreamer.gallery.service import Upload
from dreamer.gallery.signing import sign


def signed_upload(data: bytes, key: Ed25519PrivateKey) -> tuple[Upload, BundleFacts]:
    """Check the archive locally (the same reader the gallery runs) and sign what it says."""
    facts = read_bundle(data)
    upload = Upload(facts.name, facts.version, facts.sha256, sign(key, facts.statement()), facts.scopes)
    return upload, facts
