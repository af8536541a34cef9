"""What the user told Sidekick, applied to a call: "I'm vegetarian" fills recipes' `diet`.

A parameter opts in with `"x-from-memory": true` in its JSON schema and lists its
values in `examples` (recipes' diet: vegetarian, vegan, ...). When the planned
call leaves it empty and one of the user's own remembered facts (not an agent's)
names one of those values, the value fills it when the user said the fact in
this same conversation ("I'm vegetarian", then "any ideas with spinach?": the
earlier sentence is part of the request, as if they had said "vegetarian ideas
with spinach"), or when the agent may read Sidekick's memory (the grant
memory:read). A fact told in another conversation is memory, not the request:
without the grant it would reach an agent the user did not allow to see it, so
Sidekick says once per conversation what to grant, with the exact command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, replace

from dreamer.kernel.install.registry import grants_of
from dreamer.kernel.memory.facts import memories
from dreamer.kernel.store.db import Store
from dreamer.sidekick.memory.extract import avoided_in
from dreamer.sidekick.planner import Step, Tool

SCOPE = "memory:read"
USER_SOURCES = ("user",)  # facts the user stated themselves (agents' facts never fill anything)


@dataclass(frozen=True)
class Applied:
    steps: tuple[Step, ...]
    hints: tuple[str, ...]  # one sentence per agent that would need memory:read to honour a fact


def hint(agent: str, fact: str) -> str:
    return (f"{agent} could take into account that you told me \"{fact}\" if you let it read what you "
            f"told me: run `dreamer grant {agent} {SCOPE}`.")


def passed_on_hint(agent: str, fact: str) -> str:
    """Said when this conversation's fact filled the call although `agent` may not read memory."""
    return (f"I passed on that you told me \"{fact}\" for this request; to let {agent} use what you tell me "
            f"in every conversation, run `dreamer grant {agent} {SCOPE}`.")


def _value_in(fact: str, values: Sequence[str]) -> str | None:
    said = fact.casefold().replace("-", " ")
    for value in sorted(values, key=len, reverse=True):
        wanted = value.casefold().replace("-", " ")
        if wanted and re.search(rf"(?<![\w]){re.escape(wanted)}(?![\w])", said):
            return value
    return None


def apply_preferences(
    store: Store, user_id: int, steps: Sequence[Step], tools: Mapping[str, Tool], hinted: set[str],
    said_here: Callable[[], Set[int]] = frozenset,
) -> Applied:
    """The steps with remembered preferences filled in where allowed; hints for the rest.

    `hinted` holds the agents already told about in this conversation (updated here);
    `said_here` gives the ids of the facts the user stated in this conversation (read only when a
    step has a parameter to fill).
    """
    wanting = [(s, t) for s in steps if (t := tools.get(s.name)) is not None
               and (_preference_params(t, s) or _avoided_params(t, s))]
    if not wanting:
        return Applied(tuple(steps), ())
    here = said_here()
    # This conversation's facts first: what the user just said outranks what they said long ago.
    facts = sorted((f for f in memories(store, user_id) if f.source in USER_SOURCES), key=lambda f: f.id not in here)
    if not facts:
        return Applied(tuple(steps), ())
    with store.session() as s:
        allowed = {t.agent for _, t in wanting if any(g.scope == SCOPE for g in grants_of(s, user_id, t.agent))}
    out: list[Step] = []
    hints: list[str] = []
    for step in steps:
        tool = tools.get(step.name)
        params = _preference_params(tool, step) if tool is not None else {}
        args = dict(step.args)
        for name in _avoided_params(tool, step) if tool is not None else ():
            # What the user said they do not eat: this conversation's facts, or every one of theirs where the
            # agent may read what they told Sidekick ("I'm allergic to shellfish", then "plan dinner").
            things = [w for f in facts if (f.id in here or step.agent in allowed) and (w := avoided_in(f.text))]
            if things:
                args[name] = ", ".join(dict.fromkeys(things))
        for name, values in params.items():
            for fact in facts:
                value = _value_in(fact.text, values)
                if value is None:
                    continue
                if step.agent in allowed or fact.id in here:
                    args[name] = value
                    if step.agent not in allowed and step.agent not in hinted:
                        hinted.add(step.agent)
                        hints.append(passed_on_hint(step.agent, fact.text))
                elif step.agent not in hinted:
                    hinted.add(step.agent)
                    hints.append(hint(step.agent, fact.text))
                break
        out.append(replace(step, args=args) if args != dict(step.args) else step)
    return Applied(tuple(out), tuple(hints))


def _avoided_params(tool: Tool, step: Step) -> list[str]:
    """Parameters that take what the user does not eat ("x-from-memory": "avoided")."""
    return [name for name, schema in tool.properties.items()
            if name not in step.args and isinstance(schema, Mapping) and schema.get("x-from-memory") == "avoided"]


def _preference_params(tool: Tool, step: Step) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, schema in tool.properties.items():
        if name in step.args or not isinstance(schema, Mapping) or schema.get("x-from-memory") is not True:
            continue
        values = schema.get("examples")
        if isinstance(values, list):
            found[name] = [v for v in values if isinstance(v, str)][:200]
    return found
