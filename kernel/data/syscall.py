"""The data syscalls: what the sql-explorer (or any agent granted `data:<connection>`) may ask.

`data.catalog`, `data.schema`, `data.distinct`, `data.query` and `data.page`. The agent
names a connection and never sees its URL or credentials; the kernel checks the grant,
finds the user's role in the connection's scopes file and runs everything through the
guard and the engine layer. Each call records what was asked and what ran on its span
(SQL as written, SQL as executed, rows, duration, error) and in the audit log.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from dreamer.kernel.data.queries import MAX_PAGE_SIZE, PAGE_SIZE, DataService
from dreamer.contracts.errors import DreamerError

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext


def _service(ctx: "SyscallContext") -> DataService:
    service: DataService | None = getattr(ctx.invoker, "data", None)
    if service is None:
        raise DreamerError("not_available", "this kernel has no data connections")
    return service


def _text(params: dict[str, Any], key: str, limit: int = 200) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise DreamerError("invalid_argument", f"'{key}' must be a non-empty string of at most {limit} characters")
    return value


def _int(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DreamerError("invalid_argument", f"'{key}' must be a whole number from {low} to {high}")
    return value


def _granted(ctx: "SyscallContext", params: dict[str, Any], action: str) -> str:
    name = _text(params, "connection", 64)
    ctx.require(f"data:{name}", action=action, target=f"data:{name}")
    return name


async def data_catalog(ctx: "SyscallContext", params: dict[str, Any]) -> Any:
    name = _granted(ctx, params, "data.catalog")
    return await asyncio.to_thread(_service(ctx).catalog, name, ctx.who.user_name)


async def data_schema(ctx: "SyscallContext", params: dict[str, Any]) -> Any:
    name = _granted(ctx, params, "data.schema")
    table = _text(params, "table", 128)
    return await asyncio.to_thread(_service(ctx).schema, name, ctx.who.user_name, table, ctx.who.user_id)


async def data_distinct(ctx: "SyscallContext", params: dict[str, Any]) -> Any:
    name = _granted(ctx, params, "data.distinct")
    table, column = _text(params, "table", 128), _text(params, "column", 128)
    limit = _int(params, "limit", 200, 1, 200)
    return await asyncio.to_thread(_service(ctx).distinct, name, ctx.who.user_name, table, column, limit,
                                   ctx.who.user_id)


async def data_query(ctx: "SyscallContext", params: dict[str, Any]) -> Any:
    name = _granted(ctx, params, "data.query")
    sql = _text(params, "sql", 20_000)
    page = _int(params, "page", 1, 1, 100_000)
    size = _int(params, "page_size", PAGE_SIZE, 1, MAX_PAGE_SIZE)
    span = trace.get_current_span()
    span.set_attribute("db.system", "data:" + name)
    span.set_attribute("db.query.text", sql[:4000])
    try:
        ran = await asyncio.to_thread(_service(ctx).query, name, ctx.who.user_name, sql, ctx.who.user_id)
    except DreamerError as exc:
        span.set_attribute("dreamer.sql.error", exc.message[:500])
        ctx.record(action="data.query", target=f"data:{name}", decision="deny" if exc.code == "sql_refused" else "allow",
                   detail={"refused": exc.message[:300]})
        raise
    span.set_attribute("dreamer.sql.secured", ran.guarded.secured[:8000])
    span.set_attribute("db.response.returned_rows", len(ran.result.rows))
    span.set_attribute("dreamer.sql.cached", ran.cached)
    span.set_attribute("dreamer.sql.cache", "hit" if ran.cached else "miss")
    span.set_attribute("dreamer.sql.cache_key", f"user {ctx.who.user_id}, {ran.versions}")
    span.set_attribute("dreamer.sql.duration_ms", round(ran.ms, 3))
    span.set_attribute("dreamer.sql.tables", list(ran.guarded.tables))
    ctx.record(action="data.query", target=f"data:{name}",
               detail={"query_id": ran.result.id, "tables": list(ran.guarded.tables), "rows": len(ran.result.rows)})
    return {**ran.result.page(page, size), "sql": ran.guarded.written, "secured_sql": ran.guarded.secured,
            "tables": list(ran.guarded.tables), "cached": ran.cached}


async def data_page(ctx: "SyscallContext", params: dict[str, Any]) -> Any:
    query_id = _text(params, "query_id", 64)
    result = _service(ctx).results.get(query_id, ctx.who.user_id)
    ctx.require(f"data:{result.connection}", action="data.page", target=f"data:{result.connection}")
    return result.page(_int(params, "page", 1, 1, 100_000), _int(params, "page_size", PAGE_SIZE, 1, MAX_PAGE_SIZE))


TABLE = {
    "data.catalog": data_catalog,
    "data.schema": data_schema,
    "data.distinct": data_distinct,
    "data.query": data_query,
    "data.page": data_page,
}
