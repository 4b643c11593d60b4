"""Engines and sessions, with the per-engine settings that make concurrent writers safe."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

#: Execution option of a connection that only reads (on SQLite: no write lock taken).
READ_ONLY = "pbmserv_read_only"


def make_engine(url: str) -> Engine:
    """An engine for ``url``. SQLite gets WAL, a busy timeout and BEGIN IMMEDIATE."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            # Let SQLAlchemy emit BEGIN itself so savepoints work, and take the write lock
            # at BEGIN so two writers never deadlock upgrading a read lock.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
            # A reader (see read_only) needs no write lock: WAL gives it a snapshot.
            reading = conn.get_execution_options().get(READ_ONLY, False)
            conn.exec_driver_sql("BEGIN" if reading else "BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True)


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any exception."""
    with factory() as session, session.begin():
        yield session


@contextmanager
def read_only(engine: Engine) -> Iterator[Connection]:
    """A transaction that only reads. On SQLite it takes no write lock, so it never waits
    for a writer nor holds one up (slow work such as argon2 may run inside it)."""
    with engine.connect() as conn:
        conn = conn.execution_options(**{READ_ONLY: True})
        with conn.begin():
            yield conn
