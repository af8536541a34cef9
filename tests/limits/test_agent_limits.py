"""Installation ceilings from the environment, an agent's own `limits:`, and the review that shows them."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from dreamer.cli.review import read_review, render_review
from dreamer.contracts.manifest import AgentLimits, parse_manifest
from dreamer.kernel.config import AGENT_LIMITS, LIMIT_VARIABLES, Limits, load_settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.permissions.review import limit_rows, review

MANIFEST = """\
name: cruncher
version: 1.0.0
title: Cruncher
description: Crunches numbers.
publisher: tests
entry: cruncher.server
"""


def test_an_agent_gets_what_it_asks_for_up_to_the_ceiling() -> None:
    ceiling = Limits(address_space_mb=1024, processes=64, call_timeout_s=30.0)
    got = ceiling.within({"memory_mb": 256, "processes": 5000, "call_timeout_s": 2.5})
    assert got.address_space_mb == 256
    assert got.processes == 64
    assert got.call_timeout_s == 2.5
    # What it did not ask for is the installation's.
    assert (got.cpu_seconds, got.open_files, got.file_size_mb) == (ceiling.cpu_seconds, ceiling.open_files, ceiling.file_size_mb)
    assert isinstance(got.processes, int) and isinstance(got.call_timeout_s, float)


def test_nothing_asked_is_the_ceiling_itself() -> None:
    ceiling = Limits(processes=50)
    assert ceiling.within(None) == ceiling
    assert ceiling.within({}) == ceiling


def test_values_that_are_not_limits_are_ignored_not_trusted() -> None:
    ceiling = Limits()
    assert ceiling.within({"memory_mb": True, "processes": -1, "open_files": "9", "max_log_bytes": 1, "nope": 3}) == ceiling


def test_manifest_names_match_the_settings() -> None:
    assert set(AgentLimits.model_fields) == set(AGENT_LIMITS)
    assert {field for field, _ in LIMIT_VARIABLES.values()} == set(AGENT_LIMITS.values())
    for variable, (field, _) in LIMIT_VARIABLES.items():
        name = next(n for n, f in AGENT_LIMITS.items() if f == field)
        assert variable in ("DREAMER_CALL_TIMEOUT", "DREAMER_BACKGROUND_TIMEOUT", f"DREAMER_LIMIT_{name.upper()}")


def test_installation_ceilings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in {
        "DREAMER_LIMIT_MEMORY_MB": "768",
        "DREAMER_LIMIT_CPU_SECONDS": "40",
        "DREAMER_LIMIT_FILE_MB": "5",
        "DREAMER_LIMIT_OPEN_FILES": "100",
        "DREAMER_LIMIT_PROCESSES": "20",
        "DREAMER_CALL_TIMEOUT": "7.5",
    }.items():
        monkeypatch.setenv(variable, value)
    limits = load_settings().limits
    assert (limits.address_space_mb, limits.cpu_seconds, limits.file_size_mb) == (768, 40, 5)
    assert (limits.open_files, limits.processes, limits.call_timeout_s) == (100, 20, 7.5)


def test_defaults_without_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in LIMIT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert load_settings().limits == Limits()


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DREAMER_LIMIT_MEMORY_MB", "lots", "is not a whole number"),
        ("DREAMER_LIMIT_PROCESSES", "1.5", "is not a whole number"),
        ("DREAMER_LIMIT_OPEN_FILES", "0", "greater than zero"),
        ("DREAMER_LIMIT_CPU_SECONDS", "-3", "greater than zero"),
        ("DREAMER_CALL_TIMEOUT", "nan", "greater than zero"),
        ("DREAMER_CALL_TIMEOUT", "inf", "finite"),
        ("DREAMER_CALL_TIMEOUT", "soon", "is not a number"),
    ],
)
def test_a_bad_ceiling_is_one_sentence(monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith(f"dreamer: {variable}")
    assert says in message
    assert "\n" not in message


def test_manifest_limits_are_validated_field_by_field() -> None:
    manifest = parse_manifest(MANIFEST + "limits:\n  memory_mb: 512\n  call_timeout_s: 2\n")
    assert manifest.model_dump(mode="json", exclude_none=True)["limits"] == {"memory_mb": 512, "call_timeout_s": 2.0}
    for body, says in [
        ("limits:\n  memory_mb: true\n", "limits.memory_mb"),
        ("limits:\n  memory_mb: '512'\n", "limits.memory_mb"),
        ("limits:\n  memory_mb: 8\n", "greater than or equal to 64"),
        ("limits:\n  processes: 10000000\n", "less than or equal to"),
        ("limits:\n  memroy_mb: 512\n", "unknown field"),
        ("limits: 512\n", "'limits'"),
    ]:
        with pytest.raises(DreamerError) as caught:
            parse_manifest(MANIFEST + body)
        assert caught.value.code == "invalid_bundle"
        assert says in caught.value.message


def test_review_lists_every_limit_with_what_was_asked() -> None:
    ceiling = Limits(address_space_mb=1024, processes=64)
    rows = {row["name"]: row for row in limit_rows({"memory_mb": 4096, "processes": 16}, ceiling)}
    assert set(rows) == set(AGENT_LIMITS)
    assert rows["memory_mb"] == {"name": "memory_mb", "asked": 4096, "granted": 1024, "ceiling": 1024}
    assert rows["processes"] == {"name": "processes", "asked": 16, "granted": 16, "ceiling": 64}
    assert rows["cpu_seconds"]["asked"] is None and rows["cpu_seconds"]["granted"] == ceiling.cpu_seconds


def _shown(manifest_text: str, ceiling: Limits) -> str:
    parsed = parse_manifest(manifest_text)
    manifest = parsed.model_dump(mode="json", exclude_none=True)
    staged = {"manifest": manifest, "functions": [], "review": review(parsed, [], ceiling), "upgrade": None}
    out = io.StringIO()
    render_review(Console(file=out, width=200, color_system=None), read_review(staged), [])
    return out.getvalue()


def test_the_install_review_shows_limits_an_agent_asks_for() -> None:
    text = _shown(MANIFEST + "limits:\n  memory_mb: 4096\n  processes: 16\n", Limits(address_space_mb=1024))
    assert "Limits:" in text
    assert "memory 1024 MB (asks for 4096; this installation allows at most 1024)" in text
    assert "processes 16" in text
    assert "CPU time" not in text


def test_the_install_review_is_quiet_about_limits_nobody_asked_for() -> None:
    assert "Limits" not in _shown(MANIFEST, Limits())
