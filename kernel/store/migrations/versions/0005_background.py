"""Background invocations (queue fields), the user's feed, and triggers.

Revision ID: 0005
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("invocations") as batch:
        batch.add_column(sa.Column("background", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("max_attempts", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("run_after", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("trigger", sa.JSON(), nullable=True))
        batch.create_index(batch.f("ix_invocations_status"), ["status"])
    op.create_table(
        "posts",
        sa.Column("id", BIG_ID, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("priority", sa.String(length=16), nullable=False),
        sa.Column("attachments", sa.JSON(), nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_posts_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_posts")),
    )
    op.create_index("ix_posts_user_id_created_at", "posts", ["user_id", "created_at"])
    op.create_table(
        "triggers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("entrypoint", sa.String(length=64), nullable=False),
        sa.Column("schedule", sa.String(length=200), nullable=True),
        sa.Column("default_schedule", sa.String(length=200), nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("token", sa.String(length=64), nullable=True),
        sa.Column("secret", sa.String(length=200), nullable=True),
        sa.Column("event", sa.String(length=200), nullable=True),
        sa.Column("content_types", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_triggers_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_triggers")),
        sa.UniqueConstraint("user_id", "agent", "name", name=op.f("uq_triggers_user_id_agent_name")),
        sa.UniqueConstraint("token", name=op.f("uq_triggers_token")),
    )
    op.create_index(op.f("ix_triggers_user_id"), "triggers", ["user_id"])
    op.create_index(op.f("ix_triggers_event"), "triggers", ["event"])


def downgrade() -> None:
    op.drop_table("triggers")
    op.drop_table("posts")
    with op.batch_alter_table("invocations") as batch:
        batch.drop_index(batch.f("ix_invocations_status"))
        for column in ("trigger", "run_after", "max_attempts", "background"):
            batch.drop_column(column)
