"""A publisher key seen before is pinned: another key for the same publisher and gallery is refused.

Pins belong to one user's installations: another user's installs neither set nor clear them."""

from __future__ import annotations

from pathlib import Path

import pytest
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.pins import check_pinned_key
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import BundleVersion, Installation, User

G = "http://gallery.test"


def test_a_changed_publisher_key_is_refused_unless_accepted(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    with store.session() as s:
        me, bob = User(name="me"), User(name="bob")
        s.add_all([me, bob])
        s.flush()
        me_id, bob_id = me.id, bob.id
    check_pinned_key(store, me_id, G, "acme", "ed25519:new", False)  # nothing seen yet: trust on first use
    with store.session() as s:
        bv = BundleVersion(name="weather", version="1.0.0", kind="agent", digest="d", publisher="acme", manifest={},
                           functions=[], path="/x")
        s.add(bv)
        s.flush()
        s.add(Installation(user_id=me_id, agent="weather", bundle_id=bv.id, source=G, publisher_fingerprint="ed25519:old"))
    check_pinned_key(store, me_id, G, "acme", "ed25519:old", False)
    with pytest.raises(DreamerError) as err:
        check_pinned_key(store, me_id, G, "acme", "ed25519:new", False)
    assert err.value.code == "signature_invalid" and "--accept-new-key" in err.value.message
    check_pinned_key(store, me_id, G, "acme", "ed25519:new", True)
    check_pinned_key(store, me_id, "http://other.test", "acme", "ed25519:new", False)
    check_pinned_key(store, me_id, G, "someone-else", "ed25519:new", False)
    # Bob never installed from acme: my pin is mine, not his (and his would not be mine).
    check_pinned_key(store, bob_id, G, "acme", "ed25519:new", False)
    store.dispose()
