"""What a kernel checks about a downloaded bundle before anyone sees its review.

The gallery is not trusted to have done its own checks: the archive must hash to the
listed sha256, its manifest and functions must be exactly what the gallery lists
(what the user was shown while searching), and the listed publisher's key must have
signed the statement read from the archive itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dreamer.contracts.bundle_facts import BundleFacts, read_bundle
from dreamer.contracts.signing import fingerprint, sha256_hex, verify
from dreamer.contracts.archive import BundleLimits
from dreamer.contracts.errors import DreamerError


@dataclass(frozen=True)
class Verified:
    facts: BundleFacts
    publisher: str
    fingerprint: str
    gallery: str

    def provenance(self) -> dict[str, Any]:
        return {"publisher": self.publisher, "fingerprint": self.fingerprint, "gallery": self.gallery}


def verify_download(listing: Any, data: bytes, gallery: str, limits: BundleLimits | None = None) -> Verified:
    if not isinstance(listing, dict) or not isinstance(listing.get("publisher"), dict):
        raise DreamerError("protocol_error", f"the gallery at {gallery} sent a version listing of the wrong shape; nothing was installed")
    label = f"{listing.get('name')} {listing.get('version')} from {gallery}"
    actual = sha256_hex(data)
    if actual != listing.get("sha256"):
        raise DreamerError(
            "digest_mismatch", f"the archive of {label} has sha256 {actual}, not the listed {listing.get('sha256')}; "
            "it was altered, so nothing was installed"
        )
    facts = read_bundle(data, limits)
    publisher = listing.get("publisher") or {}
    for field, inside, listed in [
        ("name", facts.name, listing.get("name")),
        ("version", facts.version, listing.get("version")),
        ("publisher", facts.publisher, publisher.get("name")),
        ("manifest", facts.manifest, listing.get("manifest")),
        ("functions", facts.functions, listing.get("functions")),
        ("scopes", sorted(facts.scopes), sorted(listing.get("scopes") or [])),
    ]:
        if inside != listed:
            raise DreamerError(
                "metadata_mismatch", f"the archive of {label} differs from the gallery's listing in its {field}; "
                "nothing was installed"
            )
    key = str(publisher.get("public_key") or "")
    verify(key, str(listing.get("signature") or ""), facts.statement())
    return Verified(facts, facts.publisher, fingerprint(key), gallery)
