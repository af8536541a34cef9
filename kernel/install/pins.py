"""Publisher keys seen before: a gallery that starts handing out another key for a publisher
this user already installed from is refused, unless the user accepts the new key.

The pins are the fingerprints recorded on this user's own installations (migration 0012),
so there is no second table to keep in step with what is installed, and another user's
install or re-install of the same bundle can neither clear nor replace them.
"""

from __future__ import annotations

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import BundleVersion, Installation
from sqlalchemy import select


def pinned_keys(store: Store, user_id: int, gallery: str, publisher: str) -> set[str]:
    with store.session() as s:
        return set(s.scalars(
            select(Installation.publisher_fingerprint)
            .join(BundleVersion, BundleVersion.id == Installation.bundle_id)
            .where(Installation.user_id == user_id, Installation.source == gallery,
                   BundleVersion.publisher == publisher, Installation.publisher_fingerprint.is_not(None))
        ))


def check_pinned_key(
    store: Store, user_id: int, gallery: str, publisher: str, fingerprint: str, accept_new_key: bool
) -> None:
    seen = pinned_keys(store, user_id, gallery, publisher)
    if seen and fingerprint not in seen and not accept_new_key:
        raise DreamerError(
            "signature_invalid",
            f"{gallery} now gives publisher {publisher} the key {fingerprint}, but bundles of {publisher} you installed "
            f"were signed with {', '.join(sorted(seen))}; if {publisher} confirms the new key, install again with --accept-new-key",
        )
