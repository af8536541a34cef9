"""The `dreamer` command groups, one module each; `register_all` wires them into the app."""

from __future__ import annotations

import typer

from dreamer.cli.commands import (
    agents, audit, bundles, chat, develop, doctor, feed, gallery, kernel, logs, nodes, permissions, tools, traces, triggers, users,
)
from dreamer.cli.commands import data as data_commands
from dreamer.cli.commands import learned as learned_commands
from dreamer.cli.commands import memory as memory_commands


def register_all(app: typer.Typer) -> None:
    for module in (kernel, bundles, agents, permissions, logs, audit, users, doctor, chat, feed, triggers, gallery, develop, tools, traces,
                   nodes):
        module.register(app)
    memory_commands.register(app)
    learned_commands.register(app)
    data_commands.register(app)
