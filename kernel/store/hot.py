"""Statements of the call path run on the DBAPI cursor, compiled once per dialect.

Every warm call writes its invocation row, an audit entry and the row's end; through
`Connection.execute` each of those statements costs about 50 µs of Python in SQLAlchemy
(cache-key lookup, execution context, result set-up) for a few microseconds of SQLite.
A `HotStatement` compiles its Core statement once for the connection's dialect, keeps
the SQL text, the order of its parameters and SQLAlchemy's own bind processors (so a
datetime or a JSON value is stored exactly as `Connection.execute` would store it), and
runs it on the cursor of the caller's connection, inside the caller's transaction.

Only statements whose compiled parameters are exactly the keys given qualify: one that
would need a column default or an `onupdate` computed by SQLAlchemy raises at the first
use instead of writing a row without them. A database error comes back wrapped as
SQLAlchemy wraps it (sqlalchemy.exc.DBAPIError and its subclasses).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # bind names, in the order of a positional paramstyle
    keys: tuple[str | None, ...]  # for each, the key of the caller's parameters (None: a constant)
    constants: tuple[Any, ...]  # for each, the statement's own value where keys has None
    positional: bool
    processors: tuple[Callable[[Any], Any] | None, ...]  # one per name


class HotStatement:
    def __init__(self, statement: ClauseElement, keys: Sequence[str]) -> None:
        self.statement = statement
        self.keys = tuple(keys)
        # By the dialect object itself (held, so its id is never another dialect's).
        self._compiled: dict[int, tuple[Dialect, _Compiled]] = {}
        self._lock = threading.Lock()

    def _compile(self, dialect: Dialect) -> _Compiled:
        held = self._compiled.get(id(dialect))
        if held is not None and held[0] is dialect:
            return held[1]
        with self._lock:
            compiled = self.statement.compile(dialect=dialect, column_keys=list(self.keys))
            assert isinstance(compiled, SQLCompiler)
            names = tuple(compiled.positiontup or ()) if compiled.positional else tuple(compiled.binds)
            keys: list[str | None] = []
            constants: list[Any] = []
            for name in names:
                bind = compiled.binds[name]
                if name in self.keys:
                    keys.append(name)
                    constants.append(None)
                elif not bind.required and bind.callable is None and bind.value is not None:
                    keys.append(None)  # a literal of the statement itself (status == "running")
                    constants.append(bind.value)
                else:
                    raise ValueError(f"a hot statement cannot fill {name!r} (a column default or onupdate?)")
            if sorted(k for k in keys if k is not None) != sorted(self.keys):
                raise ValueError(f"a hot statement takes exactly the keys {sorted(self.keys)}; compiled: {names}")
            processors = tuple(
                compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
            )
            found = _Compiled(compiled.string, names, tuple(keys), tuple(constants), bool(compiled.positional), processors)
            self._compiled[id(dialect)] = (dialect, found)
        return found

    def execute(self, conn: Connection, params: dict[str, Any] | Sequence[dict[str, Any]]) -> None:
        """Run with one set of parameters, or with several (executemany)."""
        compiled = self._compile(conn.dialect)
        many = not isinstance(params, dict)
        rows = [self._bind(compiled, p) for p in params] if many else [self._bind(compiled, params)]  # type: ignore[arg-type]
        if rows:
            self._run(conn, compiled, rows, many=many)

    def first(self, conn: Connection, params: dict[str, Any] | None = None) -> tuple[Any, ...] | None:
        """Run a query; its first row as the driver returns it, or None. No result processing:
        only for columns whose driver values are already what the caller reads (integers, text)."""
        compiled = self._compile(conn.dialect)
        return self._run(conn, compiled, [self._bind(compiled, params or {})], fetch=True)

    @staticmethod
    def _run(conn: Connection, compiled: _Compiled, rows: list[Any], *, many: bool = False,
             fetch: bool = False) -> tuple[Any, ...] | None:
        dialect = conn.dialect
        dbapi_conn = conn.connection.dbapi_connection
        assert dbapi_conn is not None
        cursor = dbapi_conn.cursor()
        try:
            if many:
                cursor.executemany(compiled.sql, rows)
            else:
                cursor.execute(compiled.sql, rows[0])
            found: tuple[Any, ...] | None = cursor.fetchone() if fetch else None
            return found
        except dialect.loaded_dbapi.Error as error:
            raise DBAPIError.instance(
                compiled.sql, rows[0], error, dialect.loaded_dbapi.Error, dialect=dialect
            ) from error
        finally:
            cursor.close()

    @staticmethod
    def _bind(compiled: _Compiled, params: dict[str, Any]) -> Any:
        values = []
        for key, constant, process in zip(compiled.keys, compiled.constants, compiled.processors):
            value = constant if key is None else params[key]
            # Every value goes through its processor, None included, as in Connection.execute
            # (a JSON column stores None as the JSON text null).
            values.append(process(value) if process is not None else value)
        return tuple(values) if compiled.positional else dict(zip(compiled.names, values))
