"""Derive tests/tracing/agentlightning_schema.json from Agent Lightning's own pydantic models.

The `agentlightning` package does not install here: its v1 (the repository's main) needs
Python 3.12 (dreamer runs on 3.11), and the 0.3.0 wheel on PyPI pulls in litellm[proxy],
agentops, gpustat, graphviz and more. So the models are read from the source instead:
each class named below is cut out of its file with `ast` and run with pydantic alone,
and its `model_json_schema()` is written out, with the commit it came from.

    git clone https://github.com/microsoft/agent-lightning /tmp/agl
    .venv/bin/python scripts/derive_agentlightning_schema.py /tmp/agl > tests/tracing/agentlightning_schema.json
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from typing import Any

V1 = "c632d8dd804103bd421c65208bc501952689039f"  # main, "Restore Python lint checks ... (#553)"
V0 = "f0a77cfad71e6222a3edb7dfc7a0f611bd231364"  # the last commit before "remove legacy implementation"

# (commit, file, classes and type aliases to take, in dependency order)
SOURCES: list[tuple[str, str, list[str]]] = [
    (V1, "agentlightning/schemas.py", [
        "Event", "EventCreate", "ModelRequestData", "RewardData", "RolloutState", "RolloutLocalConfig",
        "RolloutK8sConfig", "RolloutConfig", "RolloutMetadata", "RolloutLifecycleStatus", "Rollout",
    ]),
    (V1, "agentlightning/server/routes/rollouts.py", ["RolloutDetail"]),
    (V0, "agentlightning/types/core.py", ["Triplet"]),
    (V0, "agentlightning/semconv.py", ["RewardPydanticModel"]),
]
# v0's span model (what its span store keeps of each OTLP span) has an `Event` of its own: a namespace apart.
V0_SPAN = (V0, "agentlightning/types/tracer.py", [
    "AttributeValue", "Attributes", "TraceState", "StatusCode", "SpanContext", "TraceStatus", "Event", "Link",
    "OtelResource", "Span",
])
EXPORTED = ["Event", "ModelRequestData", "RewardData", "Rollout", "RolloutDetail", "Triplet", "RewardPydanticModel"]

PRELUDE = """
from __future__ import annotations
from enum import Enum, StrEnum
from typing import Any, Dict, List, Literal, Optional, Sequence, Union
from pydantic import BaseModel, ConfigDict, Field
"""


def show(repo: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout


def load(repo: str, sources: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    """The named classes and aliases of `sources`, run with pydantic alone (their methods, which
    need OpenTelemetry, are defined but never called)."""
    namespace: dict[str, Any] = {}
    exec(PRELUDE, namespace)
    for commit, path, names in sources:
        text = show(repo, commit, path)
        found: dict[str, ast.stmt] = {}
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                found[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found[node.targets[0].id] = node
        for name in names:
            segment = ast.get_source_segment(text, found[name])
            assert segment is not None, name
            # Aliases run as written (they are values); classes with postponed annotations.
            prefix = "from __future__ import annotations\n" if isinstance(found[name], ast.ClassDef) else ""
            exec(prefix + segment, namespace)
    return namespace


def schema_of(namespace: dict[str, Any], name: str) -> Any:
    model = namespace[name]
    model.model_rebuild(_types_namespace=namespace)
    return model.model_json_schema()


def main(repo: str) -> None:
    namespace = load(repo, SOURCES)
    models = {name: schema_of(namespace, name) for name in EXPORTED}
    models["Span"] = schema_of(load(repo, [V0_SPAN]), "Span")
    out = {
        "$comment": "Derived from Agent Lightning's pydantic models (github.com/microsoft/agent-lightning: "
                    f"agentlightning/schemas.py and agentlightning/server/routes/rollouts.py at {V1}; "
                    f"agentlightning/types/core.py, agentlightning/types/tracer.py and agentlightning/semconv.py at {V0}) "
                    "by scripts/derive_agentlightning_schema.py; do not edit by hand.",
        "sources": [{"repository": "https://github.com/microsoft/agent-lightning", "commit": c, "file": p, "classes": n}
                    for c, p, n in [*SOURCES, V0_SPAN]],
        "models": models,
    }
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
