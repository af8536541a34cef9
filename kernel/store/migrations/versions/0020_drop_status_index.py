"""Drop ix_invocations_status: ix_invocations_queue starts with status and serves every query
that filters on it, while each call's row paid for a second b-tree (issue 23).

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_invocations_status", table_name="invocations")


def downgrade() -> None:
    op.create_index("ix_invocations_status", "invocations", ["status"])
