"""Issue 14, finding 6: another user cannot erase my gallery verification or my key pins.

Provenance (the gallery and the publisher key that signed a bundle) is kept on each
installation, not on the bundle record all users share: bob installing the same public
archive as a local upload, or from a gallery with another key, changes neither my
"verified" mark nor the key pinned for me, so a key substitution is still refused for me.

The kernel runs in-process on a real store; `provenance` is what GalleryInstaller.stage
passes after gallery/verify.py checked the signature (same shape: Verified.provenance()).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from dreamer.contracts.archive import pack
from dreamer.kernel.config import load_settings
from dreamer.kernel.core import Kernel
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.pins import check_pinned_key
from dreamer.kernel.install.registry import get_installed
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.users.accounts import create_user
from kernelproc import write_bundle

G = "http://127.0.0.1:9/gallery"
OTHER = "http://127.0.0.2:9/gallery"
CODE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def hello(ctx: Context) -> str:
    """Greets."""
    return "hello"
'''


class World:
    def __init__(self, home: Path) -> None:
        self.loop = asyncio.Runner()
        settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}", sandbox="bwrap")
        self.kernel = Kernel.build(settings)
        self.kernel.store.migrate()
        with self.kernel.store.session() as s:
            me, _ = create_user(s, "me")
            bob, _ = create_user(s, "bob")
            self.me, self.bob = Principal(me.id, "me"), Principal(bob.id, "bob")

    def install(self, who: Principal, archive: bytes, provenance: dict | None = None) -> None:
        async def go() -> None:
            staged = await self.kernel.installer.stage(who, archive, provenance=provenance)
            await self.kernel.installer.approve(who, staged["bundle_id"], [])

        self.loop.run(go())

    def verified(self, who: Principal, agent: str) -> tuple[str | None, str | None]:
        with self.kernel.store.session() as s:
            a = get_installed(s, who.user_id, agent)
            return a.source, a.publisher_fingerprint

    def refuses_key(self, who: Principal, gallery: str, fingerprint: str) -> bool:
        try:
            check_pinned_key(self.kernel.store, who.user_id, gallery, "tests", fingerprint, False)
        except DreamerError as exc:
            assert exc.code == "signature_invalid" and "--accept-new-key" in exc.message
            return True
        return False


@pytest.fixture
def kernel_world(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "home")
    yield built
    built.loop.run(built.kernel.pool.close())
    built.kernel.store.dispose()
    built.loop.close()


def _signed(fingerprint: str, gallery: str = G) -> dict:
    return {"publisher": "tests", "fingerprint": fingerprint, "gallery": gallery}


@pytest.mark.parametrize("name", ["weather", "clock"])
def test_bob_reinstalling_the_public_archive_keeps_my_verified_mark_and_pin(
    kernel_world: World, tmp_path: Path, name: str
) -> None:
    """The reproduction: my verified install, bob's local upload of the same archive, then a new key."""
    archive = pack(write_bundle(tmp_path, name, CODE, version="1.0.0"))
    kernel_world.install(kernel_world.me, archive, _signed("ed25519:alice-key"))
    kernel_world.install(kernel_world.bob, archive)  # the same files, as a local upload: not verified for bob
    assert kernel_world.verified(kernel_world.me, name) == (G, "ed25519:alice-key")
    assert kernel_world.verified(kernel_world.bob, name) == (None, None)
    # A gallery now handing out another key for the publisher is refused for me...
    assert kernel_world.refuses_key(kernel_world.me, G, "ed25519:mallory-key")
    assert not kernel_world.refuses_key(kernel_world.me, G, "ed25519:alice-key")
    # ...and bob never installed from it, so nothing is pinned for him by my install.
    assert not kernel_world.refuses_key(kernel_world.bob, G, "ed25519:mallory-key")


def test_bob_installing_with_another_key_does_not_move_my_pin(kernel_world: World, tmp_path: Path) -> None:
    archive = pack(write_bundle(tmp_path, "weather", CODE, version="1.0.0"))
    kernel_world.install(kernel_world.me, archive, _signed("ed25519:alice-key"))
    kernel_world.install(kernel_world.bob, archive, _signed("ed25519:mallory-key"))  # bob accepted another key for himself
    assert kernel_world.verified(kernel_world.me, "weather") == (G, "ed25519:alice-key")
    assert kernel_world.verified(kernel_world.bob, "weather") == (G, "ed25519:mallory-key")
    assert kernel_world.refuses_key(kernel_world.me, G, "ed25519:mallory-key")
    assert kernel_world.refuses_key(kernel_world.bob, G, "ed25519:alice-key")


def test_provenance_follows_my_upgrade_and_rollback(kernel_world: World, tmp_path: Path) -> None:
    one = pack(write_bundle(tmp_path / "v1", "weather", CODE, version="1.0.0"))
    two = pack(write_bundle(tmp_path / "v2", "weather", CODE.replace('"hello"', '"hi"'), version="1.1.0"))
    kernel_world.install(kernel_world.me, one, _signed("ed25519:alice-key"))
    kernel_world.install(kernel_world.me, two)  # a local 1.1.0: no longer verified
    assert kernel_world.verified(kernel_world.me, "weather") == (None, None)
    kernel_world.install(kernel_world.bob, one)  # bob's upload of my old version in between
    kernel_world.loop.run(kernel_world.kernel.installer.rollback(kernel_world.me, "weather"))
    assert kernel_world.verified(kernel_world.me, "weather") == (G, "ed25519:alice-key")
    assert kernel_world.refuses_key(kernel_world.me, G, "ed25519:mallory-key")
    assert not kernel_world.refuses_key(kernel_world.me, OTHER, "ed25519:mallory-key")  # pins are per gallery


def test_bob_cannot_take_a_gallery_release_name_and_version_first(kernel_world: World, tmp_path: Path) -> None:
    """Bob uploads his own `weather 1.0.0` before I install the gallery's: mine is still the
    gallery's files, verified, in a folder of its own."""
    bobs = pack(write_bundle(tmp_path / "bob", "weather", CODE.replace('"hello"', '"bob was here"'), version="1.0.0"))
    release = pack(write_bundle(tmp_path / "gallery", "weather", CODE, version="1.0.0"))
    kernel_world.install(kernel_world.bob, bobs)
    kernel_world.install(kernel_world.me, release, _signed("ed25519:alice-key"))
    with kernel_world.kernel.store.session() as s:
        mine = get_installed(s, kernel_world.me.user_id, "weather")
        his = get_installed(s, kernel_world.bob.user_id, "weather")
    assert mine.bundle_path != his.bundle_path and mine.digest != his.digest
    assert '"hello"' in (mine.bundle_path / "weather" / "server.py").read_text()
    assert (mine.source, mine.publisher_fingerprint) == (G, "ed25519:alice-key")
