"""Write tests/sidekick/tools.json from the starter agents' real code.

    .venv/bin/python tests/sidekick/make_tools.py

Each agent is described in a process of its own (the SDK keeps one registry per
process, as in a worker), in the `dreamer agents --json` shape the planner reads.
test_fixture.py fails when the file no longer matches the code: rerun this then.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("tools.json")
# Folders of the starter agents: all of them, so a catch-all example of one agent that takes
# another's everyday requests shows up in the routing score.
AGENTS = ("grocery", "recipes", "notes", "calendar", "sql_explorer", "watch")

_DESCRIBE = """
import importlib, json, sys
sys.path.insert(0, sys.argv[2])  # the bundle's folder, as /agent is in the worker
importlib.import_module(sys.argv[1])
from dreamer.sdk.registry import REGISTRY
print(json.dumps(REGISTRY.specs()))
"""


def describe(agent: str) -> dict[str, Any]:
    """The agent as `dreamer agents --json` shows it (the fields the planner reads)."""
    manifest = yaml.safe_load((ROOT / "agents" / agent / "agent.yaml").read_text())
    folder = ROOT / "agents" / agent
    out = subprocess.run(
        [sys.executable, "-c", _DESCRIBE, manifest["entry"], str(folder)], capture_output=True, text=True, check=True,
        cwd=folder,
    )
    functions = json.loads(out.stdout)
    return {
        "name": manifest["name"],
        "description": " ".join(str(manifest.get("description", "")).split()),
        "functions": [
            {k: f[k] for k in ("name", "description", "exported", "confirm", "parameters", "examples", "undo", "reply", "sidekick",
                                "reads", "undo_hint") if k in f}
            for f in functions
        ],
    }


def main() -> None:
    FIXTURE.write_text(json.dumps([describe(a) for a in AGENTS], indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
