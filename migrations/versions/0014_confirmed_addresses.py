"""addresses (confirmed before they get mail), users.pending_email, text_mail_counts

Existing addresses (registered and added) migrate as confirmed: they have been mailed already.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 20:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "addresses",
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("code", sa.String(length=32), nullable=True),
        sa.Column("code_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("address", name="pk_addresses"),
        sa.UniqueConstraint("code", name="uq_addresses_code"),
    )
    op.create_table(
        "text_mail_counts",
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("address", "day", name="pk_text_mail_counts"),
    )
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("pending_email", sa.String(length=320), nullable=True))
    op.execute(
        "INSERT INTO addresses (address, confirmed_at, created_at)"
        " SELECT DISTINCT lower(email), CURRENT_TIMESTAMP, CURRENT_TIMESTAMP FROM users"
        " WHERE email <> ''"
    )
    op.execute(
        "INSERT INTO addresses (address, confirmed_at, created_at)"
        " SELECT address, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP FROM user_addresses"
        " WHERE address NOT IN (SELECT address FROM addresses)"
    )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("pending_email")
    op.drop_table("text_mail_counts")
    op.drop_table("addresses")
