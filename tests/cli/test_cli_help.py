"""Every command documents itself and accepts --json and --user."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import Result

COMMANDS = [
    ["up"], ["down"], ["init"], ["build"], ["install"], ["uninstall"], ["agents"], ["call"], ["database"],
    ["permissions"], ["grant"], ["revoke"], ["logs"], ["audit"], ["users", "add"], ["users", "list"], ["doctor"], ["chat"],
    ["publish"], ["search"], ["login"], ["yank"], ["keys", "generate"], ["keys", "show"], ["gallery", "serve"],
    ["test"], ["dev"], ["outdated"], ["upgrade"],
    ["tools"], ["tools", "enable"], ["tools", "disable"], ["tools", "headers"], ["call-tool"],
    ["traces", "export"], ["traces", "opt-out"], ["traces", "opt-in"], ["traces", "setting"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_help_of_every_command(cli: Callable[..., Result], command: list[str]) -> None:
    done = cli(*command, "--help")
    assert done.exit_code == 0, done.output
    assert "Usage" in done.stdout
    assert "--json" in done.stdout and "--user" in done.stdout


def test_top_level_help_lists_the_commands(cli: Callable[..., Result]) -> None:
    done = cli("--help")
    assert done.exit_code == 0
    for command in COMMANDS:
        assert command[0] in done.stdout


def test_usage_errors_exit_2(cli: Callable[..., Result]) -> None:
    assert cli("call").exit_code == 2
    assert cli("audit", "bogus").exit_code == 2
    assert cli("nosuchcommand").exit_code == 2
