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
transaction only, the statement sent as ONE prepared statement (the extended protocol
refuses a second statement), and a ROLLBACK at the end. With no scope role set, the
policies match nothing. This layer is sufficient without the application layer.
"""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from psycopg import sql as pgsql
from sqlalchemy.engine import URL

from dreamer.kernel.data.filters import policy_condition
from dreamer.kernel.data.scopes import Role

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


def run_as_reader(url: URL, schema: str, role: str, query: str, max_rows: int) -> tuple[list[str], list[tuple[Any, ...]], bool]:
    """Run one statement as the reader for scope role `role`: (columns, rows, truncated)."""
    with psycopg.connect(psycopg_dsn(url), autocommit=True, connect_timeout=10) as conn:
        conn.execute("BEGIN READ ONLY")
        try:
            conn.execute("SELECT 1")  # nothing: keeps the SET LOCALs below inside the transaction
            conn.execute(pgsql.SQL("SET LOCAL {} = {}").format(pgsql.Identifier(*SCOPE_SETTING.split(".")),
                                                               pgsql.Literal(role)))
            conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(STATEMENT_TIMEOUT_MS)))
            conn.execute(pgsql.SQL("SET LOCAL search_path = {}").format(pgsql.Identifier(schema)))
            conn.execute("SET LOCAL row_security = on")
            cur = conn.cursor()
            cur.execute(query.encode("utf-8"), prepare=True)  # bytes: no client-side % interpolation
            columns = [d.name for d in cur.description or []]
            rows = cur.fetchmany(max_rows + 1)
            return columns, [tuple(r) for r in rows[:max_rows]], len(rows) > max_rows
        finally:
            conn.execute("ROLLBACK")
