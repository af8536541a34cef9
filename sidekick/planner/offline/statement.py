"""A message that carries a query as written ("run SELECT name FROM employees", or the bare statement).

Such a statement is a typed value (slots kind "sql"): only a parameter named for it takes it,
and everyday words never read as one. Templates cannot catch it: a statement is longer than
any other typed value and its words (FROM, GROUP BY) say nothing of a function, so the
function that runs queries is chosen here, before the templates are fitted, when what comes
before the statement is no more than a command to run it ("run", "execute this query:").
"""

from __future__ import annotations

from dreamer.sidekick.planner.language.lexicon import FILLERS
from dreamer.sidekick.planner.language.slots import SQL_OPENERS
from dreamer.sidekick.planner.offline.index import Index
from dreamer.sidekick.planner.offline.request import Request

# Words that may come before a statement without making it part of another request.
_COMMAND = frozenset({"run", "execute", "exec", "query", "sql", "statement", "following", "try", "perform"})


def statement(index: Index, req: Request) -> tuple[int, str, str] | None:
    """(tool number, parameter, the statement) when the message is a command to run a query, else None."""
    start = next((k for k, t in enumerate(req.toks) if t.fix.casefold() in SQL_OPENERS), None)
    if start is None or any(t.fix.casefold() not in _COMMAND and t.fix.casefold() not in FILLERS
                            for t in req.toks[:start]):
        return None
    found: list[tuple[int, str, str]] = []
    for number, info in enumerate(index.tools):
        for name, slot in info.slots.items():
            if slot.kind != "sql" or not slot.required:
                continue
            got = req.read(slot, start, len(req.toks))
            if got is not None:
                found.append((number, name, str(got[0])))
    return found[0] if len(found) == 1 else None  # two agents that run queries: the templates decide
