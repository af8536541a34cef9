"""The pieces of the SQL guard in-process: the scopes file as hostile input, validator
refusals, the offline compiler of the semantic model, the result pages, the kernel's
connection registry, and an agent's question turned into Sidekick's."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

from dreamer.kernel.data.results import Results
from dreamer.kernel.data.scopes import parse_scopes
from dreamer.kernel.data.queries import DataService
from dreamer.kernel.data.validator import parse_query
from dreamer.contracts.errors import DreamerError
from dreamer.sidekick.chat.questions import question_from
from dreamer.sidekick.planner.base import PlanContext, Step, Tool

from hr_testkit import Demo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "agents" / "sql_explorer"))
from sql_explorer import compiler, sqlbuild
from dreamer.sdk.semantic import Dimension, ModelError
from dreamer.sdk.semantic import parse as parse_model

from dreamer.kernel.data.demo import SCOPES_FILE


@pytest.mark.parametrize("text, words", [
    ("version: 0\nroles: {}\n", "version"),
    ("[1, 2]", "mapping"),
    ("version: 1\nroles: {a: {tables: {employees: {column: department}}}}\n", "equals, one_of or in"),
    ("version: 1\nroles: {a: {tables: {employees: {column: x, in: attendance.employee_id}, "
     "attendance: {column: employee_id, in: employees.employee_id}}}}\n", "circle"),
    ("version: 1\nroles: {a: {tables: {salaries: all}}}\n", "does not have"),
    ("version: 1\nroles: {a: {tables: '*'}}\nusers: {bob: b}\n", "must map to one of the roles"),
    ("version: 1\nroles: {'Robert); DROP': {tables: '*'}}\n", "role name"),
    ("version: 1\nroles: {a: {tables: {employees: {column: 'x; --', equals: 1}}}}\n", "must name a column"),
    ("version: 1\n: [\n", "not valid YAML"),
])
def test_a_bad_scopes_file_is_refused_in_one_sentence(text: str, words: str) -> None:
    with pytest.raises(DreamerError) as err:
        parse_scopes(text, {"employees", "attendance"})
    assert err.value.code == "invalid_argument" and words in err.value.message


@pytest.mark.parametrize("sql, words", [
    ("", "empty"),
    ("SELECT 1 FROM employees\x00", "NUL"),
    ("SELECT " + "1+" * 12000 + "1", "longer than"),
    ("SELECT pg_catalog.lower(name) FROM employees", "schema-qualified function"),
    ("SELECT * FROM json_each('[1]')", "no table functions"),
    ("SELECT * FROM employees FOR UPDATE", "locking"),
    ("UPDATE employees SET salary = 0", "only queries"),
    ("SELECT * FROM employees WHERE name = ?", "PLACEHOLDER"),
    ("SELEC name FROM", "could not be parsed"),
])
def test_the_validator_says_why(sql: str, words: str) -> None:
    with pytest.raises(DreamerError) as err:
        parse_query(sql, "sqlite")
    assert err.value.code == "sql_refused" and words in err.value.message


def _names(demo: Demo) -> compiler.Names:
    import sqlite3

    def names(dim: Dimension) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with sqlite3.connect(demo.conn.path) as db:
            for code, name, _ in db.execute(f"SELECT {dim.column}, {dim.label}, COUNT(*) FROM {dim.table} "
                                            f"GROUP BY 1, 2 ORDER BY 3 DESC"):
                out.setdefault(code, []).append(name)
        return out

    return compiler.Names(names)


def test_the_semantic_model_compiles_questions_without_a_model(sqlite_demo: Demo) -> None:
    model, today, names = parse_model(parse_scopes(SCOPES_FILE.read_text()).semantic), date(2026, 11, 15), _names(sqlite_demo)
    asked = compiler.compile_question(model, "how many employees in operations were absent last month?", today, names)
    assert isinstance(asked, compiler.Choice) and [c for c, _ in asked.options] == ["D035", "D042", "D047"]
    done = compiler.compile_question(model, "how many employees in operations were absent last month?", today,
                                     names, {"department": "D042"})
    assert isinstance(done, compiler.Plan) and done.count == "people" and done.entity.name == "absence"
    sql = sqlbuild.build(model, done).sql("sqlite")
    assert 'COUNT(DISTINCT "absence_records"."employee_id")' in sql and "'2026-10-01'" in sql
    typo = compiler.compile_question(model, "how many sick absences in operatons and logistics in october", today, names)
    assert isinstance(typo, compiler.Plan) and {f.dimension.name: f.code for f in typo.filters} == {
        "department": "D042", "reason": "SICK"}
    # The reported crash (a join the old model did not have) now has a path through employees.
    sick = compiler.compile_question(model, "how many people in sales took sick leave in October", today, names)
    assert isinstance(sick, compiler.Plan) and "JOIN" in sqlbuild.build(model, sick).sql("sqlite")
    unknown = compiler.compile_question(model, "who is the best manager?", today, names)
    assert isinstance(unknown, compiler.Unplaced) and "'manager'" in unknown.reason
    hostile = compiler.compile_question(model, "how many employees were absent", today, names,
                                        {"department": "D042' OR 1=1 --"})
    assert isinstance(hostile, compiler.Unplaced) and "is not a department you can see" in hostile.reason


def test_a_semantic_model_is_data_never_sql() -> None:
    raw = parse_scopes(SCOPES_FILE.read_text()).semantic
    bad = {**raw, "entities": {**raw["entities"], "absence": {**raw["entities"]["absence"],
                                                               "table": "absence_records; DROP TABLE employees"}}}
    with pytest.raises(ModelError) as err:
        parse_model(bad)
    assert "entity absence.table" in str(err.value)
    with pytest.raises(ModelError):
        parse_model({"version": 1})


def test_result_pages_belong_to_their_user() -> None:
    results = Results()
    kept = results.keep(("c", "r", "sql", "v1"), user_id=1, connection="c", columns=["n"],
                        rows=[[i] for i in range(120)], truncated=False, written="w", secured="s")
    assert results.get(kept.id, 1).page(3, 50)["rows"] == [[i] for i in range(100, 120)]
    assert results.cached(("c", "r", "sql", "v1"), 1) is kept and results.cached(("c", "r", "sql", "v2"), 1) is None
    with pytest.raises(DreamerError) as err:  # another user's id reads as one that has gone
        results.get(kept.id, 2)
    assert err.value.code == "not_found" and "has expired; ask again" in err.value.message
    assert "restart" in err.value.message  # kept in memory only: the user is told why it can be gone
    with pytest.raises(DreamerError):
        kept.page(4, 50)


def test_connections_are_declared_once_and_scopes_only_move_forward(sqlite_demo: Demo, tmp_path: Path) -> None:
    from dreamer.kernel.store.db import Store

    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    try:
        data = DataService(store)
        scopes = (Path(__file__).resolve().parents[2] / "kernel" / "data" / "demo_scopes.yaml").read_text()
        data.add("hr", f"sqlite:///{sqlite_demo.conn.path}", scopes=scopes)
        shipped = parse_scopes(scopes).version
        assert data.list()[0]["scopes_version"] == shipped
        with pytest.raises(DreamerError) as err:
            data.add("hr", f"sqlite:///{sqlite_demo.conn.path}")
        assert err.value.code == "conflict"
        with pytest.raises(DreamerError) as err:
            data.set_scopes("hr", scopes)
        assert err.value.code == "conflict" and "raise `version`" in err.value.message
        data.set_scopes("hr", scopes.replace(f"\nversion: {shipped}", f"\nversion: {shipped + 1}", 1)
                        .replace("  me: hr_admin\n", ""))
        with pytest.raises(DreamerError) as err:
            data.catalog("hr", "me")
        assert err.value.code == "permission_denied" and "no scope" in err.value.message
        assert data.query("hr", "ops_manager", "SELECT COUNT(*) FROM employees", 1).result.rows == [[22]]
        again = data.query("hr", "ops_manager", "SELECT COUNT(*) FROM employees", 1)
        assert again.cached
        with pytest.raises(DreamerError) as err:  # a runaway query is stopped, and the kernel says so
            data.query("hr", "ops_manager", "SELECT COUNT(*) FROM attendance a, attendance b, attendance c", 1)
        assert err.value.code == "timeout"
        with pytest.raises(DreamerError) as err:
            data.add("other", "firebird://u:p@h/db")
        assert err.value.code == "not_available"
        with pytest.raises(DreamerError) as err:  # a supported kind whose server does not answer
            data.add("other", "mysql://u:p@127.0.0.1:9/db")
        assert err.value.code == "invalid_argument" and "cannot read the tables" in err.value.message
    finally:
        store.dispose()


def test_an_agents_question_becomes_sidekicks_and_bad_ones_do_not() -> None:
    tool = Tool("sql-explorer", "ask", "Answer a question.", {"type": "object", "properties": {
        "question": {"type": "string"}, "choices": {"type": "object"}}, "required": ["question"]})
    step = Step("sql-explorer", "ask", {"question": "q"})
    good = {"ask_user": {"question": "Which?", "options": [{"label": "A", "args": {"choices": {"d": "1"}}},
                                                           {"label": "B", "args": {"choices": {"d": "2"}}}]}}
    asked = question_from(step, good, tool, PlanContext())
    assert asked is not None and asked.options[1].step.args == {"question": "q", "choices": {"d": "2"}}
    for bad in ({"ask_user": "x"}, {"ask_user": {"question": "?", "options": []}},
                {"ask_user": {"question": "?", "options": [{"label": "A", "args": {"sql": "DROP"}}]}},
                {"ask_user": {"question": "?", "options": [{"label": "A", "args": {}}]}, "other": 1}):
        assert question_from(step, bad, tool, PlanContext()) is None


def test_a_postgresql_connection_gets_its_own_reader_and_loses_it_on_removal(postgres_demo: Demo, tmp_path: Path) -> None:
    import psycopg

    from dreamer.kernel.data import engine_pg
    from dreamer.kernel.store.db import Store

    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    admin = engine_pg.psycopg_dsn(postgres_demo.conn.url)
    try:
        data = DataService(store)
        scopes = (Path(__file__).resolve().parents[2] / "kernel" / "data" / "demo_scopes.yaml").read_text()
        with_password = admin.replace("postgres@", "postgres:s3cret-pw@")  # trust auth ignores it; the kernel keeps it
        shown = data.add("hr-pg", with_password + "?schema=hr", scopes=scopes)
        assert "s3cret-pw" not in str(shown) and "s3cret-pw" not in str(data.list()) and shown["schema"] == "hr"
        ran = data.query("hr-pg", "ops_manager", "SELECT COUNT(DISTINCT department), COUNT(*) FROM hr.employees", 1)
        assert ran.result.rows == [[1, 22]] and '"hr"."employees"' in ran.guarded.secured
        reader = data.connection("hr-pg").secrets["reader"]
        data.remove("hr-pg")
        with psycopg.connect(admin) as db:
            assert db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (reader,)).fetchone() is None
    finally:
        store.dispose()


@pytest.mark.parametrize("broken, words", [
    (("table: absence_records", "table: absense_records"), "entity absence.table: 'absense_records' is not a table"),
    (("column: reason_code", "column: reason"), "dimension reason.column: table absence_records has no column 'reason'"),
    (("{from: attendance.employee_id, to: employees.employee_id}",
      "{from: attendance.employee_id, to: employees.id}"), "join 2.to: table employees has no column 'id'"),
    (("says: \"with reason {value}\"", "says: \"with reason\""), "dimension reason.says must contain {value}"),
    (("labels: {SICK: sick,", "labels: {ILL: sick,"), "dimension reason.labels: 'ILL' is not one of its values"),
    (("      time: absence_date\n", "      time: [absence_date]\n"), "entity absence.time must be a table or column name"),
])
def test_a_broken_semantic_model_is_refused_at_upload_naming_the_field(
        sqlite_demo: Demo, tmp_path: Path, broken: tuple[str, str], words: str) -> None:
    from dreamer.kernel.store.db import Store

    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    try:
        data = DataService(store)
        good = SCOPES_FILE.read_text()
        version = parse_scopes(good).version
        bad = good.replace(broken[0], broken[1], 1)
        assert bad != good
        with pytest.raises(DreamerError) as err:  # a new connection with it
            data.add("hr", f"sqlite:///{sqlite_demo.conn.path}", scopes=bad)
        assert err.value.code == "invalid_argument" and words in err.value.message
        assert err.value.message.count(". ") == 0  # one sentence
        assert data.list() == []  # nothing half-made
        data.add("hr", f"sqlite:///{sqlite_demo.conn.path}", scopes=good)
        with pytest.raises(DreamerError) as err:  # a new version of the file in place
            data.set_scopes("hr", bad.replace(f"\nversion: {version}", f"\nversion: {version + 1}", 1))
        assert err.value.code == "invalid_argument" and words in err.value.message
        assert data.describe("hr")["scopes_version"] == version  # the old file stays
        assert data.catalog("hr", "hr_admin")["semantic"]["version"] == parse_scopes(good).semantic["version"]
    finally:
        store.dispose()
