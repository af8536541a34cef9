"""Data connections: declared by an administrator, queried by agents within the user's role.

The query path, for every syscall: the connection → the user's role from its scopes
file (none: refused, and the user is told so) → the guard (validator + rewriter) →
the engine layer (SQLite secured views + authorizer; PostgreSQL reader role + RLS) →
a result kept in the kernel, of which a page goes back.
"""

from __future__ import annotations

import builtins
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlglot import exp

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.caps import MAX_ROWS, truncated_by
from dreamer.kernel.data.connection import APPLICATION_ONLY, Connection, build, column_names, parse_url
from dreamer.kernel.data.results import Result, Results
from dreamer.kernel.data.rewriter import Guarded, guard
from dreamer.kernel.data.scopes import Role, check_semantic, parse_scopes
from dreamer.contracts.names import NAME
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import DataConnection, utcnow

NAME_RE = re.compile(NAME)
PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
SAMPLE_ROWS = 3
MAX_DISTINCT = 200


@dataclass
class Executed:
    result: Result
    guarded: Guarded
    cached: bool
    ms: float
    versions: str = ""  # "scopes N, data V": what the cache key held besides the user and the SQL


class DataService:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.results = Results()
        self._loaded: dict[str, tuple[Any, Connection]] = {}
        self._lock = threading.Lock()

    # -- administration -----------------------------------------------------------------

    def add(self, name: str, url: str, scopes: str = "", description: str = "", schema: str | None = None) -> dict[str, Any]:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise DreamerError("invalid_argument", "a connection name is lower case letters, digits and -, 2 to 63 long")
        parsed, default_schema = parse_url(url)
        schema = schema or default_schema
        conn = build(name, url, schema, description, scopes, {})
        check_semantic(conn.scopes, column_names(conn.columns))
        with self.store.session() as s:
            if s.scalar(select(DataConnection).where(DataConnection.name == name)) is not None:
                raise DreamerError("conflict", f"there is already a connection named {name}; remove it first")
            secrets: dict[str, str] = {}
            if conn.dialect == "postgres":
                reader, password = engine_pg.new_reader(name)
                secrets = {"reader": reader, "password": password}
                engine_pg.provision(conn.url, schema, list(self._roles(conn)), reader, password)
            s.add(DataConnection(name=name, url=url, schema_name=schema, description=description, scopes=scopes,
                                 scopes_version=conn.scopes.version if scopes else 0, secrets=secrets))
        return self.describe(name)

    def set_scopes(self, name: str, text: str) -> dict[str, Any]:
        row = self._row(name)
        conn = build(name, row["url"], row["schema_name"], row["description"], "", row["secrets"])
        scopes = parse_scopes(text, set(conn.columns))
        check_semantic(scopes, column_names(conn.columns))
        if scopes.version <= row["scopes_version"]:
            raise DreamerError("conflict", f"the scopes file has version {scopes.version}, but version "
                               f"{row['scopes_version']} is in place; raise `version` for a change")
        conn.scopes = scopes
        if conn.dialect == "postgres":
            engine_pg.provision(conn.url, conn.schema, list(self._roles(conn)), row["secrets"]["reader"],
                                row["secrets"]["password"])
        with self.store.session() as s:
            db_row = s.scalar(select(DataConnection).where(DataConnection.name == name))
            assert db_row is not None
            db_row.scopes, db_row.scopes_version, db_row.updated_at = text, scopes.version, utcnow()
        return self.describe(name)

    def remove(self, name: str) -> dict[str, Any]:
        row = self._row(name)
        if row["secrets"].get("reader"):
            url, _ = parse_url(row["url"])
            engine_pg.drop_reader(url.difference_update_query(["schema"]), row["secrets"]["reader"])
        with self.store.session() as s:
            db_row = s.scalar(select(DataConnection).where(DataConnection.name == name))
            if db_row is not None:
                s.delete(db_row)
        self._loaded.pop(name, None)
        return {"removed": name}

    def list(self) -> list[dict[str, Any]]:
        with self.store.session() as s:
            names = list(s.scalars(select(DataConnection.name).order_by(DataConnection.name)))
        return [self.describe(n) for n in names]

    def describe(self, name: str) -> dict[str, Any]:
        """What an administrator sees: never the URL's password."""
        row = self._row(name)
        url, _ = parse_url(row["url"])
        backend = url.get_backend_name()
        layers = "application only" if backend in APPLICATION_ONLY else "application and engine"
        return {"name": name, "url": url.render_as_string(hide_password=True), "schema": row["schema_name"],
                "description": row["description"], "scopes_version": row["scopes_version"], "layers": layers}

    # -- the query path -------------------------------------------------------------------

    def connection(self, name: str) -> Connection:
        row = self._row(name)
        with self._lock:
            cached = self._loaded.get(name)
            if cached is not None and cached[0] == row["updated_at"]:
                return cached[1]
        conn = build(name, row["url"], row["schema_name"], row["description"], row["scopes"], row["secrets"])
        with self._lock:
            self._loaded[name] = (row["updated_at"], conn)
        return conn

    def role(self, conn: Connection, user: str) -> Role:
        role = conn.role_for(user)
        if role is None:
            raise DreamerError("permission_denied", f"you ({user}) have no scope on the data connection {conn.name}, "
                               "so you can see nothing in it; ask the administrator to add you to its scopes file")
        return role

    def catalog(self, name: str, user: str) -> dict[str, Any]:
        conn = self.connection(name)
        role = self.role(conn, user)
        tables = []
        for table in sorted(role.rules):
            note = conn.scopes.tables.get(table)
            tables.append({"table": table, "description": note.description if note else "",
                           "join_keys": dict(note.keys) if note else {},
                           "columns": [c.name for c in conn.columns.get(table, [])],
                           "rows_you_see": role.rules[table].words()})
        return {"connection": name, "description": conn.description, "dialect": conn.dialect,
                "role": role.name, "scope": f"You see {role.words()}.", "tables": tables,
                "scopes_version": conn.scopes.version, "semantic": conn.scopes.semantic}

    def schema(self, name: str, user: str, table: str, user_id: int = -1) -> dict[str, Any]:
        conn = self.connection(name)
        role = self.role(conn, user)
        key = table.lower() if isinstance(table, str) else ""
        if key not in role.rules or key not in conn.columns:
            raise DreamerError("not_found", f"there is no table {str(table)[:60]!r} among the tables you may query")
        ident = exp.to_identifier(key, quoted=True)
        sample = exp.select(exp.Star()).from_(exp.Table(this=ident)).limit(SAMPLE_ROWS).sql(dialect=conn.dialect)
        ran = self.query(name, user, sample, user_id=user_id)
        note = conn.scopes.tables.get(key)
        return {"table": key, "columns": [{"name": c.name, "type": c.type} for c in conn.columns[key]],
                "description": note.description if note else "", "join_keys": dict(note.keys) if note else {},
                "sample_rows": ran.result.rows, "rows_you_see": role.rules[key].words()}

    def distinct(self, name: str, user: str, table: str, column: str, limit: int = MAX_DISTINCT,
                 user_id: int = -1) -> dict[str, Any]:
        conn = self.connection(name)
        self.role(conn, user)
        key = table.lower() if isinstance(table, str) else ""
        cols = {c.name.lower(): c.name for c in conn.columns.get(key, [])}
        if not isinstance(column, str) or column.lower() not in cols:
            raise DreamerError("not_found", f"table {str(table)[:60]!r} has no column {str(column)[:60]!r} you may query")
        limit = max(1, min(int(limit), MAX_DISTINCT))
        col = exp.column(cols[column.lower()], quoted=True)
        query = (exp.select(col.as_("value"), exp.Count(this=exp.Star()).as_("n"))
                 .from_(exp.Table(this=exp.to_identifier(key, quoted=True)))
                 .group_by(col).order_by("n DESC").limit(limit))
        ran = self.query(name, user, query.sql(dialect=conn.dialect), user_id=user_id)
        return {"table": key, "column": cols[column.lower()],
                "values": [{"value": r[0], "count": r[1]} for r in ran.result.rows]}

    def query(self, name: str, user: str, sql: str, user_id: int) -> Executed:
        conn = self.connection(name)
        role = self.role(conn, user)
        started = time.perf_counter()
        guarded = guard(sql, role, conn.target, conn.source)
        key = (name, str(conn.scopes.version), role.name, conn.data_version(), guarded.secured)
        versions = f"scopes {key[1]}, data {key[3]}"
        cached = self.results.cached(key, user_id)
        if cached is not None:
            return Executed(cached, guarded, True, (time.perf_counter() - started) * 1000, versions)
        columns, rows, truncated = conn.execute(role, guarded.secured, MAX_ROWS, guarded.tables)
        result = self.results.keep(key, user_id=user_id, connection=name, columns=columns, rows=rows,
                                   truncated=truncated, truncated_by=truncated_by(truncated, len(rows), MAX_ROWS),
                                   written=sql, secured=guarded.secured)
        return Executed(result, guarded, False, (time.perf_counter() - started) * 1000, versions)

    # -- internals --------------------------------------------------------------------------

    @staticmethod
    def _roles(conn: Connection) -> builtins.list[Role]:
        return [conn.scopes.role(n, set(conn.columns)) for n in sorted(conn.scopes.roles)]

    def _row(self, name: str) -> dict[str, Any]:
        with self.store.session() as s:
            row = s.scalar(select(DataConnection).where(DataConnection.name == name)) if isinstance(name, str) else None
            if row is None:
                raise DreamerError("not_found", f"there is no data connection named {str(name)[:64]!r} "
                                   "(an administrator adds one with `dreamer data add NAME URL`)")
            return {"url": row.url, "schema_name": row.schema_name, "description": row.description,
                    "scopes": row.scopes, "scopes_version": row.scopes_version, "secrets": dict(row.secrets or {}),
                    "updated_at": row.updated_at}
