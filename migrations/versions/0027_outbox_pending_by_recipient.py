"""outbox: pending mail by recipient, so that a delivery claim can see at once whether a
recipient's earlier mail is still being sent (one recipient's mail leaves in queued order)

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-09 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    op.create_index(
        "ix_outbox_pending_recipient",
        "outbox",
        ["recipient", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_outbox_pending_recipient", table_name="outbox")
