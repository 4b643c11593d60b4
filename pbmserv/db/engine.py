"""Engines and sessions, with the per-engine settings that make concurrent writers safe."""

from __future__ import annotations

import fcntl
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.private_files import create_private_file


def make_engine(url: str, *, durable: bool = True, read_only: bool = False) -> Engine:
    """An engine for ``url``. SQLite gets WAL, a busy timeout and BEGIN IMMEDIATE.

    ``durable=False``: a commit returns before it is on disk (SQLite ``synchronous=NORMAL``,
    PostgreSQL ``synchronous_commit=off``); a power cut may undo the last ones, never corrupt
    the database. Only for writes that may be lost so: delivery's claims and "sent" marks (a
    mail whose mark is lost is sent again, as after a kill).

    ``read_only=True``: transactions that can only read (SQLite ``query_only`` and a plain
    BEGIN, PostgreSQL ``default_transaction_read_only``): a reader such as the web view never
    takes SQLite's write lock, so it never makes a move wait, and cannot write by mistake.
    """
    if url.startswith("sqlite"):
        _create_private_database_file(url)
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
            if read_only:
                cursor.execute("PRAGMA query_only=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn) -> None:
            # A reader's BEGIN takes no lock until it reads, and then only a snapshot (WAL).
            conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

        return engine
    added = [
        *([] if durable else ["-c synchronous_commit=off"]),
        *(["-c default_transaction_read_only=on"] if read_only else []),
    ]
    # A reader sees one snapshot for all of a transaction's queries.
    isolation = {"isolation_level": "REPEATABLE READ"} if read_only else {}
    target: str | URL = url
    if added:  # added to the URL's own options (a search_path, say), not in their place
        parsed = make_url(url)
        options = " ".join([str(parsed.query.get("options", "")), *added]).strip()
        target = parsed.update_query_dict({"options": options})
    engine = create_engine(target, **isolation)
    _ping_when_idle(engine)
    return engine


#: A pooled connection idle this long is checked before it is used again (the database may
#: have restarted meanwhile); one in steady use is not: a check before every transaction was
#: a round trip each, 95 microseconds of the server's CPU (four or five a move). A restart
#: under way fails one statement, which SQLAlchemy answers by replacing the pool's
#: connections, and the work is retried (a stored message's sender hears 451).
IDLE_PING_SECONDS = 5.0


def _ping_when_idle(engine: Engine) -> None:
    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return  # new, or in use a moment ago
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise DisconnectionError("the connection was lost while it was idle") from error
        if not alive:
            raise DisconnectionError("the connection was lost while it was idle")


def _create_private_database_file(url: str) -> None:
    """A new SQLite database file is the server's alone (0600; SQLite gives its -wal and -shm
    files the same mode): it holds reply tokens and password hashes."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if not path.exists() and path.parent.is_dir():
        create_private_file(path)


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def engine_of(factory: sessionmaker[Session]) -> Engine:
    """The engine behind ``factory``, for work done with plain statements (no ORM session)."""
    bind = factory.kw.get("bind")
    if not isinstance(bind, Engine):
        raise TypeError("the session factory must be bound to an engine")
    return bind


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
        self._take(wait=True)
        return self

    def try_enter(self) -> bool:
        """Take the turn only if it is free at once (False: another writer has it)."""
        return self._take(wait=False)

    def _take(self, wait: bool) -> bool:
        """The thread lock, then the file lock for the outermost turn; without ``wait``,
        False (nothing held) when either is taken."""
        if not self._thread_lock.acquire(blocking=wait):
            return False
        try:
            if self._depth == 0 and (fd := self._file()) is not None:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._thread_lock.release()
            return False
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth += 1
        return True

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
    return _beside_sqlite(engine, _WRITE_LOCKS, SqliteWriteLock, ".lock")


_Beside = TypeVar("_Beside")


def _beside_sqlite(
    engine: Engine,
    kept: weakref.WeakKeyDictionary[Engine, _Beside],
    make: Callable[[str | None], _Beside],
    suffix: str,
) -> _Beside | None:
    """The one ``make(path)`` of a SQLite engine (None for other databases), its path the
    database file's with ``suffix`` (None for a database in memory)."""
    if engine.dialect.name != "sqlite":
        return None
    with _LOCKS_LOCK:
        found = kept.get(engine)
        if found is None:
            database = _database_file(engine)
            found = kept[engine] = make(f"{database}{suffix}" if database else None)
        return found


class StoreIntent:
    """Writers that will want SQLite's write lock at once (the listener's stores) say so here,
    and a long transaction (a processing batch) asks whether any is waiting, to make way.

    Across processes through a lock file (``DATABASE.storing``): a waiting store holds a shared
    lock on it, and ``waiting()`` tries an exclusive one without blocking. flock locks belong to
    an open file, so the asking side opens its own, and one process's stores share one lock
    (held while any of them waits). An in-memory database has no file: a count alone.
    """

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._count = 0
        self._count_lock = threading.Lock()
        self._announce_fd: int | None = None
        self._ask_fd: int | None = None

    def _open(self) -> tuple[int, int] | None:
        if self._path and self._announce_fd is None:
            try:
                self._announce_fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
                self._ask_fd = os.open(self._path, os.O_RDWR)
            except OSError:  # a read-only folder: this process's own count still works
                self._path = None
        if self._announce_fd is None or self._ask_fd is None:
            return None
        return self._announce_fd, self._ask_fd

    @contextmanager
    def announced(self) -> Iterator[None]:
        """While in it, a store is waiting for (or holding) the write lock."""
        with self._count_lock:
            self._count += 1
            if self._count == 1 and (fds := self._open()) is not None:
                fcntl.flock(fds[0], fcntl.LOCK_SH)
        try:
            yield
        finally:
            with self._count_lock:
                self._count -= 1
                if self._count == 0 and (fds := self._open()) is not None:
                    fcntl.flock(fds[0], fcntl.LOCK_UN)

    def waiting(self) -> bool:
        """Is a store waiting, in this process or another?"""
        if self._count:
            return True
        fds = self._open()
        if fds is None:
            return False
        try:
            fcntl.flock(fds[1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fds[1], fcntl.LOCK_UN)
        return False

    def __del__(self) -> None:
        for fd in (self._announce_fd, self._ask_fd):
            if fd is not None:
                os.close(fd)


_STORE_INTENTS: weakref.WeakKeyDictionary[Engine, StoreIntent] = weakref.WeakKeyDictionary()


def store_intent(engine: Engine) -> StoreIntent | None:
    """Where a SQLite engine's stores say they wait for the write lock (None for other
    databases: their writers do not wait for each other)."""
    return _beside_sqlite(engine, _STORE_INTENTS, StoreIntent, ".storing")


def _database_file(engine: Engine) -> str | None:
    database = engine.url.database
    in_memory = not database or database == ":memory:" or database.startswith("file:")
    return None if in_memory else database


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any exception."""
    lock = _write_lock(engine_of(factory))
    with lock if lock is not None else nullcontext(), factory() as session, session.begin():
        yield session


@contextmanager
def core_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction of plain (Core) statements, queued on the same write lock as
    :func:`transaction`: for hot bookkeeping that needs no ORM session."""
    lock = _write_lock(engine)
    with lock if lock is not None else nullcontext(), engine.begin() as connection:
        yield connection


@contextmanager
def core_transaction_if_free(engine: Engine) -> Iterator[Connection | None]:
    """On SQLite, a :func:`core_transaction` begun only if no other writer has the write lock;
    None when one has (nothing is done), and on other databases (whose writes wait on the
    network). For a short write where waiting would hold up other work (an event loop), which
    goes to a thread when it would have to wait."""
    lock = _write_lock(engine)
    if lock is None or not lock.try_enter():
        yield None
        return
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        lock.__exit__(None, None, None)
