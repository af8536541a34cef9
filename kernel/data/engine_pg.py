"""PostgreSQL's engine layer: a least-privilege login role, row-level security, one read-only transaction per query.

`provision` (run by the administrator's connection, which must own the tables) makes:
- a login role `<reader>` that may only USAGE the schema and SELECT the scoped tables;
- row-level security on those tables, with one permissive policy per (table, scope role):
  `current_setting('dreamer.scope_role', true) = '<role>' AND <the role's rule>`;
- `REVOKE EXECUTE ON FUNCTION set_config FROM PUBLIC` in that database, so SQL run as the
  reader cannot change `dreamer.scope_role` itself. (This is database-wide: other roles
  that need set_config must be granted it by name; docs/ARCHITECTURE.md says so.)

Every query then runs as the reader in `BEGIN READ ONLY`, with `SET LOCAL
dreamer.scope_role`, `statement_timeout` and `search_path` set by the kernel for that
transaction only, the statement sent through the extended protocol (which refuses a
second statement) and its rows streamed one at a time, so the row and byte caps bound
what the kernel receives, not only what it keeps (the rest of the query is cancelled),
and a ROLLBACK at the end. With no scope role set, the policies match nothing. This
layer is sufficient without the application layer.

The readers' connections are pooled per (reader, database); the result cache's data
version is read through the same pool (`data_version`), never on a new connection.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Generator
from typing import Any, cast

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool
from sqlalchemy.engine import URL

from dreamer.kernel.data.caps import capped
from dreamer.kernel.data.filters import policy_condition
from dreamer.kernel.data.engine_sqlite import RUNTIME_ERROR, TIMEOUT
from dreamer.kernel.data.scopes import Role
from dreamer.contracts.errors import DreamerError

log = logging.getLogger("dreamer.data")

SCOPE_SETTING = "dreamer.scope_role"
STATEMENT_TIMEOUT_MS = 15_000


def psycopg_dsn(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def reader_url(admin: URL, reader: str, password: str) -> URL:
    return admin.set(username=reader, password=password)


def new_reader(connection: str) -> tuple[str, str]:
    """A role name of our own (unique per connection and installation) and its password."""
    safe = "".join(c if c.isalnum() else "_" for c in connection.lower())[:30]
    return f"dreamer_rd_{safe}_{secrets.token_hex(4)}", secrets.token_urlsafe(24)


def provision(admin: URL, schema: str, roles: list[Role], reader: str, password: str) -> None:
    """Create (or bring up to date) the reader role and the policies for `roles`."""
    with psycopg.connect(psycopg_dsn(admin), autocommit=False, connect_timeout=10) as conn:
        ident = pgsql.Identifier
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (reader,)).fetchone()
        if exists is None:
            conn.execute(pgsql.SQL("CREATE ROLE {} LOGIN NOINHERIT NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                ident(reader), pgsql.Literal(password)))
        conn.execute(pgsql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(ident(reader)))
        conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(ident(schema), ident(reader)))
        tables = sorted({t for role in roles for t in role.rules})
        old = conn.execute(
            "SELECT tablename, policyname FROM pg_policies WHERE schemaname = %s AND policyname LIKE %s",
            (schema, f"{reader}%"),
        ).fetchall()
        for table, policy in old:
            conn.execute(pgsql.SQL("DROP POLICY {} ON {}.{}").format(ident(policy), ident(schema), ident(table)))
        conn.execute(pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(ident(schema), ident(reader)))
        for table in tables:
            qualified = pgsql.SQL("{}.{}").format(ident(schema), ident(table))
            conn.execute(pgsql.SQL("GRANT SELECT ON {} TO {}").format(qualified, ident(reader)))
            conn.execute(pgsql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(qualified))
            for role in roles:
                if table not in role.rules:
                    continue
                using = policy_condition(role, table, schema).sql(dialect="postgres")
                check = f"current_setting('{SCOPE_SETTING}', true) = '{role.name}'"  # role names are [a-z0-9_]
                conn.execute(pgsql.SQL("CREATE POLICY {} ON {} AS PERMISSIVE FOR SELECT TO {} USING ({})").format(
                    ident(f"{reader}_{role.name}"[:63]), qualified, ident(reader), pgsql.SQL(f"{check} AND ({using})")))
        conn.execute("REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC")
        conn.commit()


def drop_reader(admin: URL, reader: str) -> None:
    """Remove the reader role and everything granted to it (its policies go with DROP OWNED)."""
    with psycopg.connect(psycopg_dsn(admin), autocommit=True, connect_timeout=10) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (reader,)).fetchone() is None:
            return
        for (schema, table, policy) in conn.execute(
            "SELECT schemaname, tablename, policyname FROM pg_policies WHERE policyname LIKE %s", (f"{reader}%",)
        ).fetchall():
            conn.execute(pgsql.SQL("DROP POLICY {} ON {}.{}").format(
                pgsql.Identifier(policy), pgsql.Identifier(schema), pgsql.Identifier(table)))
        conn.execute(pgsql.SQL("DROP OWNED BY {}").format(pgsql.Identifier(reader)))
        conn.execute(pgsql.SQL("DROP ROLE {}").format(pgsql.Identifier(reader)))


_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()
POOL_MAX = 4  # per connection: the kernel's query threads share them


def _pool(url: URL) -> ConnectionPool:
    """One pool of reader connections per (reader, database): a query no longer pays a login."""
    dsn = psycopg_dsn(url)
    with _pools_lock:
        pool = _pools.get(dsn)
        if pool is None:
            pool = ConnectionPool(dsn, min_size=0, max_size=POOL_MAX, open=True, timeout=30,
                                  kwargs={"autocommit": True, "connect_timeout": 10}, check=ConnectionPool.check_connection)
            _pools[dsn] = pool
        return pool


def close_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def run_as_reader(url: URL, schema: str, role: str, query: str, max_rows: int,
                  max_bytes: int | None = None) -> tuple[list[str], list[tuple[Any, ...]], bool]:
    """Run one statement as the reader for scope role `role`: (columns, rows, truncated).

    A compile-time error (SQLSTATE class 42 or 0A: the SQL or the schema) keeps PostgreSQL's
    words; an error raised while rows are read becomes one generic sentence, its detail in the
    kernel log, since it could depend on the data; a statement timeout is `timeout`. Rows stop
    at `max_rows` or when they add up to more than `max_bytes` (truncated)."""
    with _pool(url).connection() as conn:
        conn.execute("BEGIN READ ONLY")
        try:
            conn.execute("SELECT 1")  # nothing: keeps the SET LOCALs below inside the transaction
            conn.execute(pgsql.SQL("SET LOCAL {} = {}").format(pgsql.Identifier(*SCOPE_SETTING.split(".")),
                                                               pgsql.Literal(role)))
            conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(STATEMENT_TIMEOUT_MS)))
            conn.execute(pgsql.SQL("SET LOCAL search_path = {}").format(pgsql.Identifier(schema)))
            conn.execute("SET LOCAL row_security = on")
            cur = conn.cursor()
            # bytes: no client-side % interpolation; stream(): the extended protocol, one row at a time.
            rows_in = cast(Generator[Any, None, None], cur.stream(query.encode("utf-8")))
            try:
                rows, truncated = capped(rows_in, max_rows, max_bytes)
                columns = [d.name for d in cur.description or []]
            except psycopg.Error as exc:
                raise _refusal(exc) from None
            finally:
                rows_in.close()  # a capped result: cancel the rest of the query
            return columns, rows, truncated
        finally:
            conn.execute("ROLLBACK")


def data_version(url: URL, schema: str) -> str:
    """What the statistics say was written to `schema`'s tables (rows inserted, updated, deleted,
    and live), read as the reader through its pool. PostgreSQL updates these counters within
    about a second of a commit; the result cache's key includes the answer."""
    with _pool(url).connection() as conn:
        row = conn.execute(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0), coalesce(sum(n_live_tup), 0) "
            "FROM pg_stat_user_tables WHERE schemaname = %s", (schema,)).fetchone()
    return f"pg:{row[0]}:{row[1]}" if row else "pg:0"


def pool_stats(url: URL) -> dict[str, int]:
    """The reader pool's counters (connections opened, requests served): what the tests read."""
    return dict(_pool(url).get_stats())


def _refusal(exc: psycopg.Error) -> DreamerError:
    state = exc.sqlstate or ""
    if state == "57014":  # query_canceled: the statement timeout
        return DreamerError("timeout", TIMEOUT)
    if state[:2] in ("42", "0A"):
        message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        return DreamerError("sql_error", f"the database refused the query: {message}")
    log.info("PostgreSQL query failed while reading rows: %s", exc)
    return DreamerError("sql_error", RUNTIME_ERROR)
