"""The gallery's rules: who may publish what, what a version is, what is offered for install.

Every check runs before anything is written; an accepted version's archive is
written (temporary file, then rename) inside the transaction that records it, and
removed again if that commit fails, so a refusal or a crash stores nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamer.contracts.bundle_facts import BundleFacts, read_bundle
from dreamer.gallery.search import document, rank
from dreamer.contracts.signing import (
    fingerprint,
    parse_public_key,
    public_key_text,
    sha256_hex,
    verify,
)
from dreamer.gallery.store import Package, Publisher, Version, bump_changes, catalogue_changes, open_store
from dreamer.contracts.versions import semver_key
from dreamer.contracts.archive import BundleLimits
from dreamer.contracts.gallery_upload import Upload
from dreamer.contracts.names import NAME_RE, SEMVER_RE
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.database import Database
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError


@dataclass(frozen=True)
class GallerySettings:
    home: Path
    database_url: str
    max_archive_bytes: int = 50 * 1024 * 1024
    # When set, registering a publisher needs this secret: a gallery for a team, not the world.
    invite: str | None = None

    @property
    def archives_dir(self) -> Path:
        return self.home / "archives"

    @classmethod
    def at(cls, home: Path, database_url: str | None = None, **kw: Any) -> GallerySettings:
        home = Path(home).expanduser().resolve()
        return cls(home=home, database_url=database_url or f"sqlite:///{home / 'gallery.db'}", **kw)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _check_name(name: str, what: str = "name") -> None:
    if not re.fullmatch(NAME_RE, name):
        raise DreamerError("invalid_argument", f"{name!r} is not a valid {what}: use 2-63 lowercase letters, digits and '-', starting with a letter")


def _check_version(version: str) -> None:
    if not re.fullmatch(SEMVER_RE, version):
        raise DreamerError("invalid_argument", f"{version!r} is not a semantic version like 1.2.3")


class Gallery:
    def __init__(self, settings: GallerySettings, store: Database | None = None) -> None:
        self.settings = settings
        self.store = store or open_store(settings.database_url)
        self.limits = BundleLimits(max_archive_bytes=settings.max_archive_bytes)
        # (catalogue change count, search documents, summaries by name); see search().
        self._catalogue: tuple[int, list[Any], dict[str, dict[str, Any]]] | None = None

    # -- publishers -----------------------------------------------------------------

    def register(self, name: str, public_key: str, invite: str | None = None) -> dict[str, Any]:
        if self.settings.invite and not hmac.compare_digest((invite or "").encode(), self.settings.invite.encode()):
            raise DreamerError("unauthorized", "this gallery registers publishers by invitation; ask its operator for the invite and pass it with --invite")
        _check_name(name, "publisher name")
        key_text = public_key_text(parse_public_key(public_key))
        token = "dgp_" + secrets.token_urlsafe(32)
        try:
            with self.store.session() as s:
                if s.scalar(select(Publisher).where(Publisher.name == name)) is not None:
                    raise DreamerError("conflict", f"the publisher name {name} is taken; choose another name")
                s.add(Publisher(name=name, public_key=key_text, fingerprint=fingerprint(key_text),
                                token_sha256=_token_hash(token)))
        except IntegrityError:
            raise DreamerError("conflict", f"the publisher name {name} is taken; choose another name") from None
        return {"name": name, "fingerprint": fingerprint(key_text), "token": token}

    def authenticate(self, token: str | None) -> Publisher:
        if not token:
            raise DreamerError("unauthorized", "no publisher token; run `dreamer login GALLERY_URL` first")
        with self.store.session() as s:
            publisher = s.scalar(select(Publisher).where(Publisher.token_sha256 == _token_hash(token)))
        if publisher is None:
            raise DreamerError("unauthorized", "the publisher token is not known to this gallery; run `dreamer login` again")
        return publisher

    def publisher_page(self, name: str) -> dict[str, Any]:
        with self.store.session() as s:
            publisher = s.scalar(select(Publisher).where(Publisher.name == name))
            if publisher is None:
                raise DreamerError("not_found", f"no publisher named {name} on this gallery")
            packages = list(s.scalars(select(Package).where(Package.publisher_id == publisher.id).order_by(Package.name)))
            return {
                "name": publisher.name, "public_key": publisher.public_key, "fingerprint": publisher.fingerprint,
                "joined": publisher.created_at.isoformat(), "packages": [_summary(p) for p in packages],
            }

    # -- publish ------------------------------------------------------------------------

    def publish(self, token: str | None, upload: Upload, data: bytes) -> dict[str, Any]:
        publisher = self.authenticate(token)
        _check_name(upload.name)
        _check_version(upload.version)
        label = f"{upload.name} {upload.version}"
        with self.store.session() as s:
            package = s.scalar(select(Package).where(Package.name == upload.name))
            if package is not None and package.publisher_id != publisher.id:
                raise DreamerError(
                    "forbidden", f"the name {upload.name} belongs to publisher {package.publisher.name}; publish under a name of your own"
                )
            if package is not None and any(v.version == upload.version for v in package.versions):
                raise DreamerError(
                    "conflict", f"{label} is already published and versions are immutable; raise the version in agent.yaml"
                )
        if len(data) > self.settings.max_archive_bytes:
            raise DreamerError("payload_too_large", f"the archive is {len(data)} bytes, over this gallery's limit of {self.settings.max_archive_bytes} bytes")
        actual = sha256_hex(data)
        if actual != upload.sha256.lower():
            raise DreamerError(
                "digest_mismatch", f"the archive's sha256 is {actual}, not the {upload.sha256} that was signed; the upload was altered, publish again"
            )
        facts = read_bundle(data, self.limits)
        _match_claims(facts, upload, publisher.name)
        verify(publisher.public_key, upload.signature, facts.statement())
        return self._store_version(publisher, facts, upload, data)

    def _store_version(self, publisher: Publisher, facts: BundleFacts, upload: Upload, data: bytes) -> dict[str, Any]:
        target = self.settings.archives_dir / facts.name / f"{facts.version}.tar.gz"
        written = False
        try:
            with self.store.session() as s:
                package = s.scalar(select(Package).where(Package.name == facts.name))
                if package is None:
                    package = Package(name=facts.name, publisher_id=publisher.id, kind=facts.manifest.get("kind", "agent"))
                    s.add(package)
                    s.flush()
                s.add(Version(
                    package_id=package.id, version=facts.version, sha256=facts.sha256, size=facts.size,
                    signature=upload.signature, scopes=facts.scopes, manifest=facts.manifest,
                    functions=facts.functions, readme=facts.readme,
                ))
                s.flush()  # the unique (package, version) check, before the file is written
                bump_changes(s)
                _write_atomic(target, data)
                written = True
        except IntegrityError:
            if written:
                target.unlink(missing_ok=True)
            raise DreamerError(
                "conflict", f"{facts.name} {facts.version} is already published and versions are immutable; raise the version in agent.yaml"
            ) from None
        except BaseException:
            if written:
                target.unlink(missing_ok=True)
            raise
        return self.version(facts.name, facts.version)

    # -- read -----------------------------------------------------------------------------

    def _package(self, s: Any, name: str) -> Package:
        package = s.scalar(select(Package).where(Package.name == name))
        if package is None:
            raise DreamerError("not_found", f"no package named {name} on this gallery")
        return package

    def package(self, name: str) -> dict[str, Any]:
        with self.store.session() as s:
            package = self._package(s, name)
            view = _summary(package)
            view["versions"] = [
                {"version": v.version, "yanked": v.yanked, "yank_reason": v.yank_reason or None,
                 "published_at": v.published_at.isoformat(), "sha256": v.sha256, "size": v.size}
                for v in _ordered(package.versions)
            ]
            return view

    def version(self, name: str, version: str) -> dict[str, Any]:
        with self.store.session() as s:
            package = self._package(s, name)
            found = next((v for v in package.versions if v.version == version), None)
            if found is None:
                raise DreamerError("not_found", f"{name} has no version {version} on this gallery")
            return _version_view(package, found)

    def archive_path(self, name: str, version: str) -> Path:
        """The archive of an exact version, yanked or not (yanking only stops new installs by range)."""
        self.version(name, version)
        path = self.settings.archives_dir / name / f"{version}.tar.gz"
        if not path.is_file():
            raise DreamerError("not_found", f"the archive of {name} {version} is missing from this gallery's disk")
        return path

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        docs, summaries = self._load_catalogue()
        ranked = rank(query, docs)[: max(1, min(limit, 100))]
        return [{**summaries[name], "score": score} for name, score in ranked]

    def _load_catalogue(self) -> tuple[list[Any], dict[str, dict[str, Any]]]:
        """Search documents of every package's latest offered version, reloaded only after a publish or yank."""
        with self.store.session() as s:
            changes = catalogue_changes(s)
            cached = self._catalogue
            if cached is not None and cached[0] == changes:
                return cached[1], cached[2]
            docs, summaries = [], {}
            for package in s.scalars(select(Package)):
                latest = _latest(package.versions)
                if latest is not None:
                    docs.append(document(package.name, latest.manifest, latest.functions))
                    summaries[package.name] = _summary(package)
        self._catalogue = (changes, docs, summaries)
        return docs, summaries

    # -- yank -----------------------------------------------------------------------------

    def yank(self, token: str | None, name: str, version: str, reason: str, undo: bool = False) -> dict[str, Any]:
        publisher = self.authenticate(token)
        with self.store.session() as s:
            package = self._package(s, name)
            if package.publisher_id != publisher.id:
                raise DreamerError("forbidden", f"{name} belongs to publisher {package.publisher.name}; only they can yank it")
            found = next((v for v in package.versions if v.version == version), None)
            if found is None:
                raise DreamerError("not_found", f"{name} has no version {version} on this gallery")
            found.yanked = not undo
            found.yank_reason = "" if undo else reason[:500]
            bump_changes(s)
        return self.version(name, version)


def _match_claims(facts: BundleFacts, upload: Upload, publisher: str) -> None:
    """The archive's own manifest must say what the upload claims, field by field."""
    checks = [
        ("name", facts.name, upload.name),
        ("version", facts.version, upload.version),
        ("publisher", facts.publisher, publisher),
    ]
    for field, inside, claimed in checks:
        if inside != claimed:
            raise DreamerError(
                "metadata_mismatch", f"the archive's agent.yaml says {field} {inside!r} but the upload says {claimed!r}; rebuild and publish again"
            )
    if sorted(facts.scopes) != sorted(upload.scopes):
        raise DreamerError(
            "metadata_mismatch", f"the archive asks for scopes {sorted(facts.scopes)} but the upload lists {sorted(upload.scopes)}; rebuild and publish again"
        )


def _write_atomic(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _ordered(versions: list[Version]) -> list[Version]:
    return sorted(versions, key=lambda v: semver_key(v.version), reverse=True)


def _latest(versions: list[Version]) -> Version | None:
    """The newest version offered for new installs: not yanked, and a release before a pre-release."""
    offered = [v for v in versions if not v.yanked]
    releases = [v for v in offered if "-" not in v.version.split("+")[0]]
    ordered = _ordered(releases or offered)
    return ordered[0] if ordered else None


def _summary(package: Package) -> dict[str, Any]:
    latest = _latest(package.versions)
    manifest = latest.manifest if latest else {}
    return {
        "name": package.name, "kind": package.kind, "publisher": package.publisher.name,
        "fingerprint": package.publisher.fingerprint,
        "latest": latest.version if latest else None,
        "title": manifest.get("title"), "description": manifest.get("description"),
    }


def _version_view(package: Package, v: Version) -> dict[str, Any]:
    return {
        "name": package.name, "version": v.version, "kind": package.kind,
        "publisher": {"name": package.publisher.name, "public_key": package.publisher.public_key,
                      "fingerprint": package.publisher.fingerprint},
        "sha256": v.sha256, "size": v.size, "signature": v.signature, "scopes": v.scopes,
        "manifest": v.manifest, "functions": v.functions, "readme": v.readme,
        "yanked": v.yanked, "yank_reason": v.yank_reason or None, "published_at": v.published_at.isoformat(),
    }

