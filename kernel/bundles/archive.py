"""The bundle archive format lives in dreamer.contracts.archive (the CLI packs, the gallery
and the kernel unpack); re-exported here for the kernel's importers."""

from dreamer.contracts.archive import DEFAULT_EXCLUDES, BundleLimits, extract, install_copy, pack, remove_tree, tree_digest

__all__ = ["DEFAULT_EXCLUDES", "BundleLimits", "extract", "install_copy", "pack", "remove_tree", "tree_digest"]
