"""Publisher keys seen before: a gallery that starts handing out another key for a publisher
this kernel already installed from is refused, unless the user accepts the new key.

The pins are the fingerprints recorded on installed bundle versions (migration 0010), so
there is no second table to keep in step with what is installed.
"""

from __future__ import annotations

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import BundleVersion
from sqlalchemy import select


def check_pinned_key(store: Store, gallery: str, publisher: str, fingerprint: str, accept_new_key: bool) -> None:
    with store.session() as s:
        seen = set(s.scalars(select(BundleVersion.publisher_fingerprint).where(
            BundleVersion.source == gallery, BundleVersion.publisher == publisher,
            BundleVersion.publisher_fingerprint.is_not(None),
        )))
    if seen and fingerprint not in seen and not accept_new_key:
        raise DreamerError(
            "signature_invalid",
            f"{gallery} now gives publisher {publisher} the key {fingerprint}, but bundles of {publisher} installed here "
            f"were signed with {', '.join(sorted(seen))}; if {publisher} confirms the new key, install again with --accept-new-key",
        )
