"""heartbeats: each `serve` says every few seconds how its processes are, for the web view's
/healthz and /metrics (issue 51)

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-08 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "heartbeats",
        sa.Column("server", sa.String(200), nullable=False),
        sa.Column("role", sa.String(60), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("every_seconds", sa.Float(), nullable=False),
        sa.Column("restarts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("server", "role", "slot", name=op.f("pk_heartbeats")),
    )


def downgrade() -> None:
    op.drop_table("heartbeats")
