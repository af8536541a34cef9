"""open_workspace: choose a workspace, or make one in the agent's data.

Sources:
- the name or path of a workspace that exists (a granted folder or an earlier clone);
- a local folder the sandbox shows (a granted folder under /mnt): cloned with
  `git clone --no-hardlinks` when it is a repository, copied otherwise;
- an https URL of a .tar.gz / .tgz / .zip archive, fetched through the kernel
  (`ctx.fetch`, so it needs a `net:` grant for the host) and unpacked with every
  member checked (no absolute paths, no `..`, no links, bounded size and count).
Cloning a git URL (git's smart-HTTP protocol through ctx.fetch) is not built
yet: the sandbox has no network of its own, so git cannot reach the host itself.
"""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from .shell import run_argv
from .workspace import NAME_RE, ToolError, Workspace, clones_dir, find, set_current

# Within the kernel's fetch cap (10 MiB by default) and the worker protocol's message cap once base64 is added.
MAX_ARCHIVE_BYTES = 5 * 1024 * 1024
MAX_UNPACKED_BYTES = 500 * 1024 * 1024
MAX_MEMBERS = 100_000
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


def _name_for(source: str, name: str | None) -> str:
    if name is not None:
        if not isinstance(name, str) or NAME_RE.fullmatch(name) is None or name.startswith("."):
            raise ToolError("invalid_argument", "a workspace name is 1 to 63 lowercase letters, digits, dots, dashes or underscores")
        return name
    stem = PurePosixPath(urlsplit(source).path if "://" in source else source).name
    for suffix in ARCHIVE_SUFFIXES + (".git",):
        stem = stem.removesuffix(suffix)
    stem = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-.") or "repo"
    return stem[:63]


def _target(name: str) -> Path:
    target = clones_dir() / name
    if target.exists():
        raise ToolError("conflict", f"a workspace named {name} exists already; open it by name or pick another name")
    return target


def open_workspace(source: str, name: str | None = None, fetch: Any = None) -> Workspace:
    if not isinstance(source, str) or not source.strip():
        raise ToolError("invalid_argument", "give a workspace name, a folder to clone, or an archive URL")
    existing = find(source)
    if existing is not None and name is None:
        set_current(existing)
        return existing
    if source.startswith(("http://", "https://")):
        ws = _from_url(source, _name_for(source, name), fetch)
    elif source.startswith("/"):
        ws = _from_folder(Path(source), _name_for(source, name))
    else:
        raise ToolError("not_found", f"no workspace is named {source}; give a granted folder's path or an archive URL")
    set_current(ws)
    return ws


def _from_folder(source: Path, name: str) -> Workspace:
    if not source.is_dir():
        raise ToolError("not_found", f"{source} is not a folder the sandbox can see; grant it first (dreamer grant coder fs.ro:{source})")
    target = _target(name)
    if (source / ".git").exists():
        done = run_argv(["git", "-c", "safe.directory=*", "clone", "-q", "--no-hardlinks", str(source), str(target)],
                        clones_dir(), 300)
        if done["exit_code"] != 0:
            shutil.rmtree(target, ignore_errors=True)
            raise ToolError("clone_failed", f"git clone failed: {done['output'].strip()[-300:]}")
        how = f"git clone of {source}"
    else:
        try:
            shutil.copytree(source, target, symlinks=True)
        except (OSError, shutil.Error) as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise ToolError("clone_failed", f"copying {source} failed: {exc}") from None
        how = f"copy of {source}"
    (clones_dir() / f".{name}.source").write_text(how)
    return Workspace(root=target.resolve(), name=name, source=f"clone:{how}")


def _from_url(url: str, name: str, fetch: Any) -> Workspace:
    path = urlsplit(url).path.lower()
    if not path.endswith(ARCHIVE_SUFFIXES):
        raise ToolError(
            "not_available",
            "cloning a git URL is not built yet; give the URL of a .tar.gz or .zip archive of the repository",
        )
    if fetch is None:
        raise ToolError("not_available", "fetching needs the kernel's ctx.fetch")
    response = fetch(url, timeout=60, max_bytes=MAX_ARCHIVE_BYTES)
    if response.status != 200:
        raise ToolError("fetch_failed", f"{url} answered HTTP {response.status}")
    target = _target(name)
    tmp = target.with_name(f".{name}.unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        if path.endswith(".zip"):
            _unzip(response.content, tmp)
        else:
            _untar(response.content, tmp)
        # An archive of one folder (as forges make them) is that folder.
        children = list(tmp.iterdir())
        root = children[0] if len(children) == 1 and children[0].is_dir() else tmp
        root.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (clones_dir() / f".{name}.source").write_text(url)
    return Workspace(root=target.resolve(), name=name, source=f"clone:{url}")


def _safe_member(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith("\\") or "\0" in name:
        raise ToolError("invalid_archive", f"the archive holds an unsafe path {name!r}; it was not unpacked")
    return path


def _untar(data: bytes, into: Path) -> None:
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for count, member in enumerate(archive):
                if count >= MAX_MEMBERS:
                    raise ToolError("invalid_archive", f"the archive holds more than {MAX_MEMBERS} entries")
                rel = _safe_member(member.name)
                if member.isdir():
                    (into / rel).mkdir(parents=True, exist_ok=True)
                    continue
                if not member.isfile():
                    continue  # links, devices and fifos are left out
                total += member.size
                if total > MAX_UNPACKED_BYTES:
                    raise ToolError("invalid_archive", f"the archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")
                (into / rel).parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                if source is not None:
                    with source, open(into / rel, "wb") as out:
                        shutil.copyfileobj(source, out)
    except tarfile.TarError as exc:
        raise ToolError("invalid_archive", f"the file is not a readable tar archive: {exc}") from None


def _unzip(data: bytes, into: Path) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise ToolError("invalid_archive", f"the archive holds more than {MAX_MEMBERS} entries")
            total = 0
            for member in members:
                rel = _safe_member(member.filename)
                if member.is_dir():
                    (into / rel).mkdir(parents=True, exist_ok=True)
                    continue
                if (member.external_attr >> 16) & 0o170000 == 0o120000:
                    continue  # a symlink
                total += member.file_size
                if total > MAX_UNPACKED_BYTES:
                    raise ToolError("invalid_archive", f"the archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")
                (into / rel).parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(into / rel, "wb") as out:
                    # Read bounded: the declared size of a member may lie.
                    copied = 0
                    while chunk := source.read(1 << 20):
                        copied += len(chunk)
                        if copied > member.file_size or total - member.file_size + copied > MAX_UNPACKED_BYTES:
                            raise ToolError("invalid_archive", "an archive member is larger than it says")
                        out.write(chunk)
    except zipfile.BadZipFile as exc:
        raise ToolError("invalid_archive", f"the file is not a readable zip archive: {exc}") from None
