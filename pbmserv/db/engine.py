"""Engines and sessions, with the per-engine settings that make concurrent writers safe."""

from __future__ import annotations

import fcntl
import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str, *, durable: bool = True) -> Engine:
    """An engine for ``url``. SQLite gets WAL, a busy timeout and BEGIN IMMEDIATE.

    ``durable=False``: a commit returns before it is on disk (SQLite ``synchronous=NORMAL``,
    PostgreSQL ``synchronous_commit=off``); a power cut may undo the last ones, never corrupt
    the database. Only for writes that may be lost so: delivery's claims and "sent" marks (a
    mail whose mark is lost is sent again, as after a kill).
    """
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection, _record) -> None:
            # Let SQLAlchemy emit BEGIN itself so savepoints work, and take the write lock
            # at BEGIN so two writers never deadlock upgrading a read lock.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            if not durable:
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    if not durable:  # added to the URL's own options (a search_path, say), not in their place
        parsed = make_url(url)
        options = f"{parsed.query.get('options', '')} -c synchronous_commit=off".strip()
        return create_engine(parsed.update_query_dict({"options": options}), pool_pre_ping=True)
    return create_engine(url, pool_pre_ping=True)


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


class SqliteWriteLock:
    """The turn of one writer to a SQLite database file: a thread lock inside this process,
    and a file lock (``DATABASE.lock``) across processes (`serve --workers`, the admin shell).

    SQLite lets one writer in at a time; a writer that finds the lock taken sleeps in its
    busy handler, in steps of up to 100 ms, however soon the lock is freed. Queued here
    instead, writers take turns without those sleeps: the kernel wakes the next at once.
    """

    def __init__(self, path: str | None) -> None:
        self._thread_lock = threading.RLock()
        self._path = path
        self._fd: int | None = None
        self._depth = 0

    def _file(self) -> int | None:
        if self._fd is None and self._path:
            try:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:  # a read-only folder: SQLite's own lock still keeps writes safe
                self._path = None
        return self._fd

    def __enter__(self) -> SqliteWriteLock:
        self._thread_lock.acquire()
        try:
            if self._depth == 0 and (fd := self._file()) is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth += 1
        return self

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)

    def __exit__(self, *exc_info: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()


_WRITE_LOCKS: weakref.WeakKeyDictionary[Engine, SqliteWriteLock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _write_lock(engine: Engine) -> SqliteWriteLock | None:
    """The lock a SQLite engine's writers queue on (None for other databases)."""
    if engine.dialect.name != "sqlite":
        return None
    with _LOCKS_LOCK:
        lock = _WRITE_LOCKS.get(engine)
        if lock is None:
            database = engine.url.database
            in_memory = not database or database == ":memory:" or database.startswith("file:")
            lock = SqliteWriteLock(None if in_memory else f"{database}.lock")
            _WRITE_LOCKS[engine] = lock
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
