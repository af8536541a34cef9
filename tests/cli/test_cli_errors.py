"""Failures are one sentence on stderr (or {"error": ...} with --json) and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_scripted import DREAMER, ScriptedKernel, closed_port
from typer.testing import Result

UNREACHABLE = "No dreamer kernel answers at {url}; start one with `dreamer up`."


def _run(home: Path, *args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    env |= {"DREAMER_HOME": str(home), "DREAMER_URL": url}
    return subprocess.run([DREAMER, *args], env=env, capture_output=True, text=True, timeout=60)


def test_no_kernel_plain(home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    done = _run(home, "agents", url=url)
    assert done.returncode == 1
    assert UNREACHABLE.format(url=url) in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_no_kernel_json(home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    done = _run(home, "agents", "--json", url=url)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error == {"code": "kernel_unreachable", "message": UNREACHABLE.format(url=url)}
    assert done.stderr == ""  # on stdout only: a script reading both streams sees it once


def test_bad_url_is_one_sentence(home: Path) -> None:
    done = _run(home, "agents", "--json", url="ftp://example.invalid")
    assert done.returncode == 1
    assert "DREAMER_URL" in json.loads(done.stdout)["error"]["message"]


@pytest.mark.parametrize(
    ("raw", "words"),
    [("{not json", "Expecting property name"), ("[1, 2]", "an array"), ('"text"', "a string"), ("7", "a number")],
)
def test_bad_call_arguments_are_refused_before_any_request(
    cli: Callable[..., Result], against: ScriptedKernel, raw: str, words: str
) -> None:
    against.on("POST", "/v1/agents/grocery/functions/add_items", (200, {"result": 1, "invocation_id": "inv_1"}))
    done = cli("call", "grocery", "add_items", raw, "--json")
    assert done.exit_code == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_argument"
    assert error["message"].startswith("arguments must be a JSON object: ") and words in error["message"]
    assert against.seen == []
    plain = cli("call", "grocery", "add_items", raw)
    assert plain.exit_code == 1 and "arguments must be a JSON object" in plain.stderr
    assert against.seen == []


def test_kernel_error_is_shown_with_its_code(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/agents", (403, {"error": {"code": "forbidden", "message": "only administrators may act as another user"}}))
    done = cli("agents", "--json")
    assert done.exit_code == 1
    assert json.loads(done.stdout) == {"error": {"code": "forbidden", "message": "only administrators may act as another user"}}
    plain = cli("agents")
    assert plain.exit_code == 1
    assert "only administrators may act as another user" in plain.stderr and plain.stdout == ""


def test_non_json_error_body(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/agents", (502, b"<html>Bad Gateway</html>"))
    done = cli("agents", "--json")
    error = json.loads(done.stdout)["error"]
    assert done.exit_code == 1 and error["code"] == "http_502" and "502" in error["message"]


def test_non_json_success_body(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/agents", (200, b"not json at all"))
    done = cli("agents", "--json")
    assert done.exit_code == 1 and json.loads(done.stdout)["error"]["code"] == "protocol_error"


def test_missing_token_gets_a_hint(cli: Callable[..., Result], scripted: ScriptedKernel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMER_URL", scripted.url)
    scripted.on("GET", "/v1/agents", (401, {"error": {"code": "unauthorized", "message": "no API token"}}))
    done = cli("agents")
    assert done.exit_code == 1
    assert "DREAMER_TOKEN" in done.stderr
    assert "authorization" not in scripted.seen[0].headers


def test_token_and_user_are_sent(cli: Callable[..., Result], against: ScriptedKernel, monkeypatch: pytest.MonkeyPatch) -> None:
    against.on("GET", "/v1/agents", (200, []))
    assert cli("agents", "--user", "bob").exit_code == 0
    first = against.seen[-1]
    assert first.headers["authorization"] == "Bearer drm_from_file"
    assert first.headers["x-dreamer-user"] == "bob"
    monkeypatch.setenv("DREAMER_TOKEN", "drm_from_env")
    assert cli("agents").exit_code == 0
    second = against.seen[-1]
    assert second.headers["authorization"] == "Bearer drm_from_env"
    assert "x-dreamer-user" not in second.headers
