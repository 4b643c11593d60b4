"""Wake-ups through PostgreSQL (db.wakes, issue 52): a transaction that stores a message or
queues mail wakes the listening processes of other servers when it commits, and only then; a
server's own notices are left to its pipes. On SQLite nothing is sent (and nothing listens)."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import Engine, event, text

from pbmserv.db.engine import is_postgres, session_factory, transaction
from pbmserv.db.wakes import INBOX, OUTBOX, DatabaseWakes, announce, origin, set_origin

pytestmark = pytest.mark.db


class Heard:
    """What a listener was called for, by channel, after it first listened."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {INBOX: 0, OUTBOX: 0}
        self.changed = threading.Condition()

    def on(self, channel: str) -> object:
        def wake() -> None:
            with self.changed:
                self.calls[channel] += 1
                self.changed.notify_all()

        return wake

    def wait_for(self, channel: str, count: int, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        with self.changed:
            while self.calls[channel] < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True


def listening(engine: Engine, heard: Heard) -> DatabaseWakes:
    wakes = DatabaseWakes(engine, {INBOX: heard.on(INBOX), OUTBOX: heard.on(OUTBOX)})
    wakes.start()
    # Called once on listening (a notice sent before then is lost, so it looks anyway).
    assert heard.wait_for(INBOX, 1, 10) and heard.wait_for(OUTBOX, 1, 10)
    return wakes


def test_a_commit_wakes_another_servers_listener_and_a_rollback_does_not(engine: Engine) -> None:
    if not is_postgres(engine):
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    heard = Heard()
    wakes = listening(engine, heard)
    factory = session_factory(engine)
    mine = origin()
    try:
        set_origin(999_999)  # another server's transaction
        with pytest.raises(RuntimeError), transaction(factory) as session:
            announce(session, OUTBOX)
            raise RuntimeError("rolled back")
        with transaction(factory) as session:
            announce(session, INBOX)
            announce(session, INBOX)  # one notice a transaction however often it is said
        assert heard.wait_for(INBOX, 2, 10)
        assert not heard.wait_for(OUTBOX, 2, 1.5)  # the rolled-back one never came
        with transaction(factory) as session:
            announce(session, OUTBOX)
        assert heard.wait_for(OUTBOX, 2, 10)
        time.sleep(0.5)
        assert heard.calls == {INBOX: 2, OUTBOX: 2}
        # Another schema's (another install sharing the PostgreSQL database): not for it.
        with engine.begin() as conn:
            conn.execute(
                text("SELECT pg_notify(:channel, :notice)"),
                {"channel": INBOX, "notice": "pbmserv_elsewhere|otherhost:1"},
            )
        assert not heard.wait_for(INBOX, 3, 1.5)
        # Its own server's notices: the pipes woke it already.
        set_origin(int(mine.rpartition(":")[2]))
        with transaction(factory) as session:
            announce(session, INBOX)
        assert not heard.wait_for(INBOX, 3, 1.5)
    finally:
        set_origin(int(mine.rpartition(":")[2]))
        wakes.stop()
    assert not wakes._thread.is_alive()


def test_nothing_is_said_on_sqlite(engine: Engine) -> None:
    if is_postgres(engine):
        pytest.skip("SQLite's case")
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with transaction(session_factory(engine)) as session:
        announce(session, INBOX)
        announce(session.connection(), OUTBOX)
    assert not [s for s in statements if "notify" in s.lower()]


def test_an_unknown_channel_is_refused(engine: Engine) -> None:
    with pytest.raises(ValueError):
        DatabaseWakes(engine, {"pbmserv_elsewhere": lambda: None})
