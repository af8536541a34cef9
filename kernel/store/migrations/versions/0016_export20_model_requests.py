"""Trace export (issue 20): what each model call asked and answered, and a per-user
opt-out of export.

Revision ID: 0016_export20
Revises: 0015
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_export20"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "model_requests",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=True),
        sa.Column("turn_key", sa.String(length=40), nullable=True),
        sa.Column("span_id", sa.String(length=16), nullable=True),
        sa.Column("trace_id", sa.String(length=32), nullable=True),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("usage", sa.JSON(), nullable=True),
        sa.Column("finish_reason", sa.String(length=32), nullable=True),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_model_requests_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_requests")),
    )
    op.create_index(op.f("ix_model_requests_user_id"), "model_requests", ["user_id"])
    op.create_index(op.f("ix_model_requests_invocation_id"), "model_requests", ["invocation_id"])
    op.create_index(op.f("ix_model_requests_turn_key"), "model_requests", ["turn_key"])
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("export_opt_out", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("export_opt_out")
    op.drop_index(op.f("ix_model_requests_turn_key"), table_name="model_requests")
    op.drop_index(op.f("ix_model_requests_invocation_id"), table_name="model_requests")
    op.drop_index(op.f("ix_model_requests_user_id"), table_name="model_requests")
    op.drop_table("model_requests")
