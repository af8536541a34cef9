"""extract() against hostile archives: every refusal is one sentence and leaves nothing behind."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest

from bundle_tarcraft import (
    MANIFEST,
    Member,
    bundle_members,
    end_of_archive,
    file,
    folder,
    gzip_zeros,
    raw_header,
    tar_bytes,
    targz,
)
from dreamer.contracts.archive import BundleLimits, extract
from dreamer.contracts.errors import DreamerError

MiB = 1024 * 1024

HOSTILE: dict[str, tuple[Member, str]] = {
    "absolute": (file("/etc/cron.d/evil"), "absolute path"),
    "dotdot": (file("../escaped.txt"), "'..'"),
    "nested_dotdot": (file("grocery/../../escaped.txt"), "'..'"),
    "symlink": (Member("passwd", type=tarfile.SYMTYPE, linkname="/etc/passwd"), "symbolic link"),
    "relative_symlink": (Member("up", type=tarfile.SYMTYPE, linkname="../../.."), "symbolic link"),
    "hardlink": (Member("shadow", type=tarfile.LNKTYPE, linkname="/etc/shadow"), "hard link"),
    "char_device": (Member("null", type=tarfile.CHRTYPE), "device file"),
    "block_device": (Member("sda", type=tarfile.BLKTYPE), "device file"),
    "fifo": (Member("pipe", type=tarfile.FIFOTYPE), "FIFO"),
    "backslash": (file("..\\..\\evil.bat"), "backslash"),
    "nul": (Member("nul", b"x", pax={"path": "agent.yaml\x00.txt"}), "NUL"),
    "newline": (file("forged\nINFO all fine"), "control character"),
    "empty_component": (file("grocery//x.py"), "empty"),
    "file_with_slash": (file("grocery/"), "empty"),
    "file_named_dot": (file("./"), "bundle's own folder"),
}


@pytest.mark.parametrize("stdlib_filter", [True, False], ids=["with-stdlib-filter", "python-3.11.2"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_member_is_refused_by_name(case: str, stdlib_filter: bool, refuse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own checks refuse each one, also where the stdlib has no tarfile.data_filter
    (before 3.11.4: Debian 12's python3 is 3.11.2)."""
    if not stdlib_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    member, reason = HOSTILE[case]
    error = refuse(targz(bundle_members(member)))
    assert reason in error.message
    shown = repr(member.pax.get("path", member.name))
    assert shown[:40] in error.message, error.message


def test_a_hostile_member_after_good_ones_still_leaves_nothing(refuse) -> None:
    members = bundle_members(*(file(f"grocery/m{i}.py", b"x" * 1000) for i in range(20)), file("../late.txt"))
    assert "'../late.txt'" in refuse(targz(members)).message


def test_gzip_bomb_is_refused_from_its_header_without_reading_it(refuse) -> None:
    declared = 200 * MiB
    payload = (
        gzip.compress(raw_header("agent.yaml", len(MANIFEST)) + MANIFEST.encode().ljust(tarfile.BLOCKSIZE, b"\0"), mtime=0)
        + gzip.compress(raw_header("zeros.bin", declared), mtime=0)
        + gzip_zeros(declared)
        + gzip.compress(end_of_archive(), mtime=0)
    )
    assert len(payload) < 1 * MiB  # the whole bomb is tiny compressed
    error = refuse(payload)
    # The per-file message (not "expands to more than") proves it stopped at the header.
    assert f"'zeros.bin' is {declared} bytes, over the limit" in error.message


def test_files_under_the_per_file_limit_but_over_the_total_are_refused(refuse) -> None:
    limits = BundleLimits(max_file_bytes=4000, max_total_bytes=10_000)
    members = bundle_members(*(file(f"f{i}.bin", b"z" * 3000) for i in range(4)))
    error = refuse(targz(members), limits)
    assert "'f3.bin' takes the bundle past 10000 bytes unpacked" in error.message


def test_a_bomb_hidden_in_a_pax_header_stops_at_the_expansion_budget(refuse) -> None:
    # tarfile reads a pax header whole; only the decompression budget stands in the way.
    limits = BundleLimits(max_total_bytes=64 * 1024, max_files=10)
    declared = 64 * MiB
    payload = (
        gzip.compress(raw_header("././@PaxHeader", declared, tarfile.XHDTYPE), mtime=0)
        + gzip_zeros(declared)
        + gzip.compress(raw_header("agent.yaml", 0) + end_of_archive(), mtime=0)
    )
    error = refuse(payload, limits)
    assert f"expands to more than {limits.max_expanded_bytes} bytes" in error.message
    assert limits.max_expanded_bytes < 2 * MiB


def test_too_many_files(refuse) -> None:
    limits = BundleLimits(max_files=5)
    members = bundle_members(*(file(f"n{i}.txt") for i in range(6)))
    error = refuse(targz(members), limits)
    assert "'n4.txt' takes the bundle past the limit of 5 files" in error.message


def test_folders_count_towards_the_file_limit(refuse) -> None:
    members = bundle_members(*(folder(f"d{i}") for i in range(10)))
    assert "limit of 5 files" in refuse(targz(members), BundleLimits(max_files=5)).message


def test_archive_over_the_compressed_limit(refuse) -> None:
    data = targz(bundle_members(file("big.bin", bytes(range(256)) * 40)))
    error = refuse(data, BundleLimits(max_archive_bytes=len(data) - 1))
    assert f"over the limit of {len(data) - 1} bytes" in error.message


def test_path_length_and_depth_limits(refuse) -> None:
    long = "x" * 241
    assert "longer than 240 characters" in refuse(targz(bundle_members(file(long)))).message
    deep = "/".join(["d"] * 21) + "/f.txt"
    assert "deeper than 20 folders" in refuse(targz(bundle_members(file(deep)))).message


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"this is not an archive at all", "not a gzip-compressed tar archive"),
        (tar_bytes(bundle_members()), "not a gzip-compressed tar archive"),  # plain tar, no gzip
        (gzip.compress(b"hello, not a tar file" * 50), "not a valid tar archive"),
        (b"\x1f\x8b" + b"\xff" * 64, "not valid gzip data"),
    ],
    ids=["empty", "garbage", "plain_tar", "gzip_of_garbage", "gzip_magic_then_garbage"],
)
def test_what_is_not_a_tar_gz(data: bytes, reason: str, refuse) -> None:
    assert reason in refuse(data).message


def test_truncated_archive(refuse) -> None:
    data = targz(bundle_members(file("noise.bin", bytes(range(256)) * 400)))
    assert "truncated" in refuse(data[: len(data) // 2]).message


def test_a_member_shorter_than_its_header_declares(refuse) -> None:
    tar = raw_header("agent.yaml", 5000) + MANIFEST.encode().ljust(tarfile.BLOCKSIZE, b"\0")
    error = refuse(gzip.compress(tar, mtime=0))
    assert "not a valid tar archive" in error.message or "shorter than" in error.message


def test_no_agent_yaml(refuse) -> None:
    assert "no agent.yaml" in refuse(targz([file("README.md")])).message


def test_two_top_folders_are_not_stripped(refuse) -> None:
    members = [*bundle_members(prefix="a/"), file("b/readme.md")]
    assert "no agent.yaml" in refuse(targz(members)).message


def test_an_archive_of_only_a_dot_entry(refuse) -> None:
    assert "holds no files" in refuse(targz([folder(".")])).message


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ([file("agent.yaml", MANIFEST.encode()), file("agent.yaml", b"name: evil")], "'agent.yaml' appears twice"),
        ([file("./agent.yaml", MANIFEST.encode()), file("agent.yaml", b"name: evil")], "'agent.yaml' appears twice"),
        ([*bundle_members(), folder("lib"), folder("lib")], "'lib' appears twice"),
        ([*bundle_members(), file("lib"), file("lib/x.py")], "'lib/x.py' lies under 'lib', which is already a file"),
        ([*bundle_members(), file("lib"), folder("lib")], "'lib' appears twice"),
        ([*bundle_members(), file("lib/x.py"), file("lib")], "'lib' is a file but an earlier member made it a folder"),
    ],
    ids=["duplicate_file", "duplicate_via_dot_slash", "duplicate_folder", "file_under_file", "folder_over_file", "file_over_folder"],
)
def test_clashing_members(members: list[Member], reason: str, refuse) -> None:
    assert reason in refuse(targz(members)).message


def test_dest_that_exists_is_a_conflict_and_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "bundle"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(DreamerError) as caught:
        extract(targz(bundle_members()), dest)
    assert caught.value.code == "conflict"
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


# ------------------------------------------------------------------ accepted shapes


def test_single_top_folder_is_stripped_like_a_github_tarball(tmp_path: Path) -> None:
    top = "grocery-3f2a9c1/"
    members = [folder(top.rstrip("/")), *bundle_members(folder(top + "grocery"), file(top + "grocery/server.py", b"X = 1\n"), prefix=top)]
    # GitHub adds a global pax header carrying the commit id.
    members.insert(0, Member("pax_global_header", type=tarfile.XGLTYPE, pax={"comment": "3f2a9c1" * 6}))
    out = extract(targz(members), tmp_path / "parent" / "bundle")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["agent.yaml", "grocery", "grocery/server.py"]
    assert sorted(p.name for p in (tmp_path / "parent").iterdir()) == ["bundle"]


def test_members_at_the_root_with_dot_slash_prefixes(tmp_path: Path) -> None:
    members = [folder("."), file("./agent.yaml", MANIFEST.encode()), folder("./grocery"), file("./grocery/a.py", b"a")]
    out = extract(targz(members), tmp_path / "bundle")
    assert (out / "agent.yaml").read_text() == MANIFEST
    assert (out / "grocery/a.py").read_bytes() == b"a"


def test_a_single_folder_beside_agent_yaml_is_not_stripped(tmp_path: Path) -> None:
    out = extract(targz(bundle_members(file("grocery/server.py"))), tmp_path / "bundle")
    assert (out / "agent.yaml").is_file() and (out / "grocery/server.py").is_file()


def test_modes_are_normalised(tmp_path: Path) -> None:
    members = bundle_members(file("setuid", b"x", mode=0o4777), file("private", b"x", mode=0o600), Member("wide", mode=0o777, type=tarfile.DIRTYPE))
    out = extract(targz(members), tmp_path / "bundle")
    assert (out / "setuid").stat().st_mode & 0o7777 == 0o755
    assert (out / "private").stat().st_mode & 0o7777 == 0o644
    assert (out / "wide").stat().st_mode & 0o7777 == 0o755
    assert out.stat().st_mode & 0o7777 == 0o755


def test_gnu_format_archives_are_read_too(tmp_path: Path) -> None:
    long = "grocery/" + "n" * 150 + ".py"
    out = extract(targz(bundle_members(file(long, b"ok")), fmt=tarfile.GNU_FORMAT), tmp_path / "bundle")
    assert (out / long).read_bytes() == b"ok"
