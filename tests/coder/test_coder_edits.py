"""The coder's file tools in-process: exact edits, the read ledger, lint feedback, bad paths and files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dreamer.agents.coder.coder import files, tools
from dreamer.agents.coder.coder.workspace import MAX_TEXT_BYTES, ToolError


def refused(code: str, fn, *args, **kwargs) -> str:
    with pytest.raises(ToolError) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value.message


def test_read_numbers_lines_and_pages(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    out = tools.read(ws, "calc.py", offset=2, limit=2)
    assert out["content"] == "2\t    return a - b\n3\t"
    assert (out["total_lines"], out["more"]) == (6, True)
    refused("invalid_argument", tools.read, ws, "calc.py", offset=0)


def test_edit_counts_and_places_matches(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    tools.read(ws, "calc.py")
    message = refused("several_matches", tools.edit, ws, "calc.py", "return a", "return b")
    assert "2 times" in message and "lines 2, 6" in message
    message = refused("no_match", tools.edit, ws, "calc.py", "return a / b", "x")
    assert "0 matches" in message
    message = refused("no_match", tools.edit, ws, "calc.py", "def add(a, b):\n  return a - b", "x")
    done = tools.edit(ws, "calc.py", "return a", "return +a", replace_all=True)
    assert done["replaced"] == 2 and (repo / "calc.py").read_text().count("return +a") == 2


def test_an_edit_reports_only_the_lint_errors_it_introduced(repo: Path, workspace_env) -> None:
    (repo / "old.py").write_text("import os\n\n\ndef f():\n    return 1\n")  # F401 was there before
    ws = workspace_env(repo)
    tools.read(ws, "old.py")
    clean = tools.edit(ws, "old.py", "return 1", "return 2")
    assert clean["lint"] == {"introduced": [], "ok": True}
    broken = tools.edit(ws, "old.py", "return 2", "return undefined_name")
    (new,) = broken["lint"]["introduced"]
    assert new["code"] == "F821" and new["line"] == 5 and "undefined_name" in new["message"]
    assert ">5\t    return undefined_name" in new["context"]
    syntax = tools.write(ws, "bad.json", '{"a": 1,}')
    assert syntax["lint"]["introduced"][0]["code"] == "json"


def test_an_edit_of_a_file_changed_underneath_is_refused(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    tools.read(ws, "calc.py")
    (repo / "calc.py").write_text((repo / "calc.py").read_text() + "# saved in an editor\n")
    refused("changed_underneath", tools.edit, ws, "calc.py", "a - b", "a + b")
    refused("changed_underneath", tools.write, ws, "calc.py", "x = 1\n")
    assert "# saved in an editor" in (repo / "calc.py").read_text()
    tools.read(ws, "calc.py")
    assert tools.edit(ws, "calc.py", "a - b", "a + b")["replaced"] == 1


def test_paths_that_escape_are_refused_and_nothing_is_written_outside(repo: Path, workspace_env, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (repo / "link").symlink_to(outside)
    (repo / "evil.py").symlink_to(outside / "secret.txt")
    ws = workspace_env(repo)
    for path in ("../outside/secret.txt", "/etc/passwd", "link/secret.txt", "evil.py", str(outside / "secret.txt")):
        refused("outside_workspace", tools.read, ws, path)
        refused("outside_workspace", tools.write, ws, path, "pwned")
    refused("outside_workspace", tools.write, ws, "link/new.txt", "pwned")
    refused("invalid_argument", tools.read, ws, "calc.py\0")
    assert sorted(os.listdir(outside)) == ["secret.txt"] and (outside / "secret.txt").read_text() == "secret\n"


def test_binary_and_huge_files_are_refused_by_text_tools(repo: Path, workspace_env) -> None:
    (repo / "blob.bin").write_bytes(b"\x7fELF\0\0\x01binary")
    (repo / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with open(repo / "huge.txt", "wb") as handle:
        handle.truncate(MAX_TEXT_BYTES + 1)
    ws = workspace_env(repo)
    refused("binary", tools.read, ws, "blob.bin")
    refused("binary", tools.read, ws, "latin1.txt")
    refused("too_large", tools.read, ws, "huge.txt")
    refused("binary", tools.edit, ws, "blob.bin", "ELF", "elf")
    refused("too_large", tools.write, ws, "big.txt", "x" * (MAX_TEXT_BYTES + 1))
    assert not (repo / "big.txt").exists()
    assert tools.grep(ws, "ELF")["count"] == 0  # binaries are not searched


def test_a_read_only_workspace_refuses_changes(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo, writable=False)
    tools.read(ws, "calc.py")
    refused("read_only", tools.edit, ws, "calc.py", "a - b", "a + b")
    refused("read_only", tools.write, ws, "new.py", "x = 1\n")


def test_write_makes_folders_and_diff_shows_new_files(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    made = tools.write(ws, "pkg/sub/mod.py", "VALUE = 1\n")
    assert made["created"] and (repo / "pkg/sub/mod.py").read_text() == "VALUE = 1\n"
    tools.read(ws, "calc.py")
    tools.edit(ws, "calc.py", "a - b", "a + b")
    changes = tools.diff(ws)
    assert set(changes["files"]) == {"calc.py", "pkg/sub/mod.py"}
    assert "+    return a + b" in changes["diff"] and "+VALUE = 1" in changes["diff"]
    # The user's index is untouched: the new file is still untracked.
    assert "?? pkg/" in tools.run(ws, "git status --porcelain")["output"]


def test_run_caps_output_and_time(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    flood = tools.run(ws, "yes 0123456789 | head -c 3000000; echo; echo the-end", timeout=30)
    assert flood["exit_code"] == 0 and flood["output_bytes"] > 3_000_000
    assert len(flood["output"]) < 20_000 and "bytes of output left out" in flood["output"] and "the-end" in flood["output"]
    endless = tools.run(ws, "sleep 60 & sleep 60; echo never", timeout=0.5)
    assert endless["timed_out"] and "never" not in endless["output"]
    assert tools.run(ws, "exit 3")["exit_code"] == 3


def test_ledger_survives_parallel_reads(repo: Path, workspace_env) -> None:
    from concurrent.futures import ThreadPoolExecutor

    for i in range(20):
        (repo / f"m{i}.py").write_text(f"X = {i}\n")
    ws = workspace_env(repo)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: tools.read(ws, f"m{i}.py"), range(20)))
    assert set(files.Ledger.load(ws).seen) == {f"m{i}.py" for i in range(20)}


def test_file_names_that_cannot_be_reported_are_skipped(repo: Path, workspace_env) -> None:
    os.mkdir(os.path.join(bytes(repo), b"bad\xff"))
    (repo / "new\nline.py").write_text("x = 1\n")
    with open(os.path.join(bytes(repo), b"bad\xff", b"inner.py"), "w") as handle:
        handle.write("y = 2\n")
    ws = workspace_env(repo)
    assert tools.glob(ws, "*.py")["files"] == ["calc.py", "test_calc.py"]
    assert tools.search(ws, "x")["indexed_files"] == 2
