"""Several kernels on one database: nodes, cluster events, shared secrets, cron ticks fired,
and the node running each invocation's attempt.

Revision ID: 0017
Revises: 0016_export20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016_export20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("invocations", sa.Column("node", sa.String(length=64), nullable=True))
    op.create_index(op.f("ix_invocations_node"), "invocations", ["node"])
    op.create_table(
        "cluster_nodes",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("advertise", sa.String(length=300), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("draining", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("applied_event", sa.BigInteger(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cluster_nodes")),
    )
    op.create_table(
        "cluster_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("origin", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cluster_events")),
    )
    op.create_index(op.f("ix_cluster_events_at"), "cluster_events", ["at"])
    op.create_table(
        "cluster_secrets",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cluster_secrets")),
    )
    op.create_table(
        "cron_fires",
        sa.Column("trigger_id", sa.Integer(), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=True),
        sa.Column("node", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["trigger_id"], ["triggers.id"], name=op.f("fk_cron_fires_trigger_id_triggers"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("trigger_id", "scheduled_for", name=op.f("pk_cron_fires")),
    )


def downgrade() -> None:
    op.drop_table("cron_fires")
    op.drop_table("cluster_secrets")
    op.drop_index(op.f("ix_cluster_events_at"), table_name="cluster_events")
    op.drop_table("cluster_events")
    op.drop_table("cluster_nodes")
    op.drop_index(op.f("ix_invocations_node"), table_name="invocations")
    with op.batch_alter_table("invocations") as batch:
        batch.drop_column("node")
