"""inbox.envelope_to (RCPT TO), addresses' bounce counts, server_keys

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 23:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("envelope_to", sa.Text(), nullable=True))
    with op.batch_alter_table("addresses") as batch:
        batch.add_column(
            sa.Column("hard_bounces", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("bouncing_since", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("last_bounce_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("last_bounce", sa.Text(), nullable=True))
    op.create_table(
        "server_keys",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_server_keys"),
    )


def downgrade() -> None:
    op.drop_table("server_keys")
    with op.batch_alter_table("addresses") as batch:
        for name in ("last_bounce", "last_bounce_at", "bouncing_since", "hard_bounces"):
            batch.drop_column(name)
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("envelope_to")
