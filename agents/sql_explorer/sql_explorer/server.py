"""The sql-explorer's exported functions: explore a database, then answer from it.

Every function reaches the data through `ctx.data` (the kernel's data syscalls): the
kernel holds the credentials, lets the user see only their role's rows, and checks and
rewrites every query. This code decides what to look at and how to say the answer.
"""

from __future__ import annotations

import csv
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field

from dreamer.sdk import Context, InvalidArgument, ask_user, function

from sql_explorer import semantic
from sql_explorer.explorer import NoModel, explore
from sql_explorer.fuzzy import rank_values

DEFAULT = "hr-demo"
EXPORT_FORMATS = ("xlsx", "csv")
MODEL = semantic.load()


class BadRequest(InvalidArgument, ValueError):
    """What the caller asked cannot be done; kind invalid_argument and this sentence."""


@function(exported=True, examples=["list the (tables|data) [I can see]", "what (tables|data) can I (query|see)"])
def list_tables(ctx: Context, connection: str = DEFAULT) -> dict:
    """List the tables of a database you may query, with descriptions, join keys and your scope in words."""
    return ctx.data.catalog(connection)


@function(exported=True, examples=["(show|describe) the {table} table", "what is in the {table} table"])
def get_schema(ctx: Context, table: str, connection: str = DEFAULT) -> dict:
    """Show one table's columns, types and a few sample rows (only rows you may see)."""
    return ctx.data.schema(connection, table)


@function(exported=True)
def get_distinct_values(ctx: Context, table: str, column: str, search: str | None = None,
                        connection: str = DEFAULT) -> dict:
    """The distinct values of a column (within your scope); with `search`, the values most like it, misspellings included."""
    found = ctx.data.distinct(connection, table, column)
    if not search:
        return found
    counts = {str(v["value"]): v["count"] for v in found["values"]}
    ranked = rank_values(search, list(counts))
    return {**found, "search": search, "values": [{"value": v, "count": counts[v], "score": s} for v, s in ranked]}


@function(exported=True)
def resolve_name_to_code(ctx: Context, entity: str, name: str, connection: str = DEFAULT) -> dict:
    """The code of a named thing ("operations" → department codes); several matches mean the name is ambiguous."""
    dim = MODEL.dimensions.get(entity.lower().strip())
    if dim is None or not dim.label:
        raise BadRequest(f"entity must be one of: {', '.join(n for n, d in MODEL.dimensions.items() if d.label)}")
    found = semantic.match_names(name, _names_by_code(ctx, connection, dim))
    return {"entity": dim.name, "name": name, "matches": [m.__dict__ for m in found],
            "code": found[0].code if len(found) == 1 else None, "ambiguous": len(found) > 1}


# Sidekick gives this parameter the user's whole request, not just the words a template's slot took.
WholeQuestion = Annotated[str, Field(json_schema_extra={"x-whole-request": True})]


@function(exported=True)
def execute_sql(ctx: Context, sql: str, page: int = 1, connection: str = DEFAULT) -> dict:
    """Run one read-only SQL query within your scope; a page of rows and a query_id for the rest."""
    return ctx.data.query(connection, sql, page=page)


@function(
    exported=True,
    # HR subject words only (employees, absences, leave, salary, hires...): a bare "how many {question}"
    # would pull every counting question (groceries, eggs for pancakes) to this agent. Sidekick passes
    # the whole question, not the slot's words ("x-whole-request" on the parameter).
    examples=[
        "how many (employees|people|staff|workers|absences|hires|no-shows|sick days|remote days|leave days) {question}",
        "how many (terminated|remote|new|active|approved|unapproved|medical) (employees|people|staff|absences) {question}",
        "(what is|what's|show me) the (average|total|mean|median) (salary|salaries|pay|absences|headcount) {question}",
        "(average|total|mean|median) (salary|salaries|pay|absences|headcount) {question}",
        "who (has|had|earns|took|is) the (highest|lowest|most|fewest|least|biggest) (salary|pay|absences|leave) {question}",
        "which (department|team|employee|manager|person) (has|had) the (most|fewest|highest|lowest) {question}",
        "(count|list|show) [me] [the] (employees|staff|absences|hires) {question}",
        "ask the (hr|sql) [data] {question}", "ask (hr|the sql explorer) {question}",
    ],
)
def ask(ctx: Context, question: WholeQuestion, choices: dict[str, str] | None = None, review: bool | None = None,
        connection: str = DEFAULT) -> dict:
    """Answer a question about the HR data (employees, absences, attendance, leave) by exploring it and running SQL.

    With a model, `review` asks a second model call to approve, revise or block each query:
    True always, False never, unset for queries over several tables or with nesting.
    """
    if not question.strip():
        raise BadRequest("Ask a question, for example: how many employees in operations were absent last month?")
    try:
        return explore(ctx, connection, question, MODEL.text, dict(choices or {}), review=review)
    except NoModel:
        return _offline(ctx, connection, question, dict(choices or {}))


@function(exported=True)
def export(ctx: Context, query_id: str, format: str = "xlsx") -> dict:
    """Write a whole query result to a file you can download (xlsx or csv) in this agent's data folder."""
    if format not in EXPORT_FORMATS:
        raise BadRequest(f"format must be one of {', '.join(EXPORT_FORMATS)}")
    if not re.fullmatch(r"q_[0-9a-f]{16}", query_id):
        raise BadRequest("query_id is the id a query returned, like q_0123456789abcdef")
    first = ctx.data.page(query_id, 1, page_size=200)
    rows = list(first["rows"])
    for page in range(2, first["pages"] + 1):
        rows += ctx.data.page(query_id, page, page_size=200)["rows"]
    folder = Path("/data" if Path("/data").is_dir() else ".") / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{query_id}.{format}"
    if format == "csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(first["columns"])
            writer.writerows(rows)
    else:
        from openpyxl import Workbook

        book = Workbook(write_only=True)
        sheet = book.create_sheet("result")
        sheet.append(first["columns"])
        for row in rows:
            sheet.append(row)
        book.save(path)
    return {"file": f"exports/{path.name}", "rows": len(rows), "format": format, "truncated": first["truncated"]}


def _names_by_code(ctx: Context, connection: str, dim: semantic.Dimension) -> dict[str, list[str]]:
    """code -> its names, most used first (the data's own spellings, misspelt ones included)."""
    if not dim.label:
        found = ctx.data.distinct(connection, dim.table, dim.column)
        return {str(v["value"]): [str(v["value"])] for v in found["values"]}
    sql = (f"SELECT {dim.column}, {dim.label}, COUNT(*) AS n FROM {dim.table} "
           f"GROUP BY {dim.column}, {dim.label} ORDER BY n DESC")
    out: dict[str, list[str]] = {}
    for code, name, _ in ctx.data.query(connection, sql, page_size=200)["rows"]:
        out.setdefault(str(code), []).append(str(name))
    return out


def _offline(ctx: Context, connection: str, question: str, choices: dict[str, str]) -> dict:
    """No model: compile the question onto the semantic model, or say plainly that it needs one."""
    today = datetime.now(_zone(ctx.user.timezone)).date()
    values = semantic.Values(lambda dim: _names_by_code(ctx, connection, dim))
    compiled = semantic.compile_question(MODEL, question, today, values, choices)
    if isinstance(compiled, semantic.NeedsModel):
        return {"answer": f"This question needs a model: {compiled.reason}. Without one I can answer questions "
                "about a measure (absences, employees, leave, remote work, salary), filtered by department, "
                "status or reason and a time such as last month.", "via": "semantic-model", "sql": None}
    if isinstance(compiled, semantic.Choice):
        options = [(f"{m.name} ({m.code})", {"question": question, "choices": {**choices, compiled.dimension: m.code}})
                   for m in compiled.matches]
        return ask_user(f"Which {compiled.dimension} do you mean by \"{compiled.said}\"?", options)
    ran = ctx.data.query(connection, compiled.sql)
    value = ran["rows"][0][0] if ran["rows"] else 0
    return {"answer": semantic.answer_words(compiled, value), "value": value, "measure": compiled.measure.name,
            "via": "semantic-model", "sql": ran["sql"], "secured_sql": ran["secured_sql"], "query_id": ran["query_id"]}


def _zone(name: str) -> Any:
    try:
        return ZoneInfo(name)
    except Exception:  # an unknown zone name: UTC
        return ZoneInfo("UTC")
