"""Typed handles on the models' tables for Core statements.

SQLAlchemy types a declarative model's `__table__` as any FromClause, a column's type as
any TypeEngine and `Session.execute`'s result as a plain Result; the kernel's models each
map one Table with String columns where a width is read, and UPDATE/DELETE results are
cursor results. These helpers say so once instead of at every use.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, Result, String, Table

from dreamer.kernel.store.models import Base


def table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


def width(column: ColumnElement[Any]) -> int | None:
    """The declared length of a String column (None for any other type or no length)."""
    kind = column.type
    return kind.length if isinstance(kind, String) else None


def rowcount(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE matched."""
    return cast(CursorResult[Any], result).rowcount
