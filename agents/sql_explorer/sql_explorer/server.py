"""The sql-explorer's exported functions: explore a database, then answer from it.

Every function reaches the data through `ctx.data` (the kernel's data syscalls): the
kernel holds the credentials, lets the user see only their role's rows, and checks and
rewrites every query. This code decides what to look at and how to say the answer.
"""

from __future__ import annotations

import csv
import re
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field

from dreamer.sdk import CallError, Context, InvalidArgument, ask_user, function

from sqlglot import exp

from sql_explorer import answer, compiler, sqlbuild
from sql_explorer.explorer import NoModel, explore
from sql_explorer.fuzzy import match_names, rank_values
from sql_explorer.model import Dimension, Model, ModelError
from sql_explorer.model import parse as parse_model

DEFAULT = "hr-demo"
EXPORT_FORMATS = ("xlsx", "csv")


class BadRequest(InvalidArgument, ValueError):
    """What the caller asked cannot be done; kind invalid_argument and this sentence."""


@function(exported=True, examples=["list the (tables|data) [I can see]", "what (tables|data) can I (query|see)"])
def list_tables(ctx: Context, connection: str = DEFAULT) -> dict:
    """List the tables of a database you may query, with descriptions, join keys and your scope in words."""
    catalog = ctx.data.catalog(connection)
    tables = catalog.get("tables") or []
    listed = "; ".join(f"{t['table']} ({t['description'].split('.')[0].lower()})" if t.get("description")
                       else t["table"] for t in tables)
    reply = f"You can query {len(tables)} table{'s' if len(tables) != 1 else ''} in {connection}: {listed}. {catalog.get('scope', '')}"
    return {**{k: v for k, v in catalog.items() if k != "semantic"}, "reply": reply.strip()}


@function(exported=True, examples=["(show|describe) the {table} table", "what is in the {table} table"])
def get_schema(ctx: Context, table: str, connection: str = DEFAULT) -> dict:
    """Show one table's columns, types and a few sample rows (only rows you may see)."""
    schema = ctx.data.schema(connection, table)
    columns = ", ".join(f"{c['name']} ({c['type'].lower()})" for c in schema.get("columns") or [])
    reply = f"{schema['table']} has {len(schema.get('columns') or [])} columns: {columns}. You see {schema.get('rows_you_see', 'its rows')}."
    return {**schema, "reply": reply}


@function(exported=True)
def get_distinct_values(ctx: Context, table: str, column: str, search: str | None = None,
                        connection: str = DEFAULT) -> dict:
    """The distinct values of a column (within your scope); with `search`, the values most like it, misspellings included."""
    found = ctx.data.distinct(connection, table, column)
    if not search:
        shown = ", ".join(f"{v['value']} ({v['count']})" for v in found["values"][:12])
        more = f", and {len(found['values']) - 12} more" if len(found["values"]) > 12 else ""
        return {**found, "reply": f"{found['column']} in {found['table']} has {len(found['values'])} values you can "
                                  f"see (with how many rows): {shown}{more}."}
    counts = {str(v["value"]): v["count"] for v in found["values"]}
    ranked = rank_values(search, list(counts))
    values = [{"value": v, "count": counts[v], "score": s} for v, s in ranked]
    reply = (f"The values of {found['column']} most like {search!r}: " + ", ".join(v["value"] for v in values[:5]) + "."
             if values else f"No value of {found['column']} you can see is like {search!r}.")
    return {**found, "search": search, "values": values, "reply": reply}


@function(exported=True)
def resolve_name_to_code(ctx: Context, entity: str, name: str, connection: str = DEFAULT) -> dict:
    """The code of a named thing ("operations" → department codes); several matches mean the name is ambiguous."""
    model, _ = _model(ctx, connection)
    dim = model.dimensions.get(entity.lower().strip())
    if dim is None or not (dim.label or dim.names):
        named = [n for n, d in model.dimensions.items() if d.label or d.names]
        raise BadRequest(f"entity must be one of: {', '.join(named)}")
    known = {code: list(names) for code, names in dim.names.items()}
    for code, names in (_names_by_code(ctx, connection, dim) if dim.label else {}).items():
        known.setdefault(code, []).extend(n for n in names if n not in known[code])
    found = match_names(name, known)
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
    catalog = ctx.data.catalog(connection)
    try:
        return explore(ctx, connection, question, catalog, dict(choices or {}), review=review)
    except NoModel:
        return _offline(ctx, connection, question, dict(choices or {}), catalog)


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


def _names_by_code(ctx: Context, connection: str, dim: Dimension) -> dict[str, list[str]]:
    """code -> its names in the data (within the user's scope), most used first, misspelt ones included."""
    if not dim.label:
        found = ctx.data.distinct(connection, dim.table, dim.column)
        return {str(v["value"]): [str(v["value"])] for v in found["values"]}
    query = (exp.select(exp.column(dim.column, quoted=True), exp.column(dim.label, quoted=True),
                        exp.Count(this=exp.Star()).as_("n"))
             .from_(exp.Table(this=exp.to_identifier(dim.table, quoted=True)))
             .group_by(exp.column(dim.column, quoted=True), exp.column(dim.label, quoted=True)).order_by("n DESC"))
    out: dict[str, list[str]] = {}
    for code, name, _ in ctx.data.query(connection, query.sql(), page_size=200)["rows"]:
        out.setdefault(str(code), []).append(str(name))
    return out


def _model(ctx: Context, connection: str, catalog: dict | None = None) -> tuple[Model, dict]:
    catalog = catalog if catalog is not None else ctx.data.catalog(connection)
    return parse_model(catalog.get("semantic")), catalog


def today(ctx: Context) -> date:
    """The user's today, in their time zone (what "last month" and "right now" mean)."""
    return datetime.now(_zone(ctx.user.timezone)).date()


def _offline(ctx: Context, connection: str, question: str, choices: dict[str, str], catalog: dict) -> dict:
    """No model: compile the question onto the semantic model, or say plainly which part does not fit."""
    try:
        return _compiled_answer(ctx, connection, question, choices, catalog)
    except CallError as exc:
        if exc.kind in ("permission_denied", "not_found"):
            raise
        ctx.log("the compiled query failed", level="warning", kind=exc.kind, error=str(exc)[:300])
        return _said("I could not answer that from the data: the query I wrote for it failed, so I have no number "
                     "to give; try asking it more simply.", failed=exc.kind)
    except Exception as exc:  # never a traceback to the user: one sentence, the detail in the log
        ctx.log("the question compiler failed", level="error", error=f"{type(exc).__name__}: {exc}"[:300])
        return _said("I could not work out how to answer that without a model; try asking it more simply.",
                     failed="internal")


def _said(text: str, **extra: Any) -> dict:
    return {"answer": text, "reply": text, "via": "semantic-model", "sql": None, **extra}


def _compiled_answer(ctx: Context, connection: str, question: str, choices: dict[str, str], catalog: dict) -> dict:
    try:
        model, catalog = _model(ctx, connection, catalog)
    except ModelError as exc:
        return _said(f"This question needs a model: {exc}.")
    lookup = compiler.Names(lambda dim: _names_by_code(ctx, connection, dim))
    plan = compiler.compile_question(model, question, today(ctx), lookup, choices)
    if isinstance(plan, compiler.Unplaced):
        return _said(f"{plan.reason}, so I did not guess. Without a model I answer questions about employees, "
                     "absences, remote work, leave, hires and salary, by department, status, reason or time "
                     "(anything else needs a model).", unplaced=True)
    if isinstance(plan, compiler.Choice):
        options = [(f"{name} ({code})", {"question": question, "choices": {**choices, plan.dimension: code}})
                   for code, name in plan.options]
        return ask_user(f"Which {plan.dimension} do you mean by \"{plan.said}\"?", options)
    try:
        tree = sqlbuild.build(model, plan)
    except sqlbuild.PlanError as exc:
        return _said(f"{exc}, so I did not guess.", unplaced=True)
    sql = tree.sql(dialect=catalog.get("dialect", "sqlite"))
    ran = ctx.data.query(connection, sql, page_size=200)
    names = {d.name: lookup.cache.get(d.name, {}) for d in model.dimensions.values()}
    out: dict[str, Any] = {"via": "semantic-model", "sql": ran["sql"], "secured_sql": ran["secured_sql"],
                           "query_id": ran["query_id"], "columns": ran["columns"], "total_rows": ran["total_rows"],
                           "cached": ran.get("cached", False), "measure": _measure_name(plan),
                           "measure_means": _measure_words(plan)}
    rows = ran["rows"]
    if plan.group is None:
        value = rows[0][0] if rows else None
        text = answer.scalar(model, plan, value, names)
        out |= {"value": value if value is not None else (0 if plan.count != "number" else None)}
    else:
        dim = plan.group if isinstance(plan.group, Dimension) else None
        groups = []
        for row in rows:
            shown = row[1] if dim is None else answer.label(dim, row[0], names.get(dim.name, {}))
            groups.append({"code": row[0], "label": shown, "value": row[-1]})
        out["groups"] = groups
        if plan.order is not None:
            best = _best(groups, plan.limit or 1)
            text = answer.top(model, plan, best, names)
            out |= {"top": [b["code"] if dim is not None else b["label"] for b in best],
                    "value": best[0]["value"] if best else None}
        else:
            text = answer.grouped(model, plan, groups, names)
    out["rows"] = rows[:50]
    if plan.show_query:
        text += f" The query: {ran['sql']}"
    return {"answer": text, "reply": text, **out}


def _best(groups: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first `limit` groups (they come ordered), and any tied with the last of them."""
    ranked = [g for g in groups if g["value"] is not None]
    if not ranked:
        return []
    cut = ranked[min(limit, len(ranked)) - 1]["value"]
    head = ranked[:limit]
    return head + [g for g in ranked[limit:] if g["value"] == cut]


def _measure_name(plan: compiler.Plan) -> str:
    """A stable name for what was computed: absence_rows, absence_employees, avg_salary."""
    if plan.count == "number":
        return f"{plan.agg}_{plan.number}"
    return f"{plan.entity.name}_{'employees' if plan.count == 'people' else 'rows'}"


def _measure_words(plan: compiler.Plan) -> str:
    ent = plan.entity
    if plan.count == "number":
        return f"{plan.agg} of {plan.number}"
    if plan.count == "people":
        return f"different employees ({ent.description})"
    return f"rows of {ent.table}: {ent.description}"


def _zone(name: str) -> Any:
    try:
        return ZoneInfo(name)
    except Exception:  # an unknown zone name: UTC
        return ZoneInfo("UTC")
