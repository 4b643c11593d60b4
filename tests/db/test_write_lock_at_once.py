"""A short write done at once where it needs no wait (issue 52): delivery writes its "sent"
marks on its event loop when SQLite's write lock is free, and in a thread when another
writer (another process) has it, or on PostgreSQL. A real database, a real file lock."""

from __future__ import annotations

import fcntl
import os
import threading

import pytest
from sqlalchemy import Engine, text

from pbmserv.db.engine import core_transaction, core_transaction_if_free, is_postgres

pytestmark = pytest.mark.db


def servers(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(text("SELECT count(*) FROM heartbeats")) or 0)


def note(conn) -> None:  # type: ignore[no-untyped-def]
    conn.execute(
        text(
            "INSERT INTO heartbeats (server, role, slot, pid, state, seen_at, every_seconds,"
            " restarts) VALUES ('s', 'r', 0, 1, 'up', CURRENT_TIMESTAMP, 1, 0)"
        )
    )


def test_a_free_lock_writes_at_once_and_a_held_one_leaves_it_to_wait(engine: Engine) -> None:
    if is_postgres(engine):
        with core_transaction_if_free(engine) as conn:
            assert conn is None  # a network round trip: never on the loop
        return
    with core_transaction_if_free(engine) as conn:
        assert conn is not None
        note(conn)
    assert servers(engine) == 1
    # Another process's writer has the turn (its flock on DATABASE.lock): nothing is done.
    database = engine.url.database
    assert database is not None
    other = os.open(f"{database}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        with core_transaction_if_free(engine) as conn:
            assert conn is None
    finally:
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
    # Given back whole: a writer that waits gets its turn, and so does the next at once.
    with core_transaction(engine) as conn:
        conn.execute(text("DELETE FROM heartbeats"))
    with core_transaction_if_free(engine) as conn:
        assert conn is not None
        note(conn)
    assert servers(engine) == 1


def test_a_failed_write_at_once_is_rolled_back_and_the_turn_given_back(engine: Engine) -> None:
    if is_postgres(engine):
        pytest.skip("SQLite's write lock")
    with pytest.raises(RuntimeError), core_transaction_if_free(engine) as conn:
        assert conn is not None
        note(conn)
        raise RuntimeError("a bug")
    assert servers(engine) == 0

    def write_elsewhere() -> None:  # another thread: it would wait for ever for a kept turn
        with core_transaction(engine) as conn:
            note(conn)

    writer = threading.Thread(target=write_elsewhere, daemon=True)
    writer.start()
    writer.join(10)
    assert not writer.is_alive()
    assert servers(engine) == 1
