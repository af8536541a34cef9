"""The gallery client (gallery/) as the kernel's GalleryAccess (kernel/ports.py)."""

from __future__ import annotations

from typing import Any

from dreamer.contracts.gallery_client import GalleryClient
from dreamer.gallery.verify import Verified, verify_download
from dreamer.contracts.archive import BundleLimits


class GalleryClientAccess:
    def connect(self, url: str) -> GalleryClient:
        return GalleryClient(url)

    def verify(self, listing: Any, data: bytes, url: str, limits: BundleLimits) -> Verified:
        return verify_download(listing, data, url, limits)
