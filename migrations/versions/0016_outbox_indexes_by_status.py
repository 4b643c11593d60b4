"""outbox: partial indexes for sent and failed mail instead of (status, created_at); auth
failures by time

With (status, created_at) SQLite, lacking statistics, served the delivery claim
(status = 'pending' ... ORDER BY next_attempt_at, id) from it and sorted every pending row;
indexes that hold only sent or only failed mail cannot serve the claim, which then always
reads ix_outbox_pending in order and stops at its batch. The latest failed login is looked
at once a batch of messages (none lately: no per-user count is needed).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 03:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

SENT = sa.text("status = 'sent'")
FAILED = sa.text("status = 'failed'")


def upgrade() -> None:
    op.drop_index("ix_outbox_status_created", table_name="outbox")
    op.create_index(
        "ix_outbox_sent_created",
        "outbox",
        ["created_at"],
        sqlite_where=SENT,
        postgresql_where=SENT,
    )
    op.create_index(
        "ix_outbox_failed", "outbox", ["id"], sqlite_where=FAILED, postgresql_where=FAILED
    )
    op.create_index("ix_auth_failures_at", "auth_failures", ["failed_at"])


def downgrade() -> None:
    op.drop_index("ix_auth_failures_at", table_name="auth_failures")
    op.drop_index("ix_outbox_failed", table_name="outbox")
    op.drop_index("ix_outbox_sent_created", table_name="outbox")
    op.create_index("ix_outbox_status_created", "outbox", ["status", "created_at"])
