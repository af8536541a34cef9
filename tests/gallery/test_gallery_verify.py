"""What a kernel checks about a download before the review: digest, listing, signature."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from dreamer.contracts.gallery_upload import signed_upload
from dreamer.contracts.signing import public_key_text
from dreamer.gallery.verify import verify_download
from dreamer.contracts.errors import DreamerError
from gallerykit import archive_of, client_for, make_bundle, register


def test_download_checks(gallery_http, tmp_path: Path) -> None:
    alice, mallory = register(gallery_http, "alice"), register(gallery_http, "mallory")
    api = client_for(gallery_http, alice.token)
    data = archive_of(make_bundle(tmp_path, "grocery", required=["notify"]))
    api.publish(signed_upload(data, alice.key)[0], data)
    listing = api.version("grocery", "1.0.0")
    got = api.download("grocery", "1.0.0", 10**6)

    verified = verify_download(listing, got, gallery_http.url)
    assert verified.publisher == "alice" and verified.fingerprint == listing["publisher"]["fingerprint"]

    def refused(code: str, listing: dict, data: bytes) -> str:
        with pytest.raises(DreamerError) as err:
            verify_download(listing, data, gallery_http.url)
        assert err.value.code == code, err.value.message
        return err.value.message

    # An archive changed on the gallery's disk or on the way.
    assert "altered" in refused("digest_mismatch", listing, got[:-1] + bytes([got[-1] ^ 1]))
    # A listing that shows other scopes or text than the archive holds (the gallery lying about it).
    for field, value in [("scopes", []), ("functions", [])]:
        lie = copy.deepcopy(listing)
        lie[field] = value
        assert f"in its {field}" in refused("metadata_mismatch", lie, got)
    lie = copy.deepcopy(listing)
    lie["manifest"]["description"] = "Harmless."
    assert "in its manifest" in refused("metadata_mismatch", lie, got)
    # A key swapped for another one (an unknown key), or a signature that is not alice's.
    swapped = copy.deepcopy(listing)
    swapped["publisher"]["public_key"] = public_key_text(mallory.key.public_key())
    assert "not valid for the key of publisher alice" in refused("signature_invalid", swapped, got)
    forged = copy.deepcopy(listing)
    forged["signature"] = signed_upload(got, mallory.key)[0].signature
    refused("signature_invalid", forged, got)
    # Too big to download at all.
    with pytest.raises(DreamerError) as err:
        api.download("grocery", "1.0.0", 100)
    assert err.value.code == "payload_too_large"


def test_a_hostile_gallery_gets_one_sentence(tmp_path: Path) -> None:
    from fastapi import FastAPI
    from fastapi.responses import Response

    from gallerykit import serve

    app = FastAPI()

    @app.get("/v1/packages")
    def flood() -> Response:
        return Response(b"[" + b'"x",' * (3 * 1024 * 1024) + b'"x"]', media_type="application/json")

    @app.get("/v1/packages/{name}/{version}")
    def odd(name: str, version: str) -> dict:
        return {"name": name, "version": version, "publisher": "not an object", "sha256": "0"}

    for served in serve(app):
        api = client_for(served)
        with pytest.raises(DreamerError) as err:
            api.search("x")
        assert err.value.code == "protocol_error" and "was not read" in err.value.message
        with pytest.raises(DreamerError) as err:
            verify_download(api.version("x", "1.0.0"), b"", served.url)
        assert err.value.code == "protocol_error" and "wrong shape" in err.value.message


def test_an_invite_only_gallery_refuses_strangers(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from dreamer.gallery.app import create_app
    from dreamer.gallery.rules import GallerySettings
    from gallerykit import serve

    key = public_key_text(Ed25519PrivateKey.generate().public_key())
    for served in serve(create_app(GallerySettings.at(tmp_path / "g", invite="team-secret"))):
        for wrong in (None, "guess"):
            with pytest.raises(DreamerError) as err:
                client_for(served).register("eve", key, wrong)
            assert err.value.code == "unauthorized" and "by invitation" in err.value.message
        assert client_for(served).register("alice", key, "team-secret")["token"]
        served.app.state.gallery.store.dispose()
