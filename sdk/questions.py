"""A function's answer that is a question for the user: `return ask_user(question, options)`.

When Sidekick called the function, it shows the question with its options; the
user's pick calls the same function again with the arguments of that option merged
into the first call's. Called some other way, the caller gets this dict as the
result and can read it: {"ask_user": {"question", "options": [{"label", "args"}]}}.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

KEY = "ask_user"
MAX_OPTIONS = 12


def ask_user(question: str, options: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The result that asks the user to choose; `options` are (label, extra arguments)."""
    if not isinstance(question, str) or not question.strip():
        raise TypeError("ask_user(question, options) needs the question as a non-empty string")
    if not 1 <= len(options) <= MAX_OPTIONS:
        raise ValueError(f"ask_user: give 1 to {MAX_OPTIONS} options")
    listed = []
    for label, args in options:
        json.dumps(dict(args), allow_nan=False)
        listed.append({"label": str(label), "args": dict(args)})
    return {KEY: {"question": question.strip(), "options": listed}}
