"""Publishing to a gallery served in-process: the happy path, search, yank, and every refusal."""

from __future__ import annotations

import gzip
import io
import tarfile
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from dreamer.contracts.gallery_upload import signed_upload
from dreamer.contracts.signing import sha256_hex
from dreamer.contracts.errors import DreamerError
from gallerykit import archive_of, client_for, make_bundle, register


def _stored(gallery_http) -> tuple[int, list[Path]]:
    g = gallery_http.app.state.gallery
    from dreamer.gallery.store import Version
    from sqlalchemy import func, select

    with g.store.session() as s:
        count = s.scalar(select(func.count()).select_from(Version))
    return count, sorted(p for p in g.settings.archives_dir.rglob("*") if p.is_file())


def test_publish_search_versions_download_yank(gallery_http, tmp_path: Path) -> None:
    alice = register(gallery_http, "alice")
    api = client_for(gallery_http, alice.token)
    seen: list[tuple[int, int]] = []
    for version in ("1.0.0", "1.1.0"):
        data = archive_of(make_bundle(tmp_path, "grocery", version=version, title="Grocery List"))
        upload, _ = signed_upload(data, alice.key)
        listed = api.publish(upload, data, progress=lambda done, total: seen.append((done, total)))
        assert listed["sha256"] == sha256_hex(data) and listed["publisher"]["name"] == "alice"
    assert seen and seen[-1][0] == seen[-1][1]
    notes_fns = {"format": 1, "functions": [{"name": "write", "description": "Write a note.", "examples": ["note {text}"]}]}
    api.publish(*_signed(make_bundle(tmp_path, "notes", description="Writes down notes for you.", functions=notes_fns), alice))

    # Search reaches titles, descriptions, function descriptions and examples, typos included.
    assert [p["name"] for p in api.search("grocry")] == ["grocery"]
    assert api.search("shopping list")[0]["name"] == "grocery"
    assert [p["name"] for p in api.search("notes")] == ["notes"]
    assert api.search("zebra") == []

    package = api.package("grocery")
    assert package["latest"] == "1.1.0" and [v["version"] for v in package["versions"]] == ["1.1.0", "1.0.0"]
    assert api.download("grocery", "1.0.0", 10**6) == archive_of(make_bundle(tmp_path / "again", "grocery", title="Grocery List"))

    # Yanked: no longer the latest offered, still downloadable by exact version; only its publisher may yank.
    bob = register(gallery_http, "bob")
    with pytest.raises(DreamerError) as refused:
        client_for(gallery_http, bob.token).yank("grocery", "1.1.0")
    assert refused.value.code == "forbidden"
    assert api.yank("grocery", "1.1.0", "broken")["yanked"] is True
    assert api.package("grocery")["latest"] == "1.0.0"
    assert api.search("grocery")[0]["latest"] == "1.0.0"  # the search cache saw the yank
    assert api.download("grocery", "1.1.0", 10**6)
    page = api.publisher("alice")
    assert [p["name"] for p in page["packages"]] == ["grocery", "notes"] and page["fingerprint"].startswith("ed25519:")
    assert "/v1/packages/{name}/{version}" in httpx.get(gallery_http.url + "/openapi.json").json()["paths"]


def _signed(folder: Path, who):
    data = archive_of(folder)
    upload, _ = signed_upload(data, who.key)
    return upload, data


def _hostile(members: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for member in members:
            info, body = member if isinstance(member, tuple) else (member, b"")
            tar.addfile(info, io.BytesIO(body) if body else None)
    return buffer.getvalue()


def _file(name: str, body: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(body)
    return info, body


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def test_every_refusal_stores_nothing(gallery_http, tmp_path: Path) -> None:
    alice, mallory = register(gallery_http, "alice"), register(gallery_http, "mallory")
    api = client_for(gallery_http, alice.token)
    upload, data = _signed(make_bundle(tmp_path, "grocery"), alice)
    api.publish(upload, data)
    before = _stored(gallery_http)
    manifest = (make_bundle(tmp_path / "m", "grocery", version="2.0.0") / "agent.yaml").read_bytes()

    def refused(code: str, words: str, upload, data, token=alice.token) -> None:
        with pytest.raises(DreamerError) as err:
            client_for(gallery_http, token).publish(upload, data)
        assert err.value.code == code, err.value.message
        assert words in err.value.message
        assert _stored(gallery_http) == before

    # A republished version, identical or not.
    refused("conflict", "already published", upload, data)
    # Someone else's name: mallory signs a grocery of her own.
    m_up, m_data = _signed(make_bundle(tmp_path / "mal", "grocery", version="9.0.0", publisher="mallory"), mallory)
    refused("forbidden", "belongs to publisher alice", m_up, m_data, token=mallory.token)

    new_up, new_data = _signed(make_bundle(tmp_path, "grocery", version="2.0.0"), alice)
    # Tampered on the way: one byte changed after signing.
    tampered = new_data[:-20] + bytes([new_data[-20] ^ 1]) + new_data[-19:]
    refused("digest_mismatch", "was altered", new_up, tampered)
    # A bad signature: mallory's key over alice's statement.
    refused("signature_invalid", "not valid for the key of publisher alice",
            replace(new_up, signature=signed_upload(new_data, mallory.key)[0].signature), new_data)
    # A key the gallery does not know for alice (registered to nobody).
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    stranger = signed_upload(new_data, Ed25519PrivateKey.generate())[0].signature
    refused("signature_invalid", "not valid for the key of publisher alice", replace(new_up, signature=stranger), new_data)
    # Claims that differ from the archive's manifest: scopes and version.
    refused("metadata_mismatch", "asks for scopes", replace(new_up, scopes=["llm"]), new_data)
    refused("metadata_mismatch", "says version", replace(new_up, version="2.0.1"), new_data)
    # The manifest claims another publisher than the token's.
    o_up, o_data = _signed(make_bundle(tmp_path / "o", "other", publisher="mallory"), alice)
    refused("metadata_mismatch", "says publisher 'mallory'", o_up, o_data)

    # Hostile archives, each signed and hashed correctly so only the extractor can refuse them.
    for archive, words in [
        (_hostile([_file("agent.yaml", manifest), _file("/etc/evil", b"x")]), "absolute path"),
        (_hostile([_file("agent.yaml", manifest), _file("../evil", b"x")]), "'..'"),
        (_hostile([_file("agent.yaml", manifest), _link("data", "/etc")]), "symbolic link"),
    ]:
        hostile_up = replace(new_up, sha256=sha256_hex(archive))
        refused("invalid_bundle", words, hostile_up, archive)
    too_big = b"\x1f\x8b" + b"\0" * (gallery_http.app.state.gallery.settings.max_archive_bytes + 1)
    refused("payload_too_large", "MiB", replace(new_up, sha256=sha256_hex(too_big)), too_big)
