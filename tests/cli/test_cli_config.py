"""Where the CLI finds the kernel and its token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dreamer.cli.config import Credentials, host_port, load_config, parse_credentials, read_credentials


def test_json_credentials() -> None:
    text = json.dumps({"url": "http://10.0.0.5:9000", "user": "me", "token": "drm_abc"})
    assert parse_credentials(text) == Credentials(token="drm_abc", url="http://10.0.0.5:9000", user="me")


def test_bare_token_line() -> None:
    assert parse_credentials("drm_abc\n") == Credentials(token="drm_abc")


def test_key_value_lines() -> None:
    text = "# written by hand\ntoken = 'drm_abc'\nurl: http://h:1\nuser=bob\n"
    assert parse_credentials(text) == Credentials(token="drm_abc", url="http://h:1", user="bob")


@pytest.mark.parametrize("text", ["", "   \n", "{not json", "[1, 2]", json.dumps({"token": 5}), "http://only-a-url:1"])
def test_unusable_credentials_give_no_token(text: str) -> None:
    assert parse_credentials(text).token is None


def test_missing_file_is_not_an_error(tmp_path: Path) -> None:
    assert read_credentials(tmp_path / "nope") == Credentials()


def test_environment_wins_over_the_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "credentials").write_text(json.dumps({"url": "http://file:1/", "token": "drm_file"}))
    monkeypatch.delenv("DREAMER_URL")
    config = load_config()
    assert (config.url, config.token) == ("http://file:1", "drm_file")
    monkeypatch.setenv("DREAMER_URL", "http://env:2")
    monkeypatch.setenv("DREAMER_TOKEN", "drm_env")
    config = load_config()
    assert (config.url, config.token) == ("http://env:2", "drm_env")
    assert config.pid_path == home / "kernel.pid"


def test_default_url_without_anything(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DREAMER_URL")
    assert load_config().url == "http://127.0.0.1:8700"


def test_up_binds_where_dreamer_url_points() -> None:
    assert host_port("http://127.0.0.1:9123") == ("127.0.0.1", 9123)
    assert host_port("http://localhost") == ("localhost", 8700)
    assert host_port("http://[::1]:notaport") == ("127.0.0.1", 8700)
