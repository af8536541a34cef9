"""Installing from the galleries this kernel points at (DREAMER_GALLERIES).

Download, verify (the host's GalleryAccess: gallery/verify.py), then the ordinary stage → review → approve;
the staged review carries the verified publisher. Gallery calls are blocking httpx
calls, so they run in a thread and the event loop keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from dreamer.contracts.versions import semver_key
from dreamer.contracts.archive import BundleLimits
from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.pins import check_pinned_key
from dreamer.kernel.install.registry import list_installed
from dreamer.kernel.install.installer import Installer
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.ports import GalleryAccess, GalleryConnection

log = logging.getLogger("dreamer.gallery")


class GalleryInstaller:
    def __init__(self, settings: Settings, installer: Installer, access: GalleryAccess | None) -> None:
        self.settings = settings
        self.installer = installer
        self.access = access

    def _access(self) -> GalleryAccess:
        if self.access is None:
            raise DreamerError("not_available", "this kernel was built without a gallery client; start it with `dreamer up`")
        return self.access

    def _connect(self, url: str) -> GalleryConnection:
        return self._access().connect(url)

    def _galleries(self) -> tuple[str, ...]:
        if not self.settings.galleries:
            raise DreamerError("not_available", "this kernel points at no gallery; set DREAMER_GALLERIES to a gallery URL and restart it")
        return self.settings.galleries

    async def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._search, query, limit)

    def _search(self, query: str, limit: int) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        failures: list[DreamerError] = []
        for url in self._galleries():
            try:
                with self._connect(url) as gallery:
                    hits = gallery.search(query, limit)
                    if not isinstance(hits, list) or not all(isinstance(h, dict) for h in hits):
                        raise DreamerError("protocol_error", f"the gallery at {url} answered a search with something that is not a list of packages")
                    results += [{**hit, "gallery": url} for hit in hits]
            except DreamerError as exc:
                log.warning("gallery %s: %s", url, exc.message)
                failures.append(exc)
        if failures and len(failures) == len(self.settings.galleries):
            raise failures[0]
        return results[:limit]

    async def outdated(self, who: Principal) -> list[dict[str, Any]]:
        """Agents installed from a gallery whose gallery now offers a newer version."""
        with self.installer.store.session() as s:
            installed = [(a.name, a.version, a.source) for a in list_installed(s, who.user_id) if a.source]
        return await asyncio.to_thread(self._outdated, installed)

    def _outdated(self, installed: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
        rows = []
        for name, current, source in installed:
            with self._connect(source) as gallery:
                try:
                    latest = gallery.package(name).get("latest")
                except (DreamerError, AttributeError) as exc:
                    log.warning("gallery %s: %s", source, getattr(exc, "message", exc))
                    continue
            if isinstance(latest, str) and semver_key(latest) > semver_key(current):
                rows.append({"name": name, "installed": current, "latest": latest, "gallery": source})
        return rows

    async def stage(self, who: Principal, name: str, version: str | None, accept_new_key: bool = False) -> dict[str, Any]:
        listing, data, url = await asyncio.to_thread(self._download, name, version)
        limits = BundleLimits(max_archive_bytes=self.settings.max_bundle_bytes, max_files=self.settings.max_bundle_files)
        verified = await asyncio.to_thread(self._access().verify, listing, data, url, limits)
        check_pinned_key(self.installer.store, who.user_id, url, verified.publisher, verified.fingerprint, accept_new_key)
        staged = await self.installer.stage(who, data, provenance=verified.provenance())
        if listing.get("yanked"):
            staged["review"]["yanked"] = listing.get("yank_reason") or "yanked by its publisher"
        return staged

    def _download(self, name: str, version: str | None) -> tuple[dict[str, Any], bytes, str]:
        """The first gallery (in configured order) that has the package decides; later ones are not asked."""
        for url in self._galleries():
            with self._connect(url) as gallery:
                try:
                    package = gallery.package(name)
                except DreamerError as exc:
                    if exc.code == "not_found":
                        continue
                    raise
                if not isinstance(package, dict):
                    raise DreamerError("protocol_error", f"the gallery at {url} sent a package listing of the wrong shape")
                chosen = version or package.get("latest")
                if not isinstance(chosen, str | None):
                    raise DreamerError("protocol_error", f"the gallery at {url} named a latest version that is not text")
                if not chosen:
                    raise DreamerError("not_found", f"every version of {name} on {url} is yanked; name a version with {name}@VERSION")
                listing = gallery.version(name, chosen)
                data = gallery.download(name, chosen, self.settings.max_bundle_bytes)
                return listing, data, url
        raise DreamerError("not_found", f"no gallery this kernel knows has a package named {name} ({', '.join(self.settings.galleries)})")
