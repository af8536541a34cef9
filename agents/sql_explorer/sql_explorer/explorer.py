"""The explorer loop with a model: discover → inspect → resolve values → write SQL → run → answer.

The model picks one action at a time as strict JSON; each action is one kernel call
(so each is a span under the invocation), and its result (or error) goes back into
the transcript. A failed query is fed back with the database's or the guard's words
so the model can re-read the schema and correct it; at most MAX_SQL_ERRORS failures
and MAX_STEPS actions. A query over several tables or with nesting gets a reviewer
call first (approve / revise / block, strict JSON). Security never depends on this loop: the kernel validates and
scopes every query whatever the model writes.
"""

from __future__ import annotations

import json
from typing import Any

import sqlglot
from sqlglot import exp

from dreamer.sdk import CallError, Context, ask_user

MAX_STEPS = 10
MAX_SQL_ERRORS = 3
MAX_RESULT_CHARS = 3000

ACTION = {
    "type": "object",
    "properties": {
        "action": {"enum": ["get_schema", "get_distinct_values", "execute_sql", "ask_user", "answer"]},
        "table": {"type": "string"},
        "column": {"type": "string"},
        "sql": {"type": "string"},
        "question": {"type": "string"},
        "options": {"type": "array", "items": {"type": "object", "properties": {
            "label": {"type": "string"}, "dimension": {"type": "string"}, "value": {"type": "string"}},
            "required": ["label", "dimension", "value"]}},
        "text": {"type": "string"},
    },
    "required": ["action"],
}
REVIEW = {
    "type": "object",
    "properties": {"verdict": {"enum": ["approve", "revise", "block"]}, "reason": {"type": "string"},
                   "sql": {"type": "string"}},
    "required": ["verdict", "reason"],
}
SYSTEM = (
    "You answer questions about a database by exploring before writing SQL. Reply with exactly one JSON action. "
    "Look at a table's schema before querying it; resolve names the user says to codes with get_distinct_values; "
    "when a name fits several values, ask_user with one option per value. Prefer the semantic model's measures "
    "(for example count distinct employees, not rows). Write one read-only SELECT in the connection's dialect. "
    "When you have the number or rows, answer in one or two sentences."
)


class NoModel(Exception):
    """No model is configured, or the user did not grant `llm`: the caller answers without one."""


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + "…"


def needs_review(sql: str, dialect: str) -> bool:
    """Several sources or nesting: where a second look pays (a plain one-table query is not reviewed)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - unparseable: the kernel refuses it anyway; a review costs nothing more
        return True
    names = {t.name.lower() for t in tree.find_all(exp.Table)}
    return len(names) > 1 or any(True for _ in tree.find_all(exp.Subquery, exp.CTE))


def explore(ctx: Context, connection: str, question: str, catalog: dict[str, Any], choices: dict[str, str],
            review: bool | None = None) -> dict[str, Any]:
    """`review`: True always, False never, None (the default) for multi-source or nested queries.
    `catalog`: the connection's catalogue, its semantic model included (the model reads both)."""
    tables = {k: v for k, v in catalog.items() if k != "semantic"}
    semantic = json.dumps(catalog.get("semantic") or {}, separators=(",", ":"))
    transcript = [f"QUESTION: {question}", f"SEMANTIC MODEL: {semantic}", f"CATALOG: {_short(tables)}"]
    if choices:
        transcript.append(f"THE USER CHOSE: {json.dumps(choices)}")
    last: dict[str, Any] | None = None
    errors = 0
    for _ in range(MAX_STEPS):
        try:
            step = ctx.llm("\n\n".join(transcript), schema=ACTION, system=SYSTEM, variant="standard", max_tokens=800)
        except CallError as exc:
            if exc.kind in ("not_available", "permission_denied"):
                raise NoModel(str(exc)) from None
            raise
        action = step.get("action")
        transcript.append(f"ACTION: {json.dumps(step)}")
        try:
            if action == "get_schema":
                transcript.append(f"RESULT: {_short(ctx.data.schema(connection, str(step.get('table', ''))))}")
            elif action == "get_distinct_values":
                found = ctx.data.distinct(connection, str(step.get("table", "")), str(step.get("column", "")))
                transcript.append(f"RESULT: {_short(found)}")
            elif action == "execute_sql":
                sql = str(step.get("sql", ""))
                if review or (review is None and needs_review(sql, catalog.get("dialect", "sqlite"))):
                    sql = _review(ctx, question, sql)
                last = ctx.data.query(connection, sql)
                transcript.append(f"RESULT: {_short({k: last[k] for k in ('columns', 'rows', 'total_rows')})}")
            elif action == "ask_user":
                options = [(str(o["label"]), {"question": question, "choices": {**choices, o["dimension"]: o["value"]}})
                           for o in step.get("options") or []][:12]
                if not options:
                    transcript.append("ERROR: ask_user needs options")
                    continue
                return ask_user(str(step.get("question") or "Which did you mean?"), options)
            elif action == "answer":
                return _answered(str(step.get("text", "")), last, "model")
            else:
                transcript.append("ERROR: unknown action")
        except CallError as exc:
            if exc.kind == "permission_denied":
                raise
            transcript.append(f"ERROR ({exc.kind}): {exc}")
            if action == "execute_sql":
                errors += 1
                if errors >= MAX_SQL_ERRORS:
                    text = f"I could not write a query that works ({exc})."
                    return {"answer": text, "reply": text, "sql": None, "via": "model"}
    text = "I could not finish exploring within the step limit; try a narrower question."
    return {"answer": text, "reply": text, "sql": last["sql"] if last else None, "via": "model"}


def _review(ctx: Context, question: str, sql: str) -> str:
    """A second opinion on the SQL (approve / revise / block); never a replacement for the kernel's checks."""
    verdict = ctx.llm(f"Question: {question}\nSQL: {sql}\nDoes the SQL answer the question correctly and "
                      "count the right thing? Reply approve, revise (with corrected sql) or block.",
                      schema=REVIEW, system="You review SQL written by another model.", variant="standard")
    if verdict["verdict"] == "block":
        raise CallError("sql_refused", f"the reviewer blocked the query: {verdict['reason']}")
    if verdict["verdict"] == "revise" and verdict.get("sql"):
        return str(verdict["sql"])
    return sql


def _answered(text: str, last: dict[str, Any] | None, via: str) -> dict[str, Any]:
    out: dict[str, Any] = {"answer": text, "reply": text, "via": via, "sql": None}
    if last is not None:
        out |= {"sql": last["sql"], "secured_sql": last["secured_sql"], "query_id": last["query_id"],
                "columns": last["columns"], "rows": last["rows"], "total_rows": last["total_rows"]}
    return out
