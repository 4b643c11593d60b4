"""users: robots, the computer players of every game (``robot_level``), and the three of them

A robot is a user that takes no commands by mail and is mailed nothing: its address is in the
``.invalid`` domain (RFC 2606), its password hash matches no password. Its id is ``robotN``
for level N, or ``pbmrobotN`` where a person already holds that id.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28 10:00:00
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

LEVELS = (1, 2, 3)
NAMES = {1: "quick and weak", 2: "steady", 3: "strongest, slowest"}


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("robot_level", sa.Integer(), nullable=True))
    users = sa.table(
        "users",
        sa.column("id", sa.Integer),
        sa.column("userid", sa.String),
        sa.column("display_id", sa.String),
        sa.column("full_name", sa.String),
        sa.column("email", sa.String),
        sa.column("password_hash", sa.String),
        sa.column("disabled", sa.Boolean),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("mail_format", sa.String),
        sa.column("digest", sa.String),
        sa.column("robot_level", sa.Integer),
    )
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        # Rows written with their ids (an import) leave the id sequence behind them.
        connection.execute(
            sa.text(
                "SELECT setval(pg_get_serial_sequence('users', 'id'), "
                "(SELECT COALESCE(MAX(id), 0) + 1 FROM users), false)"
            )
        )
    taken = {row[0] for row in connection.execute(sa.select(users.c.userid))}
    now = datetime.now(UTC)
    for level in LEVELS:
        userid = f"robot{level}" if f"robot{level}" not in taken else f"pbmrobot{level}"
        connection.execute(
            users.insert().values(
                userid=userid,
                display_id=userid,
                full_name=f"pbmserv robot, level {level} ({NAMES[level]})",
                email=f"{userid}@robots.invalid",
                password_hash="!robot: takes no commands by mail",
                disabled=False,
                created_at=now,
                mail_format="text",
                digest="off",
                robot_level=level,
            )
        )


def downgrade() -> None:
    op.execute("DELETE FROM users WHERE robot_level IS NOT NULL")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("robot_level")
