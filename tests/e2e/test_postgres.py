"""The same kernel with its store in PostgreSQL (DREAMER_DATABASE_URL)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from kernelproc import start_kernel


def test_kernel_on_postgresql(tmp_path: Path, fresh_pg_url: str) -> None:
    k = start_kernel(tmp_path / "home", {"DREAMER_DATABASE_URL": fresh_pg_url})
    try:
        assert not (tmp_path / "home" / "kernel.db").exists()
        assert {"grocery", "recipes"} <= {a["name"] for a in k.cli_json("agents")}
        k.cli_json("call", "grocery", "add_items", '{"items": ["oat milk"]}')
        k.cli_json("call", "recipes", "plan_dinner")
        assert "oat milk" in json.dumps(k.cli_json("call", "grocery", "list_items")["result"])
        assert k.cli("revoke", "recipes", "agent:grocery").returncode == 0
        denied = k.cli("call", "recipes", "plan_dinner", "--json")
        assert json.loads(denied.stdout)["error"]["code"] == "permission_denied"
        assert k.cli_json("audit", "verify")["ok"] is True
        bob = k.cli_json("users", "add", "bob")["token"]
        assert "oat milk" not in json.dumps(k.cli_json("call", "grocery", "list_items", token=bob)["result"])
        port = k.port
    finally:
        k.stop(signal.SIGKILL)
    # A restart on the same database keeps everything and migrates nothing twice.
    k2 = start_kernel(tmp_path / "home", {"DREAMER_DATABASE_URL": fresh_pg_url}, port=port)
    try:
        assert "oat milk" in json.dumps(k2.cli_json("call", "grocery", "list_items")["result"])
        assert k2.cli_json("audit", "verify")["ok"] is True
    finally:
        k2.stop()
