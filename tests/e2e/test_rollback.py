"""`dreamer rollback`: back to the version before the latest upgrade, with its grants and its data."""

from __future__ import annotations

import json
from pathlib import Path

from kernelproc import KernelProc, write_bundle

CODE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def put(ctx: Context, text: str) -> None:
    """Keep a line."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS lines (text TEXT)")
    ctx.db.execute("INSERT INTO lines VALUES (?)", (text,))

@function(exported=True)
def lines(ctx: Context) -> list:
    """Every line kept."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS lines (text TEXT)")
    return [r[0] for r in ctx.db.execute("SELECT text FROM lines")]

@function(exported=True)
def which(ctx: Context) -> str:
    """Which version answers."""
    return "VERSION"
'''


def _installed(kernel: KernelProc, folder: Path) -> None:
    done = kernel.cli("install", str(folder), "--yes", "--grant", "llm")
    assert done.returncode == 0, done.stderr


def test_rollback_restores_the_version_its_grants_and_its_data(kernel: KernelProc, tmp_path: Path) -> None:
    one = write_bundle(tmp_path / "v1", "undoable", CODE.replace("VERSION", "one"), optional=["llm"])
    two = write_bundle(tmp_path / "v2", "undoable", CODE.replace("VERSION", "two"), required=["notify"],
                       optional=["llm"], version="0.2.0")
    _installed(kernel, one)
    kernel.cli_json("call", "undoable", "put", '{"text": "written by one"}')
    nothing = kernel.cli("rollback", "undoable", "--yes", "--json")
    assert nothing.returncode != 0
    assert json.loads(nothing.stdout)["error"]["code"] == "not_found"

    _installed(kernel, two)
    kernel.cli_json("call", "undoable", "put", '{"text": "written by two"}')
    assert kernel.cli_json("call", "undoable", "which")["result"] == "two"
    assert "notify" in next(a for a in kernel.cli_json("agents") if a["name"] == "undoable")["grants"]

    back = kernel.cli_json("rollback", "undoable", "--yes")
    assert back["version"] == "0.1.0" and back["grants"] == ["llm"]  # as before the upgrade: notify is gone
    assert kernel.cli_json("call", "undoable", "which")["result"] == "one"
    assert kernel.cli_json("call", "undoable", "lines")["result"] == ["written by one"]
    # What the newer version wrote is kept aside, outside the sandbox, not lost.
    aside = kernel.home / "users" / "me" / "agents" / "undoable" / "rollback" / "replaced"
    assert (aside / "agent.db").is_file()
    entries = kernel.cli_json("audit", "--limit", "20")
    assert any(e["action"] == "rollback" and e["target"] == "undoable@0.1.0" for e in entries)
    # Once is all: the snapshot was used.
    again = kernel.cli("rollback", "undoable", "--yes", "--json")
    assert json.loads(again.stdout)["error"]["code"] == "not_found"
    assert "\n" not in json.loads(again.stdout)["error"]["message"]
