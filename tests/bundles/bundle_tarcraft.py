"""Builders for hand-crafted, often hostile, bundle archives (imported by the bundle tests)."""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field

MANIFEST = """\
name: grocery
version: 1.0.0
title: Grocery List
description: Keeps your shopping list.
publisher: dreamer
entry: grocery.server
"""


@dataclass
class Member:
    """One tar member to write: regular file by default."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    mode: int = 0o644
    size: int | None = None  # override the declared size
    pax: dict[str, str] = field(default_factory=dict)


def file(name: str, data: bytes = b"x", mode: int = 0o644) -> Member:
    return Member(name, data, mode=mode)


def folder(name: str) -> Member:
    return Member(name, type=tarfile.DIRTYPE, mode=0o755)


def tar_bytes(members: Iterable[Member], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.type = member.type
            info.linkname = member.linkname
            info.mode = member.mode
            info.pax_headers = dict(member.pax)
            if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
                info.size = len(member.data)
                tar.addfile(info, io.BytesIO(member.data))
            else:
                tar.addfile(info)
    return buffer.getvalue()


def targz(members: Iterable[Member], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    return gzip.compress(tar_bytes(members, fmt), mtime=0)


def bundle_members(*extra: Member, prefix: str = "") -> list[Member]:
    return [file(prefix + "agent.yaml", MANIFEST.encode()), *extra]


def gzip_zeros(total: int, chunk: int = 1024 * 1024) -> bytes:
    """gzip members that decompress to `total` zero bytes, built without compressing them all.

    Concatenated gzip members form one stream, so one compressed megabyte repeated
    gives a tiny archive that expands enormously: a gzip bomb in a few kilobytes.
    """
    one = gzip.compress(b"\0" * chunk, mtime=0)
    full, rest = divmod(total, chunk)
    return one * full + (gzip.compress(b"\0" * rest, mtime=0) if rest else b"")


def raw_header(name: str, size: int, type: bytes = tarfile.REGTYPE) -> bytes:
    """A ustar header that declares `size` whatever data follows it."""
    info = tarfile.TarInfo(name)
    info.size = size
    info.type = type
    info.mode = 0o644
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def end_of_archive() -> bytes:
    return b"\0" * (tarfile.BLOCKSIZE * 2)
