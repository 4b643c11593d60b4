"""board_mail: each user's mail thread of a board, and the seats' reply-address secrets

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-12 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "board_mail",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("token", sa.String(length=32), nullable=True),
        sa.Column("first_message_id", sa.String(length=250), nullable=True),
        sa.Column("last_message_id", sa.String(length=250), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_board_mail_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_board_mail_user_id_users"),
        sa.PrimaryKeyConstraint("game_id", "user_id", name="pk_board_mail"),
        sa.UniqueConstraint("token", name="uq_board_mail_token"),
    )
    op.create_index("ix_board_mail_user_id", "board_mail", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_board_mail_user_id", table_name="board_mail")
    op.drop_table("board_mail")
