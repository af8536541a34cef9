"""What a published bundle is: its archive, the facts read from inside it, and its signed statement.

Both sides use this module: the gallery reads the archive a publisher uploads, and a
kernel reads the archive it downloads. Unpacking goes through the kernel's hostile-proof
extractor (contracts/archive.py); there is no second extractor here.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamer.contracts.signing import Statement, sha256_hex
from dreamer.contracts.archive import BundleLimits, extract
from dreamer.contracts.functions import load_functions
from dreamer.contracts.manifest import load_manifest
from dreamer.contracts.errors import DreamerError

README_NAMES = ("README.md", "README.txt", "README")
MAX_README_CHARS = 64 * 1024


@dataclass(frozen=True)
class BundleFacts:
    """What the archive itself says, read after a safe unpack."""

    sha256: str
    size: int
    manifest: dict[str, Any]
    functions: list[dict[str, Any]]
    readme: str

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def publisher(self) -> str:
        return str(self.manifest["publisher"])

    @property
    def scopes(self) -> list[str]:
        return manifest_scopes(self.manifest)

    def statement(self) -> Statement:
        return Statement(self.name, self.version, self.publisher, self.sha256, tuple(self.scopes))


def manifest_scopes(manifest: dict[str, Any]) -> list[str]:
    perms = manifest.get("permissions") or {}
    return [*perms.get("required", []), *perms.get("optional", [])]


def read_bundle(data: bytes, limits: BundleLimits | None = None) -> BundleFacts:
    """Unpack the archive in a private temporary folder, read manifest, functions and README, delete it.

    Raises DreamerError('invalid_bundle') for a hostile or malformed archive. A bundle
    without functions.json is refused: neither a gallery nor a kernel runs code to learn it.
    """
    work = Path(tempfile.mkdtemp(prefix="dreamer-gallery-"))
    try:
        root = extract(data, work / "bundle", limits or BundleLimits())
        manifest = load_manifest(root)
        functions = load_functions(root)
        if functions is None and manifest.kind == "agent":
            raise DreamerError(
                "invalid_bundle", f"{manifest.name} has no functions.json; run `dreamer build` before publishing"
            )
        readme = ""
        for name in README_NAMES:
            path = root / name
            if path.is_file():
                readme = path.read_bytes()[: MAX_README_CHARS * 4].decode("utf-8", "replace")[:MAX_README_CHARS]
                break
        return BundleFacts(
            sha256=sha256_hex(data),
            size=len(data),
            manifest=manifest.model_dump(mode="json", exclude_none=True),
            functions=[f.model_dump(mode="json") for f in functions or []],
            readme=readme,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
