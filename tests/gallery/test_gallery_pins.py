"""A publisher key seen before is pinned: another key for the same publisher and gallery is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.install.pins import check_pinned_key
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import BundleVersion

G = "http://gallery.test"


def test_a_changed_publisher_key_is_refused_unless_accepted(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    check_pinned_key(store, G, "acme", "ed25519:new", False)  # nothing seen yet: trust on first use
    with store.session() as s:
        s.add(BundleVersion(name="weather", version="1.0.0", kind="agent", digest="d", publisher="acme", manifest={},
                            functions=[], path="/x", source=G, publisher_fingerprint="ed25519:old"))
    check_pinned_key(store, G, "acme", "ed25519:old", False)
    with pytest.raises(DreamerError) as err:
        check_pinned_key(store, G, "acme", "ed25519:new", False)
    assert err.value.code == "signature_invalid" and "--accept-new-key" in err.value.message
    check_pinned_key(store, G, "acme", "ed25519:new", True)
    check_pinned_key(store, "http://other.test", "acme", "ed25519:new", False)
    check_pinned_key(store, G, "someone-else", "ed25519:new", False)
    store.dispose()
