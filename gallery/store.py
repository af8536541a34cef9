"""The gallery's own store: publishers, packages, versions (metadata only; archives live on disk).

Schema by `metadata.create_all` plus a one-row `gallery_schema` table rather than
Alembic: the gallery is a separate service with one schema version so far, and
create_all is idempotent for it. A start refuses a store written by a newer
gallery. The first change to an existing table brings Alembic in, with its
baseline stamped at schema version 1.
"""

from __future__ import annotations

from datetime import datetime

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.database import Database
from dreamer.contracts.database import NAMING_CONVENTION, utcnow
from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

SCHEMA_VERSION = 1


class GalleryBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SchemaVersion(GalleryBase):
    __tablename__ = "gallery_schema"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    # Bumped by every publish and yank: a search cache is good while this is unchanged,
    # also across several gallery processes sharing one store.
    changes: Mapped[int] = mapped_column(Integer, default=0)


class Publisher(GalleryBase):
    __tablename__ = "publishers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    public_key: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    # Only the sha256 of the publisher's token is kept.
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Package(GalleryBase):
    __tablename__ = "packages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    publisher_id: Mapped[int] = mapped_column(ForeignKey("publishers.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    publisher: Mapped[Publisher] = relationship(lazy="joined")
    versions: Mapped[list[Version]] = relationship(back_populates="package", lazy="selectin")


class Version(GalleryBase):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("package_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    package_id: Mapped[int] = mapped_column(ForeignKey("packages.id"), index=True)
    version: Mapped[str] = mapped_column(String(64))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer)
    signature: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list] = mapped_column(JSON)
    manifest: Mapped[dict] = mapped_column(JSON)
    functions: Mapped[list] = mapped_column(JSON)
    readme: Mapped[str] = mapped_column(Text, default="")
    yanked: Mapped[bool] = mapped_column(Boolean, default=False)
    yank_reason: Mapped[str] = mapped_column(Text, default="")
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    package: Mapped[Package] = relationship(back_populates="versions")


def open_store(url: str) -> Database:
    """The shared Database gives engine, SQLite pragmas and sessions; the schema is the gallery's."""
    store = Database(url)
    GalleryBase.metadata.create_all(store.engine)
    with store.session() as s:
        row = s.scalar(select(SchemaVersion))
        if row is None:
            s.add(SchemaVersion(id=1, version=SCHEMA_VERSION, changes=0))
        elif row.version > SCHEMA_VERSION:
            raise DreamerError(
                "internal", f"the gallery store {store.safe_url} has schema version {row.version}, newer than this "
                f"gallery understands ({SCHEMA_VERSION}); upgrade dreamer"
            )
    return store


def bump_changes(session: object) -> None:
    """Count a change of the catalogue, in the caller's transaction."""
    from sqlalchemy import update

    session.execute(update(SchemaVersion).where(SchemaVersion.id == 1).values(changes=SchemaVersion.changes + 1))  # type: ignore[attr-defined]


def catalogue_changes(session: object) -> int:
    return int(session.scalar(select(SchemaVersion.changes).where(SchemaVersion.id == 1)) or 0)  # type: ignore[attr-defined]
