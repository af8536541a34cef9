"""Read side of installations: what a user has installed and what it may do."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.functions import FunctionSpec
from dreamer.contracts.manifest import Manifest
from dreamer.kernel.store.models import BundleVersion, Grant, Installation


@dataclass(frozen=True)
class InstalledAgent:
    """One user's installation of an agent bundle, with its manifest and functions typed:
    the stored JSON was validated by these same models at install, and is read through them
    again at load so that no caller reads the manifest as a dict."""

    name: str
    version: str
    kind: str
    publisher: str
    bundle_path: Path
    manifest: Manifest
    functions: tuple[FunctionSpec, ...]
    installed_at: datetime
    updated_at: datetime
    # Set only for a bundle installed from a gallery with a verified signature.
    source: str | None = None
    publisher_fingerprint: str | None = None
    digest: str = ""  # the bundle's tree_digest, checked whenever a worker starts

    @property
    def title(self) -> str:
        return self.manifest.title

    @property
    def description(self) -> str:
        return self.manifest.description

    @property
    def entry(self) -> str | None:
        return self.manifest.entry

    @property
    def required(self) -> list[str]:
        return list(self.manifest.permissions.required)

    @property
    def optional(self) -> list[str]:
        return list(self.manifest.permissions.optional)

    def function(self, name: str) -> FunctionSpec:
        for spec in self.functions:
            if spec.name == name:
                return spec
        names = ", ".join(f.name for f in self.functions) or "none"
        raise DreamerError("not_found", f"{self.name} has no function {name!r}; its functions are: {names}")


def _installed(inst: Installation, bundle: BundleVersion) -> InstalledAgent:
    return InstalledAgent(
        name=inst.agent,
        version=bundle.version,
        kind=bundle.kind,
        publisher=bundle.publisher,
        bundle_path=Path(bundle.path),
        manifest=Manifest.model_validate(bundle.manifest),
        functions=tuple(FunctionSpec.model_validate(f) for f in bundle.functions),
        source=inst.source,
        publisher_fingerprint=inst.publisher_fingerprint,
        digest=bundle.digest,
        installed_at=inst.installed_at,
        updated_at=inst.updated_at,
    )


def find_installed(session: Session, user_id: int, agent: str) -> InstalledAgent | None:
    row = session.execute(
        select(Installation, BundleVersion)
        .join(BundleVersion, BundleVersion.id == Installation.bundle_id)
        .where(Installation.user_id == user_id, Installation.agent == agent)
    ).first()
    return None if row is None else _installed(*row)


def get_installed(session: Session, user_id: int, agent: str) -> InstalledAgent:
    found = find_installed(session, user_id, agent)
    if found is None:
        raise DreamerError("not_found", f"you have no agent named {agent!r}; `dreamer agents` lists yours")
    return found


def list_installed(session: Session, user_id: int) -> list[InstalledAgent]:
    rows = session.execute(
        select(Installation, BundleVersion)
        .join(BundleVersion, BundleVersion.id == Installation.bundle_id)
        .where(Installation.user_id == user_id)
        .order_by(Installation.agent)
    ).all()
    return [_installed(*row) for row in rows]


def grants_of(session: Session, user_id: int, agent: str | None = None) -> list[Grant]:
    query = select(Grant).where(Grant.user_id == user_id)
    if agent is not None:
        query = query.where(Grant.agent == agent)
    return list(session.scalars(query.order_by(Grant.agent, Grant.scope)))
