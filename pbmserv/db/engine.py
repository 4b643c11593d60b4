"""Engines and sessions, with the per-engine settings that make concurrent writers safe."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker


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
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True)


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


_WRITE_LOCKS: weakref.WeakKeyDictionary[Engine, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _write_lock(engine: Engine) -> threading.RLock | None:
    """The lock a SQLite engine's writers queue on inside this process (None elsewhere).

    SQLite lets one writer in at a time; a writer that finds the lock taken sleeps in its
    busy handler, in steps of up to 100 ms, whenever the lock is freed meanwhile. Queued on a
    lock of our own, the listener, the processor and delivery take turns without those sleeps.
    Other processes (the admin shell) still meet the busy handler, as before.
    """
    if engine.dialect.name != "sqlite":
        return None
    with _LOCKS_LOCK:
        lock = _WRITE_LOCKS.get(engine)
        if lock is None:
            lock = _WRITE_LOCKS[engine] = threading.RLock()
        return lock


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any exception."""
    lock = _write_lock(factory.kw["bind"])
    with lock if lock is not None else nullcontext(), factory() as session, session.begin():
        yield session


@contextmanager
def core_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction of plain (Core) statements, queued on the same write lock as
    :func:`transaction`: for hot bookkeeping that needs no ORM session."""
    lock = _write_lock(engine)
    with lock if lock is not None else nullcontext(), engine.begin() as connection:
        yield connection
