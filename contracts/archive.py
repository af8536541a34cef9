"""Bundle archives: deterministic packing, hostile-proof extraction, read-only installs.

Anyone can write a bundle, so `extract` treats every archive as an attack: it
streams the tar once, judges each header before reading a byte of its data,
counts what it actually decompresses and writes, and only ever shows a finished
tree (built in a temporary sibling, renamed at the end). Every refusal is a
DreamerError("invalid_bundle") with one sentence naming the offending member.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dreamer.contracts.errors import DreamerError

MiB = 1024 * 1024
DEFAULT_EXCLUDES: tuple[str, ...] = ("__pycache__", "*.pyc", ".git", ".venv", ".DS_Store")
MANIFEST_NAME = "agent.yaml"

_CHUNK = 64 * 1024
# Headers, pax records and block padding cost bytes that are not file content;
# this allowance per member bounds them without refusing honest archives.
_OVERHEAD_PER_MEMBER = 8 * 1024
_OVERHEAD_FIXED = 1 * MiB
_MAX_COMPONENT_BYTES = 255  # NAME_MAX on the filesystems we run on
_SHOWN_NAME_CHARS = 80


@dataclass(frozen=True)
class BundleLimits:
    max_archive_bytes: int = 50 * MiB  # compressed
    max_total_bytes: int = 100 * MiB  # sum of file sizes, uncompressed
    max_file_bytes: int = 20 * MiB
    max_files: int = 2000  # every member counts, folders included
    max_depth: int = 20  # path components of a member name as written in the archive
    max_path_chars: int = 240

    @property
    def max_expanded_bytes(self) -> int:
        """Ceiling on decompressed bytes read at all, so a gzip bomb hidden in tar headers stops too."""
        return self.max_total_bytes + (self.max_files + 1) * _OVERHEAD_PER_MEMBER + _OVERHEAD_FIXED


def _invalid(message: str) -> DreamerError:
    return DreamerError("invalid_bundle", message)


def _show(name: str) -> str:
    # repr() escapes control characters, so a hostile name cannot forge log lines.
    if len(name) > _SHOWN_NAME_CHARS:
        name = name[:_SHOWN_NAME_CHARS] + "..."
    return repr(name)


# --------------------------------------------------------------------------- pack


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _walk(folder: Path, patterns: tuple[str, ...], prefix: str = "") -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield (relative posix path, entry) depth-first in name order, never following links."""
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        if _excluded(entry.name, patterns):
            continue
        rel = f"{prefix}{entry.name}"
        yield rel, entry
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), patterns, rel + "/")


def _normalised(info: tarfile.TarInfo, mode: int) -> tarfile.TarInfo:
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _require_folder(folder: Path) -> None:
    if not folder.exists():
        raise _invalid(f"the bundle folder {folder} does not exist")
    if not folder.is_dir():
        raise _invalid(f"{folder} is not a folder")


def pack(folder: Path, *, exclude: Iterable[str] = DEFAULT_EXCLUDES) -> bytes:
    """Pack the folder's contents as a .tar.gz whose bytes depend only on the tree.

    Links are stored as links, not followed: the kernel refuses them with a clear
    message instead of the CLI silently shipping whatever they point at.
    """
    folder = Path(folder)
    _require_folder(folder)
    if not os.path.lexists(folder / MANIFEST_NAME):
        raise _invalid(f"{folder.name}: no {MANIFEST_NAME} at the top of the bundle")
    patterns = tuple(exclude)
    buffer = io.BytesIO()
    # filename="" and mtime=0 keep the gzip header free of anything that varies.
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            try:
                for rel, entry in _walk(folder, patterns):
                    _pack_entry(tar, rel, entry)
            except OSError as exc:
                raise _invalid(f"cannot read the bundle folder: {exc}") from None
    return buffer.getvalue()


def _pack_entry(tar: tarfile.TarFile, rel: str, entry: os.DirEntry[str]) -> None:
    info = tarfile.TarInfo(rel)
    try:
        if entry.is_symlink():
            info.type = tarfile.SYMTYPE
            info.linkname = os.readlink(entry.path)
            tar.addfile(_normalised(info, 0o755))
        elif entry.is_dir(follow_symlinks=False):
            info.type = tarfile.DIRTYPE
            tar.addfile(_normalised(info, 0o755))
        elif entry.is_file(follow_symlinks=False):
            st = entry.stat(follow_symlinks=False)
            info.size = st.st_size
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            with open(entry.path, "rb") as handle:
                tar.addfile(_normalised(info, mode), handle)
        else:
            raise _invalid(f"{_show(rel)} is neither a file, a folder nor a link, so it cannot go in a bundle")
    except OSError as exc:
        raise _invalid(f"cannot read {_show(rel)}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------------ extract


class _Expanded(Exception):
    """The decompressed stream went past its budget."""


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _BoundedReader:
    """File-like view of the decompressed stream that stops at a byte budget.

    tarfile reads pax and long-name headers whole, whatever size they declare;
    capping each read and the running total keeps a bomb there from eating memory.
    """

    def __init__(self, raw: _Readable, budget: int) -> None:
        self._raw = raw
        self._budget = budget
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > _CHUNK:
            size = _CHUNK
        chunk = self._raw.read(size)
        self.consumed += len(chunk)
        if self.consumed > self._budget:
            raise _Expanded()
        return chunk


@dataclass
class _Tally:
    members: int = 0
    declared: int = 0
    written: int = 0


@dataclass
class _Layout:
    files: set[str]
    dirs: set[str]  # every folder, named or implied by a deeper member
    named_dirs: set[str]  # folders that had their own member


def _check_envelope(data: bytes, limits: BundleLimits) -> None:
    if not data:
        raise _invalid("the bundle archive is empty")
    if len(data) > limits.max_archive_bytes:
        raise _invalid(f"the bundle archive is {len(data)} bytes, over the limit of {limits.max_archive_bytes} bytes")
    if bytes(data[:2]) != b"\x1f\x8b":
        raise _invalid("the bundle is not a gzip-compressed tar archive (.tar.gz)")


def _member_path(name: str, limits: BundleLimits) -> str:
    """Return the member's relative path with any leading './' removed, or refuse it."""
    shown = _show(name)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(f"member {shown} has a name that is not valid UTF-8") from None
    if "\x00" in name:
        raise _invalid(f"member {shown} has a NUL character in its name")
    if "\\" in name:
        raise _invalid(f"member {shown} has a backslash in its name")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        raise _invalid(f"member {shown} has a control character in its name")
    if name.startswith("/"):
        raise _invalid(f"member {shown} has an absolute path")
    if len(name) > limits.max_path_chars:
        raise _invalid(f"member {shown} has a name longer than {limits.max_path_chars} characters")
    while name.startswith("./"):
        name = name[2:]
    if name in ("", "."):
        return ""
    parts = name.split("/")
    if ".." in parts:
        raise _invalid(f"member {shown} has a '..' component that would escape the bundle")
    if any(part in ("", ".") for part in parts):
        raise _invalid(f"member {shown} has an empty or '.' path component")
    if len(parts) > limits.max_depth:
        raise _invalid(f"member {shown} is nested deeper than {limits.max_depth} folders")
    if any(len(part.encode("utf-8")) > _MAX_COMPONENT_BYTES for part in parts):
        raise _invalid(f"member {shown} has a path component longer than {_MAX_COMPONENT_BYTES} bytes")
    return name


def _check_type(member: tarfile.TarInfo) -> None:
    shown = _show(member.name)
    if member.issym():
        raise _invalid(f"member {shown} is a symbolic link (to {_show(member.linkname)}); bundles may not contain links")
    if member.islnk():
        raise _invalid(f"member {shown} is a hard link (to {_show(member.linkname)}); bundles may not contain links")
    if member.ischr() or member.isblk():
        raise _invalid(f"member {shown} is a device file; bundles may hold only files and folders")
    if member.isfifo():
        raise _invalid(f"member {shown} is a FIFO; bundles may hold only files and folders")
    if member.issparse():
        raise _invalid(f"member {shown} is a sparse file; bundles may hold only plain files and folders")
    if not (member.isreg() or member.isdir()):
        raise _invalid(f"member {shown} has an unsupported tar type {member.type!r}")


def _check_limits(member: tarfile.TarInfo, tally: _Tally, limits: BundleLimits) -> None:
    shown = _show(member.name)
    tally.members += 1
    if tally.members > limits.max_files:
        raise _invalid(f"member {shown} takes the bundle past the limit of {limits.max_files} files")
    if not member.isreg():
        return
    if member.size > limits.max_file_bytes:
        raise _invalid(f"member {shown} is {member.size} bytes, over the limit of {limits.max_file_bytes} bytes per file")
    tally.declared += member.size
    if tally.declared > limits.max_total_bytes:
        raise _invalid(f"member {shown} takes the bundle past {limits.max_total_bytes} bytes unpacked")


def _check_layout(path: str, member: tarfile.TarInfo, layout: _Layout) -> None:
    shown = _show(member.name)
    parts = path.split("/")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if parent in layout.files:
            raise _invalid(f"member {shown} lies under {_show(parent)}, which is already a file")
    if path in layout.files or path in layout.named_dirs:
        raise _invalid(f"member {shown} appears twice in the archive")
    if member.isreg() and path in layout.dirs:
        raise _invalid(f"member {shown} is a file but an earlier member made it a folder")
    for depth in range(1, len(parts)):
        layout.dirs.add("/".join(parts[:depth]))
    if member.isdir():
        layout.dirs.add(path)
        layout.named_dirs.add(path)
    else:
        layout.files.add(path)


def _mkdirs(root: Path, rel: str) -> Path:
    # Safe to create component by component: the tree under root is ours and holds no links.
    current = root
    for part in rel.split("/") if rel else []:
        current = current / part
        if not current.is_dir():
            os.mkdir(current)
            os.chmod(current, 0o755)
    return current


def _write_file(
    tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, tally: _Tally, limits: BundleLimits
) -> None:
    shown = _show(member.name)
    source = tar.extractfile(member)
    if source is None:
        raise _invalid(f"member {shown} has no readable content")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target, flags, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as out:
        # Count what really lands on disk, not only what the header promised.
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            tally.written += len(chunk)
            if written > member.size or written > limits.max_file_bytes:
                raise _invalid(f"member {shown} holds more data than its header declares")
            if tally.written > limits.max_total_bytes:
                raise _invalid(f"member {shown} takes the bundle past {limits.max_total_bytes} bytes unpacked")
            out.write(chunk)
        os.fchmod(out.fileno(), 0o755 if member.mode & 0o111 else 0o644)
    if written != member.size:
        raise _invalid(f"member {shown} is shorter than its header declares")


def _second_opinion(member: tarfile.TarInfo, root: Path) -> None:
    """The stdlib's own safety filter, after our checks. Python 3.11 has it from 3.11.4 on;
    Debian 12's python3 is 3.11.2, where our checks above stand alone."""
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is None:
        return
    try:
        data_filter(member, str(root))
    except tarfile.FilterError as exc:
        raise _invalid(f"member {_show(member.name)} is refused by the tar safety filter: {exc}") from None


def _unpack_into(data: bytes, root: Path, limits: BundleLimits) -> None:
    reader = _BoundedReader(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), limits.max_expanded_bytes)
    tally = _Tally()
    layout = _Layout(set(), set(), set())
    # typeshed asks any fileobj for write/seek/tell too; stream mode ("r|") only ever reads.
    with tarfile.open(fileobj=reader, mode="r|") as tar:  # type: ignore[call-overload]
        for member in tar:
            path = _member_path(member.name, limits)
            _check_type(member)
            _check_limits(member, tally, limits)
            if not path:
                if not member.isdir():
                    raise _invalid(f"member {_show(member.name)} is a file named like the bundle's own folder")
                continue  # the archive's own "./" entry
            _check_layout(path, member, layout)
            _second_opinion(member, root)
            if member.isdir():
                _mkdirs(root, path)
            else:
                parent, _, _ = path.rpartition("/")
                _write_file(tar, member, _mkdirs(root, parent) / path.rsplit("/", 1)[-1], tally, limits)


def _bundle_root(tree: Path) -> Path:
    """The folder holding agent.yaml: the tree itself, or its single top folder (GitHub-style)."""
    entries = list(tree.iterdir())
    if not entries:
        raise _invalid("the bundle archive holds no files")
    if not (tree / MANIFEST_NAME).exists() and len(entries) == 1 and entries[0].is_dir():
        tree = entries[0]
    if not (tree / MANIFEST_NAME).is_file():
        raise _invalid(f"the bundle has no {MANIFEST_NAME} at its top")
    return tree


def extract(data: bytes, dest: Path, limits: BundleLimits = BundleLimits()) -> Path:
    """Unpack a hostile .tar.gz into dest (which must not exist) and return dest.

    Either the whole bundle appears at dest or nothing does.
    """
    dest = Path(dest)
    if os.path.lexists(dest):
        raise DreamerError("conflict", f"{dest} already exists")
    _check_envelope(data, limits)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        try:
            _unpack_into(data, staging, limits)
        except _Expanded:
            raise _invalid(f"the bundle archive expands to more than {limits.max_expanded_bytes} bytes") from None
        except EOFError:
            raise _invalid("the bundle archive is truncated") from None
        except (gzip.BadGzipFile, zlib.error):
            raise _invalid("the bundle archive is not valid gzip data") from None
        except (tarfile.TarError, ValueError) as exc:
            raise _invalid(f"the bundle is not a valid tar archive ({exc})") from None
        except OSError as exc:
            raise DreamerError("internal", f"could not unpack the bundle: {exc.strerror or exc}") from None
        root = _bundle_root(staging)
        os.chmod(root, 0o755)
        try:
            os.rename(root, dest)
        except OSError:
            raise DreamerError("conflict", f"{dest} already exists") from None
    finally:
        # Whatever happened, the staging folder goes (after a strip it is left empty).
        remove_tree(staging)
    return dest


# -------------------------------------------------------------------------- trees


def _entries(folder: Path, patterns: tuple[str, ...]) -> list[tuple[str, os.DirEntry[str]]]:
    return sorted(_walk(folder, patterns), key=lambda pair: pair[0])


def _file_sha256(path: str) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.digest()


def tree_digest(folder: Path, *, exclude: Iterable[str] = ()) -> str:
    """Hex sha256 over sorted (relative path, exec bit, content); mtimes and owners do not count.

    Folders (even empty ones) and links (by target) count too, so two trees with
    the same digest really are interchangeable. Pass exclude=DEFAULT_EXCLUDES to
    digest a source folder as `pack` would see it.
    """
    folder = Path(folder)
    _require_folder(folder)
    total = hashlib.sha256()
    for rel, entry in _entries(folder, tuple(exclude)):
        name = rel.encode("utf-8", "surrogateescape")
        if entry.is_symlink():
            kind, executable, body = b"l", b"0", hashlib.sha256(os.fsencode(os.readlink(entry.path))).digest()
        elif entry.is_dir(follow_symlinks=False):
            kind, executable, body = b"d", b"0", b""
        else:
            mode = entry.stat(follow_symlinks=False).st_mode
            kind, executable, body = b"f", b"1" if mode & 0o111 else b"0", _file_sha256(entry.path)
        # Length-prefixing the name keeps distinct trees from sharing a byte stream.
        total.update(kind + executable + str(len(name)).encode() + b":" + name + body)
    return total.hexdigest()


def _copy_sealed(src: Path, dst: Path) -> None:
    """Copy src's contents into the existing folder dst, leaving every file read-only."""
    for rel, entry in _walk(src, ()):
        target = dst / rel
        if entry.is_symlink():
            raise _invalid(f"{_show(rel)} is a link; an installed bundle may not contain links")
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target, 0o700)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, target, follow_symlinks=False)
            executable = entry.stat(follow_symlinks=False).st_mode & 0o111
            os.chmod(target, 0o555 if executable else 0o444)
        else:
            raise _invalid(f"{_show(rel)} is neither a file nor a folder")
    # Folders last and deepest first: a sealed folder cannot take new children.
    for rel, _ in sorted(_walk(dst, ()), key=lambda pair: pair[0].count("/"), reverse=True):
        if (dst / rel).is_dir():
            os.chmod(dst / rel, 0o555)
    os.chmod(dst, 0o555)


def install_copy(src: Path, dst: Path) -> None:
    """Copy a validated tree to dst in one step and make it read-only (files 0444, 0555 if executable; folders 0555)."""
    src, dst = Path(src), Path(dst)
    _require_folder(src)
    if os.path.lexists(dst):
        raise DreamerError("conflict", f"{dst} already exists")
    dst.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".partial", dir=dst.parent))
    try:
        _copy_sealed(src, staging)
        try:
            os.rename(staging, dst)
        except OSError:
            raise DreamerError("conflict", f"{dst} already exists") from None
    except BaseException:
        remove_tree(staging)
        raise


def _make_writable(folder: Path) -> None:
    os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
    with os.scandir(folder) as scan:
        for entry in scan:
            if entry.is_dir(follow_symlinks=False):
                _make_writable(Path(entry.path))


def remove_tree(path: Path) -> None:
    """Remove a tree even when it was sealed read-only; a missing path is not an error."""
    path = Path(path)
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    _make_writable(path)
    shutil.rmtree(path)
