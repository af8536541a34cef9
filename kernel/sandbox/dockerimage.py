"""The Docker backend's runtime image, made locally: no registry is ever contacted.

The image is an (almost) empty root imported with `docker import`: the folders
the sandbox mounts onto, and the merged-/usr symlinks (/bin -> usr/bin, ...) that
cannot be created at run time on a read-only root. Everything executable comes
from the host at run time, bound read-only: /usr and the Python runtime in use.
So the image is a few hundred bytes, builds in a fraction of a second, and its
tag is the hash of its contents: a host with another layout gets another image,
and a second kernel finds the first one's image already there.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Iterable
from pathlib import Path

import docker
from docker.errors import DockerException, ImageNotFound
from requests.exceptions import RequestException

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.runtime import SDK_DIR_IN_SANDBOX, Runtime

REPOSITORY = "dreamer-runtime"
IMAGE_LABEL = "dreamer.runtime"

# Top-level folders that are symlinks into /usr on a merged-/usr host. /sbin is
# left out on purpose: docker mounts its init (tini) at /sbin/docker-init, which
# must land in a real folder of the image, not inside the read-only /usr bind.
SYSTEM_LINKS = ("bin", "lib", "lib32", "lib64", "libx32")

# Mount points the backend always uses; docker would create them itself, but
# having them in the image keeps the root identical from one start to the next.
MOUNT_POINTS = ("agent", "data", "dev", "etc", "proc", "sbin", "sys", "tmp", "usr", SDK_DIR_IN_SANDBOX.strip("/"))


def system_layout(root: Path = Path("/")) -> tuple[dict[str, str], list[str]]:
    """(symlinks to recreate in the image, real folders to bind read-only) among SYSTEM_LINKS."""
    links: dict[str, str] = {}
    folders: list[str] = []
    for name in SYSTEM_LINKS:
        path = root / name
        if path.is_symlink():
            links[f"/{name}"] = os.readlink(path)
        elif path.is_dir():
            folders.append(f"/{name}")
    return links, folders


def runtime_links(runtime: Runtime) -> dict[str, str]:
    """Paths the interpreter was found through that are symlinks outside every bound folder."""
    found: dict[str, str] = {}
    for link, target in runtime.links:
        if not any(link.is_relative_to(root) for root in runtime.roots) and not link.is_relative_to("/usr"):
            found[str(link)] = str(target)
    return found


def _entry(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    # Fixed owner, mode and time: the same layout always gives the same bytes, hence the same tag.
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = 0o777 if kind == tarfile.SYMTYPE else 0o755
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.linkname = linkname
    return info


def _parents(path: str) -> Iterable[str]:
    parts = path.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        yield "/".join(parts[:depth])


def root_tarball(links: dict[str, str]) -> bytes:
    """An uncompressed tar of the mount points and `links` (absolute path -> target)."""
    folders: set[str] = {name.strip("/") for name in MOUNT_POINTS}
    for path in [*MOUNT_POINTS, *links]:
        folders.update(_parents(path))
    folders -= {path.strip("/") for path in links}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for folder in sorted(folders):
            tar.addfile(_entry(folder, tarfile.DIRTYPE))
        for path, target in sorted(links.items()):
            tar.addfile(_entry(path.strip("/"), tarfile.SYMTYPE, target))
    return buffer.getvalue()


def image_tag(tarball: bytes) -> str:
    return f"{REPOSITORY}:{hashlib.sha256(tarball).hexdigest()[:16]}"


def ensure_image(client: docker.DockerClient, links: dict[str, str]) -> str:
    """The tag of the runtime image for this layout, imported first if the engine lacks it.

    Idempotent and cheap when the image exists (one API call); two kernels racing
    to import it both end up with the same content under the same tag.
    """
    tarball = root_tarball(links)
    tag = image_tag(tarball)
    repository, _, version = tag.partition(":")
    try:
        try:
            client.images.get(tag)
            return tag
        except ImageNotFound:
            pass
        client.api.import_image_from_data(
            tarball, repository=repository, tag=version, changes=[f"LABEL {IMAGE_LABEL}=1"]
        )
        client.images.get(tag)
    except (DockerException, RequestException) as error:
        raise DreamerError(
            "sandbox_unavailable", f"cannot make the Docker runtime image {tag}: {_first_line(error)}"
        ) from None
    return tag


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
