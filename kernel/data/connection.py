"""One data connection as the query path sees it: its dialect, tables, scopes and engine.

Built from a `DataConnection` row. The application layer's rewriter targets the
engine layer's secured sources (SQLite: the temp views; PostgreSQL: the schema's
tables under row-level security), so in normal operation both filters apply.

Other databases with a SQLAlchemy driver and a sqlglot dialect (MySQL and MariaDB,
SQL Server, Oracle) are served by the application layer alone: the same validator
and rewriter, then the secured SQL in a read-only transaction where the database has
one, with the administrator's credentials. There is no engine layer for them, so the
administrator should connect them with a database user that can only read.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlglot import exp

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.caps import MAX_RESULT_BYTES, capped
from dreamer.kernel.data.engine_sqlite import open_secured, temp_table
from dreamer.kernel.data.engine_sqlite import run as run_sqlite
from dreamer.kernel.data.rewriter import Target
from dreamer.kernel.data.scopes import Role, ScopesFile, parse_scopes
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.database import normalize_url


# SQLAlchemy backend → sqlglot dialect, for the databases served by the application layer alone.
APPLICATION_ONLY = {"mysql": "mysql", "mariadb": "mysql", "mssql": "tsql", "oracle": "oracle"}
# How each begins a transaction that cannot write (none for Oracle: its SET TRANSACTION
# READ ONLY must come first, which SQLAlchemy's implicit begin already did).
_READ_ONLY = {"mysql": "START TRANSACTION READ ONLY", "tsql": None, "oracle": "SET TRANSACTION READ ONLY"}
# Without a cheap change counter, cached results of these live at most this long.
_VERSION_WINDOW_S = 60
# PostgreSQL's change counter is read at most this often per connection (a cache hit then costs
# no round trip); its statistics lag a commit by about as much anyway.
VERSION_CHECK_S = 1.0


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
    _version: tuple[float, str] | None = field(default=None, repr=False)  # (when read, PostgreSQL's counter)

    @property
    def dialect(self) -> str:
        backend = self.url.get_backend_name()
        if backend == "sqlite":
            return "sqlite"
        return APPLICATION_ONLY.get(backend, "postgres")

    @property
    def layers(self) -> str:
        """Which layers enforce the scopes: "application and engine", or "application only"."""
        return "application and engine" if self.dialect in ("sqlite", "postgres") else "application only"

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

    def execute(self, role: Role, query: str, max_rows: int,
                tables: Iterable[str] | None = None) -> tuple[list[str], list[list[Any]], bool]:
        """Run secured SQL through the engine layer: (columns, rows as JSON-safe lists, truncated).

        `tables`: the base tables the query reads (the guard's list), so SQLite fills only those.
        Errors come back as DreamerError: compile-time ones with the database's words, those
        raised while reading rows as one generic sentence (their detail is in the kernel log)."""
        if self.dialect not in ("sqlite", "postgres"):
            columns, rows, truncated = _run_read_only(self.url, self.dialect, query, max_rows)
        elif self.dialect == "sqlite":
            conn = open_secured(self.path, role, tables)
            try:
                columns, rows, truncated = run_sqlite(conn, query, max_rows, MAX_RESULT_BYTES)
            finally:
                conn.close()
        else:
            columns, rows, truncated = engine_pg.run_as_reader(self._reader_url(), self.schema, role.name, query,
                                                                 max_rows, MAX_RESULT_BYTES)
        return columns, [[jsonable(v) for v in row] for row in rows[:max_rows]], truncated

    def data_version(self) -> str:
        """Changes whenever the data may have changed: the result cache's key includes it."""
        if self.dialect not in ("sqlite", "postgres"):
            return f"t:{int(time.time() // _VERSION_WINDOW_S)}"
        if self.dialect == "sqlite":
            parts = []
            for suffix in ("", "-wal"):
                try:
                    st = os.stat(str(self.path) + suffix)
                    parts.append(f"{st.st_mtime_ns}:{st.st_size}")
                except FileNotFoundError:
                    parts.append("-")
            return "/".join(parts)
        now = time.monotonic()
        if self._version is not None and now - self._version[0] < VERSION_CHECK_S:
            return self._version[1]
        version = engine_pg.data_version(self._reader_url(), self.schema)
        self._version = (now, version)
        return version

    def _reader_url(self) -> URL:
        reader = self.secrets.get("reader")
        if not reader:
            raise DreamerError("not_available", f"connection {self.name} has no reader role yet; "
                               f"run `dreamer data scopes {self.name} FILE` as an administrator to provision it")
        return engine_pg.reader_url(self.url, reader, self.secrets.get("password", ""))


def reflect(url: URL, schema: str) -> dict[str, list[Column]]:
    """The tables and columns of the connection (its administrator's view)."""
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "")
        if not path.is_file():
            raise DreamerError("invalid_argument", f"there is no SQLite database at {path}; check the URL")
        engine = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    else:
        try:
            engine = create_engine(url, pool_pre_ping=True)
        except ImportError as exc:
            raise DreamerError(
                "not_available", f"no driver for {url.drivername} is installed on the kernel's host ({exc.name or exc})"
            ) from None
    try:
        insp = inspect(engine)
        out: dict[str, list[Column]] = {}
        for table in insp.get_table_names(schema=schema):
            out[table.lower()] = [Column(c["name"], str(c["type"])) for c in insp.get_columns(table, schema=schema)]
        return out
    except Exception as exc:  # noqa: BLE001 - the driver's own error, for the administrator to read
        raise DreamerError("invalid_argument", f"cannot read the tables of that database: {str(exc).splitlines()[0][:200]}") from None
    finally:
        engine.dispose()


def column_names(columns: dict[str, list[Column]]) -> dict[str, set[str]]:
    """table -> the names of its columns: what a scopes file's semantic model is checked against."""
    return {table: {c.name for c in cols} for table, cols in columns.items()}


def parse_url(text: str) -> tuple[URL, str]:
    """(URL, default schema) for a SQLite, PostgreSQL or application-layer-only database URL."""
    if not text.startswith(("postgres", "sqlite")):
        try:
            url = make_url(text)
        except ArgumentError:
            raise DreamerError("invalid_argument", f"{text[:80]!r} is not a SQLAlchemy database URL") from None
        if url.get_backend_name() not in APPLICATION_ONLY:
            raise DreamerError(
                "not_available",
                f"{url.get_backend_name()} databases are not supported; use SQLite, PostgreSQL, MySQL/MariaDB, "
                "SQL Server or Oracle",
            )
        if url.get_backend_name() in ("mysql", "mariadb") and "+" not in url.drivername:
            url = url.set(drivername=f"{url.get_backend_name()}+pymysql")  # the driver dreamer ships
        schema = url.query.get("schema") or url.database or ""
        if not schema:
            raise DreamerError("invalid_argument", "the URL must name the database (or ?schema=) whose tables are queried")
        return url, str(schema)
    url = normalize_url(text)
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


def _run_read_only(url: URL, dialect: str, query: str, max_rows: int) -> tuple[list[str], list[Any], bool]:
    """The application layer's secured SQL on a database without an engine layer of ours:
    in a transaction that cannot write where the database has one, always rolled back."""
    engine = create_engine(url, pool_pre_ping=True)
    try:
        with engine.connect() as conn:
            begin = _READ_ONLY.get(dialect)
            if begin:
                conn.exec_driver_sql(begin)
            try:
                result = conn.execution_options(stream_results=True).exec_driver_sql(query)
                columns = list(result.keys())
                rows, truncated = capped(result, max_rows, MAX_RESULT_BYTES)
            except Exception as exc:  # noqa: BLE001 - the database's refusal, for the model and the user to read
                raise DreamerError("sql_error", f"the database refused the query: {str(exc).splitlines()[0][:300]}") from None
            finally:
                conn.rollback()
    finally:
        engine.dispose()
    return columns, [list(r) for r in rows], truncated


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
