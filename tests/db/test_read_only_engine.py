"""A read-only engine (the web view's) reads while a writer holds SQLite's write lock, and
cannot write on either database."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from pbmserv.db.engine import make_engine

pytestmark = pytest.mark.db


def test_a_reader_reads_beside_a_writer_and_cannot_write(db_url: str, engine: Engine) -> None:
    reader = make_engine(db_url, read_only=True)
    try:
        with engine.begin() as writer:
            # The writer holds its transaction (on SQLite: the write lock) meanwhile.
            writer.execute(text("UPDATE users SET full_name = full_name WHERE id = -1"))
            with reader.connect() as connection:
                assert connection.execute(text("SELECT count(*) FROM games")).scalar() == 0
        with reader.connect() as connection, pytest.raises(DBAPIError):
            connection.execute(text("DELETE FROM games"))
    finally:
        reader.dispose()
