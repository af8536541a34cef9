"""functions.json documents whose examples cost Sidekick a lot: the one the review used, and smaller ones.

The review's file: 40 functions x 50 examples, each example with 6 groups of
two-word alternatives (2^6 = 64 phrases each, capped at 48 by the planner), about 388 KB.
"""

from __future__ import annotations

import json
from typing import Any

GROUPS = ("(please do|kindly go)", "(add the|put the)", "(red thing|blue thing)", "(on the|to the)",
          "(big list|small list)", "(right now|later today)")


def costly_functions(functions: int = 40, examples: int = 50, groups: int = 6) -> dict[str, Any]:
    specs = []
    for f in range(functions):
        phrases = [f"{' '.join(GROUPS[:groups])} item{f}x{e} of the outside review, part two {{text}}" for e in range(examples)]
        specs.append({
            "name": f"fn_{f}", "description": f"Function number {f}.", "exported": True,
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "examples": phrases,
        })
    return {"format": 1, "functions": specs}


def costly_text(**kwargs: int) -> str:
    return json.dumps(costly_functions(**kwargs), indent=2)
