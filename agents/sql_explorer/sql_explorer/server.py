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

from dreamer.sdk.semantic import Dimension, Model, ModelError
from dreamer.sdk.semantic import parse as parse_model

from sql_explorer import answer, compiler, sqlbuild
from sql_explorer.explorer import NoModel, explore
from sql_explorer.fuzzy import match_names, rank_values
from sql_explorer.plan import PERSON_GROUP, Choice, Plan, Unplaced

DEFAULT = "hr-demo"
EXPORT_FORMATS = ("xlsx", "csv")
PAGE = 200  # rows per data.page call (the kernel's largest page)


class BadRequest(InvalidArgument, ValueError):
    """What the caller asked cannot be done; kind invalid_argument and this sentence."""


@function(exported=True, examples=["(list|show) [me] [all] the (tables|data) [I can see|in the database]",
                                   "what (tables|data) can I (query|see)", "which tables are (there|in the database)",
                                   # an HR manager's words for the same: what there is to ask about
                                   "what tables (do we have|are available)", "what (data|tables) do you have",
                                   "what is in the database", "which tables can I (use|query)"])
def list_tables(ctx: Context, connection: str = DEFAULT) -> dict:
    """List the tables of a database you may query, with descriptions, join keys and your scope in words."""
    catalog = ctx.data.catalog(connection)
    tables = catalog.get("tables") or []
    listed = "; ".join(f"{t['table']} ({t['description'].split('.')[0].lower()})" if t.get("description")
                       else t["table"] for t in tables)
    reply = f"You can query {len(tables)} table{'s' if len(tables) != 1 else ''} in {connection}: {listed}. {catalog.get('scope', '')}"
    return {**{k: v for k, v in catalog.items() if k != "semantic"}, "reply": reply.strip()}


@function(exported=True, examples=["(show|describe) the {table} table", "what is in the {table} table",
                                   "(show|describe|give) [me] the (schema|structure|columns|fields) of [the] {table} [table]",
                                   "what (columns|fields) (does|do) the {table} table have",
                                   "what (columns|fields) are (in|on) the {table} table", "describe [the] table {table}"])
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


@function(exported=True, examples=["(run|execute) [this|the] [sql|query] [query][:] {sql}"])
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
        "[the] (number|count|total number) of [the] (employees|people|staff|workers|absences|hires|no-shows|sick days|remote days|leave days) {question}",
        "[the] (number|count|total number) of (terminated|remote|new|active|approved|unapproved|medical|absent) (employees|people|staff|workers|absences) {question}",
        "[the] (number|count) of (people|employees|staff) (on leave|away|off sick|absent) {question}",
        "(what is|what's|show me) the headcount (of|in|for|by|per) {question}", "headcount (of|in|for|by|per) {question}",
        "how many were absent {question}", "how many are on leave {question}",
        "(absences|employees|staff|hires|headcount|salaries|salary|leave days|leave|no-shows|sick days|remote work|remote days) (by|per) (reason|department|status|month|team|type|manager) {question}",
        "who (was|were|is|has been) (absent|off sick|on leave|away|late) the most {question}",
        "ask the (hr|sql) [data] {question}", "ask (hr|the sql explorer) {question}",
        # Rankings and top lists of HR things; "top" alone would take "top 5 movies".
        "top [2|3|4|5|10|three|five|ten] (departments|teams|employees|staff|people) by (absences|salary|pay|headcount|number of absences) {question}",
        "top (earners|absence reasons|reasons for absence|leave types) [(in|for|of|this|last|since) {question}]",
        "which (departments|teams|employees|people|staff|absence reasons|leave types) (have|had|has|are|were) {question}",
        "(who is|who's|who are) the (best|worst|highest|lowest|top|least) (paid|earner|earners) {question}",
        "who (makes|earns|made|earned) the (most|least) [money] {question}",
        "(what is|what's) the (payroll|headcount|salary cost|wage bill) (of|in|for) {question}",
        "(what is|what's|which is) the (most|least) common (reason for absence|absence reason|type of leave|leave type) {question}",
        "how much (do|does) (employees|people|staff|someone|an employee) {question} (make|earn) [on average]",
        "on average (how much|what) (do|does) {question} (earn|make)",
        "how many (people|employees|staff) (called in sick|were off sick|took sick leave) {question}",
        "(who|which employee) (called in sick|was off sick|took the most sick days) {question}",
        "(hires|absences|sick days|no-shows|remote days|leave) (per|by|each) (month|year|quarter) {question}",
        "how many (sick days|days off|absences|no-shows) did I (take|have) {question}",
        "how many (departments|teams) (have|had) {question}",
        "(departments|teams) with (more|fewer|less) than {question}",
        "(what was|what is|what's) the total (payroll|salary|salaries|pay|salary cost) {question}",
        "[the] (highest|lowest|average|total) (salary|pay|payroll) (in|of|for) {question}",
        "which (department|team) pays the (most|least|best|worst) {question}",
        # an HR manager's roster and rate questions
        "(show|list) [me] (everyone|everybody|all the staff) (in|from) {question}",
        "who (are|is) the (managers|manager|team leads|new hires|new starters) [{question}]",
        "[what is|what's] the (attendance|absence|turnover|retention) rate [{question}]",
        "(absences|sick days|no-shows|remote days|hires|approved leave) (in|for|during|since|this|last) {question}",
        # Who came and who went, time off and hours, in the words managers use: these words make a
        # question the HR data's even when no template above fits it (Sidekick's domain words).
        "who (joined|started|was hired|were hired|got hired|onboarded|left|quit|resigned) {question}",
        "how many (people|employees|staff) (joined|were hired|got hired|onboarded|left|quit|resigned) {question}",
        "how many (new starters|new joiners|joiners|starters|leavers|resignations|recruits|new recruits) {question}",
        "(attrition|turnover|overtime|overtime hours|vacation days|pto|holiday allowance|time off) (by|per|in|for|this|last|since) {question}",
        "who (still has|has) [the most|any] (vacation|holiday|pto|annual leave) [days] [left] {question}",
        # more of the words people data is asked about in: they make a question this agent's (Sidekick's
        # domain words) where no template above fits its shape ("avg tenure for engineers?"). Few: each
        # alternative is a pattern, and a starter stays within a tenth of a bundle's limit
        # (tests/bundles/test_example_cost.py).
        "(tenure|contractors|interns|compensation|onboarding) {question}",
    ],
)
def ask(ctx: Context, question: WholeQuestion, choices: dict[str, str] | None = None, review: bool | None = None,
        connection: str = DEFAULT) -> dict:
    """Answer a question about the company's HR data (employees, departments, absences, attendance, leave, salary, hires) by exploring it and running SQL.

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
    first = ctx.data.page(query_id, 1, page_size=PAGE)
    rows = _every_row(ctx, first)
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
    for code, name, _ in ctx.data.query(connection, query.sql(), page_size=PAGE)["rows"]:
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
    except Exception as exc:  # noqa: BLE001 - never a traceback to the user: one sentence, the detail in the log
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
    if isinstance(plan, Unplaced):
        if plan.about_asker:
            return _said(plan.reason, refused="about_asker")
        return _said(f"{plan.reason[:1].upper()}{plan.reason[1:]}, so I did not guess. Without a model I answer "
                     "questions about employees, "
                     "absences, remote work, leave, hires and salary, by department, status, reason or time "
                     "(anything else needs a model).", unplaced=True)
    if isinstance(plan, Choice):
        options = [(f"{name} ({code})", {"question": question, "choices": {**choices, plan.dimension: code}})
                   for code, name in plan.options]
        return ask_user(f"Which {plan.dimension} do you mean by \"{plan.said}\"?", options)
    try:
        tree = sqlbuild.build(model, plan)
    except sqlbuild.PlanError as exc:
        return _said(f"{exc}, so I did not guess.", unplaced=True)
    dialect = catalog.get("dialect", "sqlite")
    ran, rows = _all_rows(ctx, connection, tree.sql(dialect=dialect))
    names = {d.name: lookup.cache.get(d.name, {}) for d in model.dimensions.values()}
    out: dict[str, Any] = {"via": "semantic-model", "sql": ran["sql"], "secured_sql": ran["secured_sql"],
                           "query_id": ran["query_id"], "columns": ran["columns"], "total_rows": ran["total_rows"],
                           "truncated": ran.get("truncated", False), "cached": ran.get("cached", False),
                           "measure": _measure_name(plan), "measure_means": _measure_words(plan)}
    if not plan.groups or plan.count_groups:
        value = rows[0][0] if rows else None
        text = answer.scalar(model, plan, value, names)
        out |= {"value": value if value is not None else (0 if plan.count != "number" else None)}
    else:
        groups = _groups(ctx, connection, dialect, model, plan, ran["columns"], rows, names)
        out["groups"] = groups
        if plan.order is not None:
            best, tied = _best(groups, plan.limit or 1, plan.exact)
            text = answer.top(model, plan, best, tied, len(groups), names)
            person = plan.groups[0] == PERSON_GROUP
            out |= {"top": [b["name"] if person else b["code"] for b in best],
                    "value": best[0]["value"] if best else None}
            if person:
                out["top_ids"] = [b["code"] for b in best]
        else:
            text = answer.grouped(model, plan, groups, names)
    if out["truncated"]:
        text += (f" (The result stopped at the kernel's limit of {len(rows):,} rows, so this is not all of it; "
                 "narrow the question down.)")
    out["rows"] = rows[:50]
    if plan.show_query:
        text += f" The query: {ran['sql']}"
    return {"answer": text, "reply": text, **out}


def _all_rows(ctx: Context, connection: str, sql: str) -> tuple[dict[str, Any], list[list[Any]]]:
    """The query's first page and every row of the result (paged: a grouped answer is never cut at a page)."""
    ran = ctx.data.query(connection, sql, page_size=PAGE)
    return ran, _every_row(ctx, ran)


def _every_row(ctx: Context, first: dict[str, Any]) -> list[list[Any]]:
    """The rows of a result the kernel keeps, from its first page on."""
    rows = list(first["rows"])
    for page in range(2, int(first.get("pages") or 1) + 1):
        rows += ctx.data.page(first["query_id"], page, page_size=PAGE)["rows"]
    return rows


def _groups(ctx: Context, connection: str, dialect: str, model: Model, plan: Plan, columns: list[str],
            rows: list[list[Any]], names: dict[str, dict[str, list[str]]]) -> list[dict[str, Any]]:
    """Each row as a group: its code(s), how the answer says them, and its value."""
    at = {c: i for i, c in enumerate(columns)}
    people = _people_labels(ctx, connection, dialect, model, rows, at) if PERSON_GROUP in plan.groups else {}

    def said(group: Any, code: Any) -> str:
        dim = group.name if isinstance(group, Dimension) else ""
        return answer.label(group, code, names.get(dim, {}), people.get(code) if group == PERSON_GROUP else None)

    out = []
    for row in rows:
        group = {"code": row[at["code"]], "label": said(plan.groups[0], row[at["code"]]), "value": row[at["value"]]}
        if "code2" in at:
            group |= {"code2": row[at["code2"]], "label2": said(plan.groups[1], row[at["code2"]])}
        if "name" in at:
            group["name"] = row[at["name"]]
        out.append(group)
    return out


def _people_labels(ctx: Context, connection: str, dialect: str, model: Model, rows: list[list[Any]],
                   at: dict[str, int]) -> dict[Any, str]:
    """employee id -> how the answer names them: the name, with the employee number when another
    person the user can see has the same name (two Farid Moreaus are told apart)."""
    people = model.entities["employee"]
    label = people.label or people.person or "employee_id"
    col = exp.column(label, quoted=True)
    shared = (exp.select(col).from_(exp.Table(this=exp.to_identifier(people.table, quoted=True)))
              .group_by(col.copy()).having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1))))
    _, found = _all_rows(ctx, connection, shared.sql(dialect=dialect))
    twice = {str(r[0]) for r in found}
    return {row[at["code"]]: f"{row[at['name']]} (employee {row[at['code']]})" if str(row[at["name"]]) in twice
            else str(row[at["name"]]) for row in rows}


def _best(groups: list[dict[str, Any]], limit: int, exact: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the groups named, the groups left out that tie with the last named). They come best first.
    A top N the user counted ("top 5") names exactly N; "the highest" names every group tied for it."""
    ranked = [g for g in groups if g["value"] is not None]
    if not ranked:
        return [], []
    head = ranked[:limit]
    tied = [g for g in ranked[limit:] if g["value"] == head[-1]["value"]]
    return (head, tied) if exact else (head + tied, [])


def _measure_name(plan: Plan) -> str:
    """A stable name for what was computed: absence_rows, absence_employees, avg_salary."""
    if plan.count == "number":
        return f"{plan.agg}_{plan.number}"
    return f"{plan.entity.name}_{'employees' if plan.count == 'people' else 'rows'}"


def _measure_words(plan: Plan) -> str:
    ent = plan.entity
    if plan.count == "number":
        return f"{plan.agg} of {plan.number}"
    if plan.count == "people":
        return f"different employees ({ent.description})"
    return f"rows of {ent.table}: {ent.description}"


def _zone(name: str) -> Any:
    try:
        return ZoneInfo(name)
    except Exception:  # noqa: BLE001 - an unknown zone name: UTC
        return ZoneInfo("UTC")
