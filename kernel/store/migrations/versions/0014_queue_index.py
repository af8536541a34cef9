"""The fair-share scheduler's index: queued invocations by (user, agent), oldest first.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_invocations_queue", "invocations", ["status", "user_id", "agent", "created_at", "id", "run_after"])


def downgrade() -> None:
    op.drop_index("ix_invocations_queue", table_name="invocations")
