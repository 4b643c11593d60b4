"""users.mail_format and users.digest: board mail as text or with a picture, and daily digests

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-12 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("mail_format", sa.String(length=8), nullable=False, server_default="html")
        )
        batch.add_column(
            sa.Column("digest", sa.String(length=8), nullable=False, server_default="off")
        )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("digest")
        batch.drop_column("mail_format")
