"""The web view's own engine: a reader that takes no lock the processing of moves waits for.

The server's writing engines begin every SQLite transaction with ``BEGIN IMMEDIATE``, the write
lock, so that two writers never deadlock. A page must not take it: ``make_engine(read_only=True)``
begins a plain (deferred) transaction that only reads, which in SQLite's WAL mode (the
server's databases are in it) sees one snapshot and never blocks the writer. ``query_only``
makes any write an error. On PostgreSQL a transaction is ``READ ONLY`` and ``REPEATABLE READ``:
one snapshot for all of a page's queries, and no row lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.db.engine import make_engine


def read_engine(url: str) -> Engine:
    """An engine for ``url`` whose transactions read one snapshot and take no write lock."""
    return make_engine(url, read_only=True)


def read_sessions(engine: Engine) -> sessionmaker[Session]:
    """Sessions that only read: nothing is flushed, and each ends by rolling back."""
    return sessionmaker(engine, autoflush=False, expire_on_commit=False)


@contextmanager
def reading(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One read transaction (begun at the first query, rolled back at the end)."""
    with factory() as session:
        yield session
