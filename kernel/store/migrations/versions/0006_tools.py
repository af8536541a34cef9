"""The tool registry: tool bundles and each user's installed tool servers.

Revision ID: 0006
Revises: 0010
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_bundles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("publisher", sa.String(length=64), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("skills", sa.JSON(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_bundles")),
        sa.UniqueConstraint("name", "version", name=op.f("uq_tool_bundles_name_version")),
    )
    op.create_index(op.f("ix_tool_bundles_name"), "tool_bundles", ["name"])
    op.create_table(
        "tool_installations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("server", sa.String(length=64), nullable=False),
        sa.Column("bundle_id", sa.Integer(), nullable=False),
        sa.Column("disabled", sa.JSON(), nullable=False),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("installed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_tool_installations_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["bundle_id"], ["tool_bundles.id"], name=op.f("fk_tool_installations_bundle_id_tool_bundles")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_installations")),
        sa.UniqueConstraint("user_id", "server", name=op.f("uq_tool_installations_user_id_server")),
    )
    op.create_index(op.f("ix_tool_installations_user_id"), "tool_installations", ["user_id"])


def downgrade() -> None:
    op.drop_table("tool_installations")
    op.drop_table("tool_bundles")
