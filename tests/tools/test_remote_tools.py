"""A streamable-HTTP tool server on localhost, installed from an MCP registry server.json,
with its header kept in the kernel (set by the user, never in the bundle)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kernelproc import KernelProc, free_port, http_client

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(HERE / "http_tool_server.py"), str(port), "k1"])
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with http_client(timeout=0.5) as probe:
            for _ in range(200):
                try:
                    probe.get(url)
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_install_from_server_json_and_call_with_kernel_kept_headers(
    tool_kernel: KernelProc, weather_url: str, tmp_path: Path
) -> None:
    server_json = tmp_path / "server.json"
    server_json.write_text(json.dumps({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
        "name": "io.github.example/weather", "description": "Weather forecasts.", "version": "1.0.2",
        "remotes": [{"type": "streamable-http", "url": weather_url,
                     "headers": [{"name": "X-Test-Key", "isRequired": True, "isSecret": True}]}],
    }))
    installed = tool_kernel.cli_json("install", str(server_json), "--yes")
    assert installed["name"] == "weather" and installed["transport"] == "streamable-http"
    # Without the header the server refuses: a clear error, nothing hangs.
    done = tool_kernel.cli("call-tool", "weather", "forecast", '{"city": "Lyon"}', "--json")
    assert done.returncode != 0
    assert json.loads(done.stdout or done.stderr)["error"]["code"] in ("tool_error", "worker_crashed")
    tool_kernel.cli_json("tools", "headers", "weather", "X-Test-Key: k1")
    answer = tool_kernel.cli_json("call-tool", "weather", "forecast", '{"city": "Lyon"}')
    assert answer["result"] == {"city": "Lyon", "sky": "clear"}
    listed = next(s for s in tool_kernel.cli_json("tools") if s["name"] == "weather")
    assert listed["headers"] == ["X-Test-Key"]  # names only, never the values
    # Listed at install was impossible (no header yet); the first connection recorded them.
    assert [t["name"] for t in listed["tools"]] == ["forecast"]
    assert "k1" not in json.dumps(tool_kernel.cli_json("audit"))


def test_a_server_json_without_a_usable_server_is_refused(tool_kernel: KernelProc, tmp_path: Path) -> None:
    bad = tmp_path / "server.json"
    bad.write_text(json.dumps({"name": "io.github.x/y", "version": "1.0.0",
                               "packages": [{"registryType": "npm", "identifier": "y", "transport": {"type": "stdio"}}]}))
    done = tool_kernel.cli("install", str(bad), "--yes", "--json")
    assert done.returncode != 0
    error = json.loads(done.stdout or done.stderr)["error"]
    assert error["code"] == "invalid_bundle" and "not built yet" in error["message"]
