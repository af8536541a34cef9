"""The codebase index in-process: chunks along definitions, BM25 ranking, refresh by hash, persistence."""

from __future__ import annotations

import time
from pathlib import Path

from dreamer.agents.coder.coder import chunks, index


def test_python_is_cut_along_functions_classes_and_methods() -> None:
    text = (
        "import os\n\nLIMIT = 3\n\n\nclass Parser:\n    \"\"\"Parses.\"\"\"\n    mode = 1\n\n"
        "    def parse_config(self, path):\n        return os.path.exists(path)\n\n"
        "    @staticmethod\n    def tokens(text):\n        return text.split()\n\n\n"
        "async def fetch_all():\n    pass\n"
    )
    found = {c.name: (c.kind, c.start, c.end) for c, _ in chunks.chunk_file("pkg/parser.py", text)}
    assert found["Parser"] == ("class", 6, 9)
    assert found["Parser.parse_config"] == ("method", 10, 11)
    assert found["Parser.tokens"] == ("method", 13, 15)  # the decorator belongs to the method
    assert found["fetch_all"] == ("function", 18, 19)
    assert found["lines 1-5"][0] == "block"


def test_other_languages_and_broken_python_still_chunk() -> None:
    js = "const x = 1;\n\nfunction loadUser(id) {\n  return db.get(id);\n}\n\nexport class Store {\n}\n"
    names = [c.name for c, _ in chunks.chunk_file("app.js", js)]
    assert names == ["lines 1-2", "loadUser", "Store"]
    broken = [c.name for c, _ in chunks.chunk_file("x.py", "def f(:\n    pass\n")]
    assert broken == ["f"]  # no ast: cut where a definition starts
    assert chunks.terms("parseHTTPResponse snake_case_name") == [
        "parsehttpresponse", "parse", "http", "response", "snake_case_name", "snake", "case", "name"]


def _repo(root: Path) -> None:
    (root / "auth").mkdir(parents=True)
    (root / "auth/tokens.py").write_text("def refresh_token(user):\n    \"\"\"Issue a new session token.\"\"\"\n    return sign(user)\n")
    (root / "billing.py").write_text("def charge_card(card, amount):\n    return gateway.charge(card, amount)\n")
    (root / "notes.md").write_text("# Notes\nnothing about tokens here, or maybe one token\n")
    (root / "image.png").write_bytes(b"\x89PNG\0\0token")


def test_bm25_ranks_the_defining_chunk_first_and_refreshes_by_hash(tmp_path: Path, workspace_env) -> None:
    root = tmp_path / "ws"
    _repo(root)
    ws = workspace_env(root)
    first = index.search(ws, "refresh session token")
    assert first["results"][0]["path"] == "auth/tokens.py" and first["results"][0]["name"] == "refresh_token"
    assert all(r["path"] != "image.png" for r in first["results"])
    assert first["refreshed"]["changed"] == 4
    idx = index.index_for(ws)
    # Touching a file without changing it re-reads it, but its hash keeps its chunks.
    (root / "billing.py").write_text((root / "billing.py").read_text())
    assert idx.refresh(force=True)["changed"] == 0
    (root / "billing.py").write_text("def refund_card(card):\n    return gateway.refund(card)\n")
    (root / "notes.md").unlink()
    assert idx.refresh(force=True) | {"truncated": False} == {"checked": 3, "changed": 1, "removed": 1, "truncated": False}
    assert index.search(ws, "charge")["results"] == []
    assert index.search(ws, "refund")["results"][0]["name"] == "refund_card"
    # A new worker loads the stored index: the same answers, no file parsed again.
    index.forget(ws)
    again = index.index_for(ws)
    assert len(again.files) == 3 and again.query("refund", 1)[0][1].name == "refund_card"
    assert again.refresh(force=True)["changed"] == 0


def test_thousands_of_files_index_with_bounded_work(tmp_path: Path, workspace_env) -> None:
    root = tmp_path / "big"
    for d in range(20):
        folder = root / f"pkg{d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"mod{f}.py").write_text(f"def handler_{d}_{f}(event):\n    return process(event, {f})\n")
    (root / "pkg3/mod7.py").write_text("def unique_needle_function():\n    return 1\n")
    ws = workspace_env(root)
    found = index.search(ws, "unique needle")
    assert found["indexed_files"] == 2000 and found["results"][0]["path"] == "pkg3/mod7.py"
    # An edit through the tools keeps the open index exact without a re-walk.
    from dreamer.agents.coder.coder import tools

    tools.read(ws, "pkg0/mod0.py")
    tools.edit(ws, "pkg0/mod0.py", "handler_0_0", "special_entry_point")
    index.index_for(ws).scanned_at = time.monotonic()  # no re-walk for this query
    assert index.search(ws, "special entry point")["results"][0]["path"] == "pkg0/mod0.py"
