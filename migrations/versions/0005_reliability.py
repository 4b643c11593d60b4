"""reliability: per-message delivery leases, quarantine backoff, From-address rate limits and
failed-login records

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 18:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("lease_owner", sa.String(40), nullable=True))
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("from_address", sa.String(320), nullable=True))
        batch.add_column(sa.Column("not_before", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_inbox_fromaddr_received", ["from_address", "received_at"])
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("guess_alert_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "auth_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(64), nullable=False),
        sa.Column("sender", sa.String(320), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_failures")),
    )
    op.create_index("ix_auth_failures_userid_at", "auth_failures", ["userid", "failed_at"])
    op.create_index("ix_auth_failures_sender_at", "auth_failures", ["sender", "failed_at"])


def downgrade() -> None:
    op.drop_index("ix_auth_failures_sender_at", table_name="auth_failures")
    op.drop_index("ix_auth_failures_userid_at", table_name="auth_failures")
    op.drop_table("auth_failures")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("guess_alert_at")
    with op.batch_alter_table("inbox") as batch:
        batch.drop_index("ix_inbox_fromaddr_received")
        batch.drop_column("not_before")
        batch.drop_column("from_address")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("lease_owner")
