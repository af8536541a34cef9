"""One data connection as the query path sees it: its dialect, tables, scopes and engine.

Built from a `DataConnection` row. The application layer's rewriter targets the
engine layer's secured sources (SQLite: the temp views; PostgreSQL: the schema's
tables under row-level security), so in normal operation both filters apply.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect
from sqlalchemy.engine import URL
from sqlglot import exp

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.engine_sqlite import open_secured, temp_table
from dreamer.kernel.data.rewriter import Target
from dreamer.kernel.data.scopes import Role, ScopesFile, parse_scopes
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.store.db import normalize_url


@dataclass
class Column:
    name: str
    type: str


@dataclass
class Connection:
    name: str
    url: URL
    schema: str
    description: str
    scopes: ScopesFile
    columns: dict[str, list[Column]]  # table (lower case) -> columns, as reflected
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def dialect(self) -> str:
        return "sqlite" if self.url.get_backend_name() == "sqlite" else "postgres"

    @property
    def target(self) -> Target:
        return Target(self.dialect, frozenset({self.schema.lower(), self.schema}), frozenset(self.columns))

    @property
    def path(self) -> Path:
        return Path(self.url.database or "")

    def role_for(self, user: str) -> Role | None:
        return self.scopes.role_for(user, set(self.columns))

    def source(self, table: str) -> exp.Table:
        if self.dialect == "sqlite":
            return temp_table(table)
        return exp.table_(table, db=self.schema, quoted=True)

    def execute(self, role: Role, query: str, max_rows: int) -> tuple[list[str], list[list[Any]], bool]:
        """Run secured SQL through the engine layer: (columns, rows as JSON-safe lists, truncated)."""
        if self.dialect == "sqlite":
            conn = open_secured(self.path, role)
            try:
                cur = conn.execute(query)
                columns = [d[0] for d in cur.description or []]
                rows = cur.fetchmany(max_rows + 1)
            finally:
                conn.close()
            truncated = len(rows) > max_rows
        else:
            reader = self.secrets.get("reader")
            if not reader:
                raise DreamerError("not_available", f"connection {self.name} has no reader role yet; "
                                   f"run `dreamer data scopes {self.name} FILE` as an administrator to provision it")
            url = engine_pg.reader_url(self.url, reader, self.secrets.get("password", ""))
            columns, rows, truncated = engine_pg.run_as_reader(url, self.schema, role.name, query, max_rows)
        return columns, [[jsonable(v) for v in row] for row in rows[:max_rows]], truncated

    def data_version(self) -> str:
        """Changes whenever the data may have changed: the result cache's key includes it."""
        if self.dialect == "sqlite":
            parts = []
            for suffix in ("", "-wal"):
                try:
                    st = os.stat(str(self.path) + suffix)
                    parts.append(f"{st.st_mtime_ns}:{st.st_size}")
                except FileNotFoundError:
                    parts.append("-")
            return "/".join(parts)
        import psycopg

        with psycopg.connect(engine_pg.psycopg_dsn(self.url), connect_timeout=10) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = %s",
                (self.schema,),
            ).fetchone()
        return f"pg:{row[0] if row else 0}"


def reflect(url: URL, schema: str) -> dict[str, list[Column]]:
    """The tables and columns of the connection (its administrator's view)."""
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "")
        if not path.is_file():
            raise DreamerError("invalid_argument", f"there is no SQLite database at {path}; check the URL")
        engine = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    else:
        engine = create_engine(url)
    try:
        insp = inspect(engine)
        out: dict[str, list[Column]] = {}
        for table in insp.get_table_names(schema=schema):
            out[table.lower()] = [Column(c["name"], str(c["type"])) for c in insp.get_columns(table, schema=schema)]
        return out
    except Exception as exc:  # the driver's own error, for the administrator to read
        raise DreamerError("invalid_argument", f"cannot read the tables of that database: {str(exc).splitlines()[0][:200]}") from None
    finally:
        engine.dispose()


def parse_url(text: str) -> tuple[URL, str]:
    """(URL, default schema) for a SQLite or PostgreSQL URL; other databases are not built yet."""
    url = normalize_url(text) if text.startswith(("postgres", "sqlite")) else None
    if url is None:
        raise DreamerError("not_available", "only sqlite:/// and postgresql:// connections are built yet "
                           "(other SQLAlchemy dialects, SQL Server included, are not)")
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise DreamerError("invalid_argument", "a SQLite connection needs a file path: sqlite:////path/to/file.db")
        return url, "main"
    return url, str(url.query.get("schema") or "public")


def build(name: str, url_text: str, schema: str, description: str, scopes_text: str,
          secrets: dict[str, str]) -> Connection:
    url, _ = parse_url(url_text)
    if "schema" in url.query:
        url = url.difference_update_query(["schema"])
    columns = reflect(url, schema)
    scopes = parse_scopes(scopes_text, set(columns)) if scopes_text else parse_scopes("version: 1\n")
    return Connection(name, url, schema, description, scopes, columns, dict(secrets))


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    return str(value)
