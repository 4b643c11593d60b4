"""outbox: a partial index on pending mail for the delivery claim, sent mail by age

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    # (status, next_attempt_at) served the claim only while few rows were sent; once sent mail
    # outnumbers the rest, SQLite's statistics make it scan the whole outbox instead.
    op.drop_index("ix_outbox_status_next", table_name="outbox")
    op.create_index(
        "ix_outbox_pending",
        "outbox",
        ["next_attempt_at", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    op.create_index("ix_outbox_status_created", "outbox", ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_outbox_status_created", table_name="outbox")
    op.drop_index("ix_outbox_pending", table_name="outbox")
    op.create_index("ix_outbox_status_next", "outbox", ["status", "next_attempt_at"])
