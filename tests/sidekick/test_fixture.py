"""tools.json, which the routing tests read, must describe the agents as their code does now."""

from __future__ import annotations

import json

import pytest
from make_tools import AGENTS, FIXTURE, ROOT, describe


@pytest.mark.parametrize("agent", AGENTS)
def test_fixture_matches_the_agents_code(agent: str) -> None:
    if not (ROOT / "agents" / agent / "agent.yaml").exists():
        pytest.skip(f"the {agent} agent is not in this tree")
    stored = {a["name"]: a for a in json.loads(FIXTURE.read_text())}
    described = describe(agent)  # keyed by the bundle's name (sql-explorer lives in sql_explorer/)
    assert stored.get(described["name"]) == described, (
        f"tests/sidekick/tools.json no longer matches agents/{agent}: "
        "run `.venv/bin/python tests/sidekick/make_tools.py`"
    )
