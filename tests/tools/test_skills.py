"""Skills of a tool bundle checked against the Agent Skills rules; tool bundle manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamer.contracts.manifest import parse_manifest
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.serverjson import manifest_from_server_json
from dreamer.kernel.tools.skills import load_skills, parse_skill


def test_a_valid_skill() -> None:
    skill = parse_skill("---\nname: plan-week\ndescription: Plan a week.\n---\n# Steps\nDo it.\n", "plan-week")
    assert (skill.name, skill.description, skill.body) == ("plan-week", "Plan a week.", "# Steps\nDo it.")


@pytest.mark.parametrize(
    ("text", "folder", "problem"),
    [
        ("name: x\n", "x", "must start with YAML front matter"),
        ("---\nname: Plan\ndescription: d\n---\n", "Plan", "lowercase letters"),
        ("---\nname: a--b\ndescription: d\n---\n", "a--b", "single hyphens"),
        ("---\nname: other\ndescription: d\n---\n", "mine", "must match its folder name"),
        ("---\nname: mine\ndescription: ''\n---\n", "mine", "non-empty 'description'"),
        ("---\nname: mine\ndescription: " + "x" * 1025 + "\n---\n", "mine", "longer than 1024"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\n", "a" * 65, "at most 64"),
        ("---\nname: [\n---\n", "mine", "not valid YAML"),
    ],
)
def test_invalid_skills_are_refused(text: str, folder: str, problem: str) -> None:
    with pytest.raises(DreamerError) as caught:
        parse_skill(text, folder)
    assert caught.value.code == "invalid_bundle" and problem in caught.value.message


def test_load_skills_needs_a_skill_md(tmp_path: Path) -> None:
    (tmp_path / "skills" / "empty").mkdir(parents=True)
    with pytest.raises(DreamerError, match="has no SKILL.md"):
        load_skills(tmp_path)


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        ("{}", "exactly one of 'command'"),
        ("{command: [x], url: 'http://a'}", "exactly one of 'command'"),
        ("{url: 'ftp://a'}", "does not have the required form"),
    ],
)
def test_tool_manifests_need_one_server(server: str, problem: str) -> None:
    text = f"name: t1\nversion: 1.0.0\nkind: tool\ntitle: T\ndescription: d\npublisher: me\nserver: {server}\n"
    with pytest.raises(DreamerError) as caught:
        parse_manifest(text)
    assert problem in caught.value.message


def test_a_tool_bundle_declares_no_permissions() -> None:
    text = "name: t1\nversion: 1.0.0\nkind: tool\ntitle: T\ndescription: d\npublisher: me\nserver: {url: 'http://a'}\npermissions: {required: [llm]}\n"
    with pytest.raises(DreamerError, match="declares no permissions"):
        parse_manifest(text)


def test_server_json_stdio_pypi_package() -> None:
    manifest = manifest_from_server_json({
        "name": "io.github.someone/Fancy_Server", "version": "0.3.0",
        "packages": [{"registryType": "pypi", "identifier": "fancy-server", "transport": {"type": "stdio"}}],
    })
    assert manifest["name"] == "fancy-server" and manifest["server"] == {"command": ["python", "-m", "fancy_server"]}
    parse_manifest(__import__("yaml").safe_dump(manifest))
