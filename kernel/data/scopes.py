"""Role scopes of one data connection: who may see which rows, read from a versioned YAML file.

The file is data an administrator writes, so it is checked as hostile input. Rules are
structured (a column equal to values, or a column whose value appears in another
table's secured rows), never SQL text: the same rule then builds the application
layer's filtered subquery, SQLite's secured views and PostgreSQL's policies.

```yaml
version: 1
tables:                      # optional: words for the catalogue
  employees: {description: One row per employee., keys: {manager_id: employees.employee_id}}
roles:
  hr_admin: {describe: every employee and every record, tables: "*"}
  ops_manager:
    describe: the employees of department D042 and their records
    tables:
      employees: {column: department, equals: D042}
      attendance: {column: employee_id, in: employees.employee_id}
users: {hr_admin: hr_admin, ops_manager: ops_manager}
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from dreamer.contracts.errors import DreamerError
from dreamer.sdk.semantic import ModelError
from dreamer.sdk.semantic import parse as parse_model

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_ROLE = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_FILE_BYTES = 256_000
MAX_VALUES = 1000
MAX_DEPTH = 4  # how many `in:` hops a rule may chain (attendance -> employees -> ...)


@dataclass(frozen=True)
class Rule:
    """Which rows of one table a role sees. kind "all": every row; "values": `column`
    is one of `values`; "in": `column` is among `ref_column` of `ref_table`'s secured rows."""

    kind: str
    column: str = ""
    values: tuple[str | int | float, ...] = ()
    ref_table: str = ""
    ref_column: str = ""

    def words(self) -> str:
        if self.kind == "all":
            return "all rows"
        if self.kind == "values":
            shown = ", ".join(str(v) for v in self.values[:5]) + (" ..." if len(self.values) > 5 else "")
            return f"rows whose {self.column} is {shown}"
        return f"rows whose {self.column} belongs to a {self.ref_table} row you may see"


@dataclass(frozen=True)
class Role:
    name: str
    describe: str
    rules: dict[str, Rule]  # table (lower case) -> rule; a table not here is not visible

    def words(self) -> str:
        return self.describe or "; ".join(f"{t}: {r.words()}" for t, r in sorted(self.rules.items()))


@dataclass(frozen=True)
class TableNote:
    description: str = ""
    keys: dict[str, str] = field(default_factory=dict)  # column -> "table.column" it joins to


@dataclass(frozen=True)
class ScopesFile:
    version: int
    roles: dict[str, Role]
    users: dict[str, str]  # kernel user name -> role name
    tables: dict[str, TableNote]
    star_roles: frozenset[str] = frozenset()  # roles declared with tables: "*"
    # The connection's semantic model (what tables mean, how people say things): metadata the
    # kernel keeps and hands out with the catalogue, never a rule about rows. Versioned with the file.
    semantic: dict[str, Any] = field(default_factory=dict)

    def role_for(self, user: str, known_tables: set[str] | None = None) -> Role | None:
        """The role of a kernel user, with "*" expanded over the connection's tables; None: sees nothing."""
        name = self.users.get(user)
        return None if name is None else self.role(name, known_tables)

    def role(self, name: str, known_tables: set[str] | None = None) -> Role:
        role = self.roles[name]
        if name in self.star_roles and known_tables is not None:
            return Role(role.name, role.describe, {t: Rule("all") for t in sorted(known_tables)})
        return role


def _bad(message: str) -> DreamerError:
    return DreamerError("invalid_argument", f"scopes file: {message}")


def parse_scopes(text: str, known_tables: set[str] | None = None) -> ScopesFile:
    """The scopes file in `text`; invalid_argument naming the first problem otherwise."""
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise _bad(f"the file is larger than {MAX_FILE_BYTES} bytes")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _bad(f"it is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise _bad("it must be a mapping with version, roles and users")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad("`version` must be a whole number from 1 up; raise it with every change")
    roles_in, users_in = data.get("roles") or {}, data.get("users") or {}
    if not isinstance(roles_in, dict) or not isinstance(users_in, dict):
        raise _bad("`roles` and `users` must be mappings")
    roles: dict[str, Role] = {}
    star: set[str] = set()
    for name, body in roles_in.items():
        if not isinstance(name, str) or not _ROLE.fullmatch(name):
            raise _bad(f"role name {str(name)[:40]!r} must be lower case letters, digits and _")
        if not isinstance(body, dict):
            raise _bad(f"role {name} must be a mapping with describe and tables")
        tables = body.get("tables")
        describe = str(body.get("describe") or "")[:300]
        if tables == "*":
            star.add(name)
            roles[name] = Role(name, describe or "every table, every row", {})
            continue
        if not isinstance(tables, dict):
            raise _bad(f"role {name}: `tables` must be \"*\" or a mapping of table to rule")
        rules = {_table(t, name): _rule(r, name, t) for t, r in tables.items()}
        roles[name] = Role(name, describe, rules)
    for name, role in roles.items():
        for table in role.rules:
            if known_tables is not None and table not in known_tables:
                raise _bad(f"role {name} names table {table!r}, which the connection does not have")
            _check_chain(role, table, 0)
    users: dict[str, str] = {}
    for user, role_name in users_in.items():
        if not isinstance(user, str) or not isinstance(role_name, str) or role_name not in roles:
            raise _bad(f"user {str(user)[:40]!r} must map to one of the roles ({', '.join(sorted(roles))})")
        users[user] = role_name
    notes: dict[str, TableNote] = {}
    for table, note in (data.get("tables") or {}).items():
        if not isinstance(note, dict):
            raise _bad(f"tables.{table} must be a mapping with description and keys")
        keys = note.get("keys") or {}
        if not isinstance(keys, dict):
            raise _bad(f"tables.{table}.keys must map a column to table.column")
        notes[_table(table, "tables")] = TableNote(str(note.get("description") or "")[:500],
                                                   {str(k): str(v) for k, v in keys.items()})
    semantic = data.get("semantic") or {}
    if not isinstance(semantic, dict):
        raise _bad("`semantic` must be a mapping (entities, joins, numbers, dimensions)")
    return ScopesFile(version, roles, users, notes, frozenset(star), semantic)


def check_semantic(scopes: ScopesFile, columns: Mapping[str, set[str]]) -> None:
    """Refuse a file whose semantic model is broken (a field of the wrong shape, a table or column
    the connection does not have), with one sentence naming the field. Run when a file is
    uploaded; a file already in place is not checked again, so queries keep working."""
    if scopes.semantic:
        try:
            parse_model(scopes.semantic, columns)
        except ModelError as exc:
            raise _bad(f"semantic model: {exc}") from None


def _table(name: Any, where: str) -> str:
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise _bad(f"{where}: {str(name)[:40]!r} is not a table name")
    return name.lower()


def _rule(body: Any, role: str, table: str) -> Rule:
    if body in ("all", "*", None):
        return Rule("all")
    if not isinstance(body, dict):
        raise _bad(f"role {role}, table {table}: a rule is all or a mapping with column and equals / one_of / in")
    column = body.get("column")
    if not isinstance(column, str) or not _IDENT.fullmatch(column):
        raise _bad(f"role {role}, table {table}: `column` must name a column")
    if "equals" in body or "one_of" in body:
        values = [body["equals"]] if "equals" in body else body["one_of"]
        if not isinstance(values, list) or not values or len(values) > MAX_VALUES:
            raise _bad(f"role {role}, table {table}: one_of needs a list of 1 to {MAX_VALUES} values")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise _bad(f"role {role}, table {table}: values must be text or numbers")
        return Rule("values", column=column.lower(), values=tuple(values))
    ref = body.get("in")
    if isinstance(ref, str) and "." in ref:
        ref_table, ref_column = ref.split(".", 1)
        if _IDENT.fullmatch(ref_table) and _IDENT.fullmatch(ref_column):
            return Rule("in", column=column.lower(), ref_table=ref_table.lower(), ref_column=ref_column.lower())
    raise _bad(f"role {role}, table {table}: give equals, one_of or in: table.column")


def _check_chain(role: Role, table: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _bad(f"role {role.name}: the `in:` rules from {table} go round in a circle or deeper than {MAX_DEPTH}")
    rule = role.rules[table]
    if rule.kind == "in":
        if rule.ref_table not in role.rules:
            raise _bad(f"role {role.name}: {table} depends on {rule.ref_table}, which the role does not see")
        _check_chain(role, rule.ref_table, depth + 1)
