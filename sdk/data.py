"""`ctx.data`: the worker side of the data syscalls (grant `data:<connection>`).

The kernel holds the connection's URL and credentials, decides which rows the user's
role may see, validates and rewrites every query, and keeps results; the agent gets
the catalogue, schemas, distinct values and pages of rows, and never a password.
"""

from __future__ import annotations

from typing import Any, Protocol


class _Kernel(Protocol):
    def request(self, method: str, params: dict[str, Any]) -> Any: ...


class Data:
    def __init__(self, kernel: _Kernel, check: Any) -> None:
        self._kernel = kernel
        self._check = check

    def _ask(self, method: str, **params: Any) -> dict[str, Any]:
        self._check(f"ctx.data.{method.split('.')[1]}")
        for key in ("connection", "table", "column", "sql", "query_id"):
            if key in params and not isinstance(params[key], str):
                raise TypeError(f"ctx.{method}: '{key}' must be a string")
        answer: dict[str, Any] = self._kernel.request(method, {k: v for k, v in params.items() if v is not None})
        return answer

    def catalog(self, connection: str) -> dict[str, Any]:
        """The tables the user may see, with descriptions, join keys and their scope in words."""
        return self._ask("data.catalog", connection=connection)

    def schema(self, connection: str, table: str) -> dict[str, Any]:
        """Columns, types and a few sample rows (from the user's scope) of one table."""
        return self._ask("data.schema", connection=connection, table=table)

    def distinct(self, connection: str, table: str, column: str, limit: int = 200) -> dict[str, Any]:
        """The distinct values of a column within the user's scope, most frequent first, with counts."""
        return self._ask("data.distinct", connection=connection, table=table, column=column, limit=limit)

    def query(self, connection: str, sql: str, page: int = 1, page_size: int = 50) -> dict[str, Any]:
        """Run one read-only query within the user's scope; one page of rows and a query_id for the rest.

        Raises CallError with kind sql_refused (not a read-only query, or a table outside the
        scope), sql_error (the database's own error), permission_denied (no grant, or no role).
        """
        return self._ask("data.query", connection=connection, sql=sql, page=page, page_size=page_size)

    def page(self, query_id: str, page: int, page_size: int = 50) -> dict[str, Any]:
        """Another page of a result the kernel keeps."""
        return self._ask("data.page", query_id=query_id, page=page, page_size=page_size)
