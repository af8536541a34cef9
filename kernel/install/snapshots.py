"""What an upgrade replaces, kept so `dreamer rollback` can put it back.

Before an upgrade switches a user's agent to a new version, the agent's data folder
is copied aside with the version it belonged to and the grants it had. A rollback
puts the version, the grants and that data back, and keeps the newer data it replaces
in `replaced/` until the next upgrade, so nothing the newer version wrote is lost
without a trace. One snapshot per (user, agent): the state before the latest upgrade.

The copies live next to the data folder (`users/<u>/agents/<a>/rollback/`), outside
what the sandbox binds, so the agent can neither read nor change its own snapshot.
Workers are stopped first, so agent.db and its WAL are copied at rest. Links are
copied as links, never followed: an agent's symlink to a host file stays a link.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dreamer.contracts.errors import DreamerError


@dataclass(frozen=True)
class Kept:
    """The installation an upgrade replaces: its bundle (by id and digest) and where it came from."""

    version: str
    bundle_id: int
    digest: str
    source: str | None = None
    publisher_fingerprint: str | None = None


@dataclass(frozen=True)
class Snapshot:
    version: str
    bundle_id: int
    grants: list[str]
    taken_at: str
    digest: str = ""  # empty in snapshots taken before bundles were keyed by content
    source: str | None = None
    publisher_fingerprint: str | None = None


def folder(data_dir: Path) -> Path:
    return data_dir.parent / "rollback"


def take(data_dir: Path, kept: Kept, grants: list[str]) -> None:
    """Copy the data aside as the state of `kept.version` (replacing an older snapshot)."""
    root = folder(data_dir)
    fresh = root.with_name("rollback.new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    if data_dir.is_dir():
        shutil.copytree(data_dir, fresh / "data", symlinks=True)
    else:
        (fresh / "data").mkdir()
    meta = {"version": kept.version, "bundle_id": kept.bundle_id, "digest": kept.digest, "grants": sorted(grants),
            "source": kept.source, "publisher_fingerprint": kept.publisher_fingerprint,
            "taken_at": datetime.now(timezone.utc).isoformat()}
    (fresh / "snapshot.json").write_text(json.dumps(meta))
    # Swapped in whole: a crash leaves the old snapshot or the new one, never half of one.
    old = root.with_name("rollback.old")
    shutil.rmtree(old, ignore_errors=True)
    if root.exists():
        root.rename(old)
    fresh.rename(root)
    shutil.rmtree(old, ignore_errors=True)


def read(data_dir: Path, agent: str) -> Snapshot:
    meta_file = folder(data_dir) / "snapshot.json"
    try:
        meta = json.loads(meta_file.read_text())
        source, fingerprint = meta.get("source"), meta.get("publisher_fingerprint")
        return Snapshot(
            str(meta["version"]), int(meta["bundle_id"]), [str(g) for g in meta["grants"]], str(meta["taken_at"]),
            str(meta.get("digest") or ""), str(source) if source else None, str(fingerprint) if fingerprint else None,
        )
    except FileNotFoundError:
        raise DreamerError(
            "not_found", f"{agent} has no earlier version to roll back to (one is kept at each upgrade)"
        ) from None
    except (ValueError, KeyError, TypeError):
        raise DreamerError("internal", f"the rollback snapshot of {agent} cannot be read; it was left as it is") from None


def restore(data_dir: Path) -> None:
    """Put the snapshot's data in place; the data it replaces goes to `replaced/`."""
    root = folder(data_dir)
    replaced = root / "replaced"
    shutil.rmtree(replaced, ignore_errors=True)
    if data_dir.exists():
        data_dir.rename(replaced)
    (root / "data").rename(data_dir)
    (root / "snapshot.json").unlink()


def drop(data_dir: Path) -> None:
    shutil.rmtree(folder(data_dir), ignore_errors=True)
