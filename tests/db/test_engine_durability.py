"""A delivery process's engine commits without waiting for the disk (durable=False): SQLite
synchronous=NORMAL, PostgreSQL synchronous_commit=off, on top of what the URL says (its
search_path included); every other engine waits for the disk."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text

from pbmserv.db.engine import make_engine
from pbmserv.db.models import InboxMessage

pytestmark = pytest.mark.db


def setting(engine: Engine) -> str:
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            return str(conn.exec_driver_sql("PRAGMA synchronous").scalar())
        return str(conn.exec_driver_sql("SHOW synchronous_commit").scalar())


def test_only_the_delivery_engine_commits_without_waiting_for_the_disk(
    db_url: str, engine: Engine
) -> None:
    quick = make_engine(db_url, durable=False)
    try:
        durable, not_durable = setting(make_engine(db_url)), setting(quick)
        if engine.dialect.name == "sqlite":
            assert (durable, not_durable) == ("2", "1")  # FULL, NORMAL
        else:
            assert (durable, not_durable) == ("on", "off")
        # The same database, tables and all (a PostgreSQL URL's search_path kept).
        with quick.connect() as conn:
            tables = conn.execute(text(f"SELECT count(*) FROM {InboxMessage.__tablename__}"))
            assert tables.scalar() == 0
    finally:
        quick.dispose()
