"""held_requests: each request waiting for an address's owner has its own code (issue 48: a
confirmation ran every message held in the address's name, and every other user's move to it)

What waited under the old rule is dropped, not carried over: the codes already mailed were one
per address, and which request such a reply meant cannot be told. Held messages stay held and
expire as before (their senders may send them again); a waiting ``email`` is called off, and an
address a user added that was never confirmed is taken off their list (they may ask again).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-22 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "held_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_held_requests_user_id_users"),
        sa.PrimaryKeyConstraint("id", name="pk_held_requests"),
        sa.UniqueConstraint("code", name="uq_held_requests_code"),
    )
    op.create_index("ix_held_requests_address", "held_requests", ["address"])
    op.execute("UPDATE addresses SET code = NULL WHERE code IS NOT NULL")
    op.execute("UPDATE users SET pending_email = NULL WHERE pending_email IS NOT NULL")
    op.execute(
        "DELETE FROM user_addresses WHERE address NOT IN"
        " (SELECT address FROM addresses WHERE confirmed_at IS NOT NULL)"
    )


def downgrade() -> None:
    op.drop_index("ix_held_requests_address", table_name="held_requests")
    op.drop_table("held_requests")
