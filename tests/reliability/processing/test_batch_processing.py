"""Messages are processed in batches, one transaction a batch and a savepoint a message:
a failing message is rolled back alone, a batch that cannot commit is redone one message at a
time, and argon2 never runs while the transaction holds SQLite's write lock. A real database,
real MIME parsing, real argon2."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest
from argon2 import PasswordHasher
from sqlalchemy import event, func, select
from sqlalchemy.engine import make_url

import pbmserv.runtime.processor as processor
from pbmserv.db.engine import StoreIntent, session_factory, store_intent
from pbmserv.db.models import InboxMessage, OutboxMessage, User
from pbmserv.inbound.inbox import store_message
from pbmserv.runtime.processor import process_batch
from tests.support import PEOPLE, RunningServer, make_mail, smtp_send

pytestmark = pytest.mark.db


def store(engine, settings, sender: str, subject: str) -> None:  # type: ignore[no-untyped-def]
    raw = make_mail(sender, subject).as_bytes()
    store_message(session_factory(engine), settings, raw, sender)


def statuses(engine) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = select(InboxMessage.status, InboxMessage.attempts).order_by(InboxMessage.id)
        return [tuple(row) for row in conn.execute(query).all()]


def replies_to(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = select(OutboxMessage.recipient).order_by(OutboxMessage.id)
        return list(conn.scalars(query))


def test_a_failing_message_in_a_batch_is_rolled_back_alone(  # type: ignore[no-untyped-def]
    engine, settings, poisoned_help
) -> None:
    store(engine, settings, "ann@example.org", "signup ann secret1")
    store(engine, settings, "bad@example.org", "help poison")
    store(engine, settings, "bob@example.org", "signup bob secret2")
    taken = 0
    while count := process_batch(session_factory(engine), settings):
        taken += count
    assert taken == 3  # the failed message waits before its next try
    assert statuses(engine) == [("done", 0), ("pending", 1), ("done", 0)]
    # The two good messages were answered and their effects kept; the failed one queued no
    # mail and changed nothing.
    assert replies_to(engine) == ["ann@example.org", "bob@example.org"]
    with engine.connect() as conn:
        assert sorted(conn.scalars(select(User.userid).where(PEOPLE))) == ["ann", "bob"]


def test_a_batch_that_cannot_commit_is_redone_one_message_at_a_time(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    real = processor.insert_outbox

    def refuse_mail_of_several_messages(session, rows):  # type: ignore[no-untyped-def]
        if len({row["inbox_id"] for row in rows}) > 1:
            raise RuntimeError("the batch's insert failed")
        return real(session, rows)

    monkeypatch.setattr(processor, "insert_outbox", refuse_mail_of_several_messages)
    for name in ("ann", "bob", "cat"):
        store(engine, settings, f"{name}@example.org", f"signup {name} secret1")
    assert process_batch(session_factory(engine), settings) == 3
    assert statuses(engine) == [("done", 0)] * 3
    assert replies_to(engine) == ["ann@example.org", "bob@example.org", "cat@example.org"]
    with engine.connect() as conn:  # each sign-up happened exactly once
        assert conn.scalar(select(func.count()).where(PEOPLE)) == 3


def test_argon2_never_runs_while_the_write_lock_is_held(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("only SQLite has one write lock for the whole database")
    path = make_url(settings.db_url).database
    for name in ("ann", "bob"):
        store(engine, settings, f"{name}@example.org", f"signup {name} secret1")
    process_batch(session_factory(engine), settings)
    store(engine, settings, "ann@example.org", "chameleon challenge ann bob")
    process_batch(session_factory(engine), settings)

    locked_during: list[bool] = []
    real_verify = PasswordHasher.verify

    def verify_and_probe(self, hash_, password):  # type: ignore[no-untyped-def]
        probe = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            locked_during.append(False)
        except sqlite3.OperationalError:  # "database is locked": a writer holds it
            locked_during.append(True)
        finally:
            probe.close()
        return real_verify(self, hash_, password)

    monkeypatch.setattr(PasswordHasher, "verify", verify_and_probe)
    # New hashes for both, so that no earlier check is remembered.
    store(engine, settings, "ann@example.org", "password ann secret1 another1")
    store(engine, settings, "bob@example.org", "password bob wrong-one another2")
    process_batch(session_factory(engine), settings)
    store(engine, settings, "ann@example.org", "chameleon move 1 ann another1 a1x")
    store(engine, settings, "bob@example.org", "chameleon board 1 bob wrong-two")
    process_batch(session_factory(engine), settings)
    assert locked_during and not any(locked_during), locked_during
    with engine.connect() as conn:
        summaries = list(conn.scalars(select(InboxMessage.summary).order_by(InboxMessage.id)))
    assert "password ann" in summaries[3] and "error" in summaries[4]
    assert "move board=1" in summaries[5] and "error" in summaries[6]


def test_messages_waiting_together_are_processed_in_one_transaction(  # type: ignore[no-untyped-def]
    engine, settings
) -> None:
    for k in range(12):
        store(engine, settings, f"p{k}@example.org", f"signup player{k} secret{k}")
    commits = []
    event.listen(engine, "commit", lambda _conn: commits.append(1))
    assert process_batch(session_factory(engine), settings) == 12
    assert len(commits) == 1
    assert statuses(engine) == [("done", 0)] * 12
    assert len(replies_to(engine)) == 12


def test_a_batch_lets_a_waiting_writer_in_and_leaves_the_rest_pending(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    """SQLite has one write lock: a batch that has held it long enough commits what it has
    done when the listener waits to store, and the messages it had not reached are taken by
    the next batch, each processed exactly once."""
    for number in range(5):
        store(engine, settings, f"user{number}@example.org", f"help {number}")
    monkeypatch.setattr(processor, "YIELD_AFTER_SECONDS", 0.0)
    asked = []

    def listener_waits() -> bool:
        asked.append(True)
        return True

    factory = session_factory(engine)
    assert process_batch(factory, settings, should_yield=listener_waits) == 1
    assert [status for status, _ in statuses(engine)] == ["done"] + ["pending"] * 4
    assert asked, "the batch asked whether a writer waits"
    # No writer waiting: the next batch takes all the rest.
    assert process_batch(factory, settings, should_yield=lambda: False) == 4
    assert [status for status, _ in statuses(engine)] == ["done"] * 5
    assert sorted(replies_to(engine)) == [f"user{n}@example.org" for n in range(5)]


def test_a_batch_makes_way_for_a_store_waiting_in_another_process(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    """The listener and the processing run in different processes (runtime.child_processes): a
    store says through the lock file beside the database that it waits, and the batch sees it."""
    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL's writers do not wait for each other")
    for number in range(3):
        store(engine, settings, f"user{number}@example.org", f"help {number}")
    monkeypatch.setattr(processor, "YIELD_AFTER_SECONDS", 0.0)
    # Its own open file of the lock: as another process would have.
    listener = StoreIntent(f"{engine.url.database}.storing")
    batch_side = store_intent(engine)
    assert batch_side is not None
    factory = session_factory(engine)
    with listener.announced():
        assert process_batch(factory, settings, should_yield=batch_side.waiting) == 1
    assert process_batch(factory, settings, should_yield=batch_side.waiting) == 2
    assert [status for status, _ in statuses(engine)] == ["done"] * 3


def test_a_batch_says_whether_due_messages_may_be_left(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    """The worker begins the next batch at once only when one may find work: after a full
    claim or a batch that made way; after a batch that took every due message it waits to be
    woken (no empty transaction a batch, taking SQLite's write lock for nothing)."""
    factory = session_factory(engine)
    for number in range(3):
        store(engine, settings, f"user{number}@example.org", f"help {number}")
    assert processor.process_next(factory, settings, limit=2) == processor.Processed(2, True)
    assert processor.process_next(factory, settings, limit=2) == processor.Processed(1, False)
    assert processor.process_next(factory, settings, limit=2) == processor.Processed(0, False)
    for number in range(2):
        store(engine, settings, f"late{number}@example.org", f"help {number}")
    monkeypatch.setattr(processor, "YIELD_AFTER_SECONDS", 0.0)
    made_way = processor.process_next(factory, settings, limit=5, should_yield=lambda: True)
    assert made_way == processor.Processed(1, True)
    assert processor.process_next(factory, settings, limit=5) == processor.Processed(1, False)


def test_messages_that_arrive_together_share_one_batch(settings, sink, engine) -> None:  # type: ignore[no-untyped-def]
    """Woken from idle, processing waits processing_gather_seconds for more before it takes
    what came (issue 52): three messages sent within it are one batch, one transaction (its
    time is each one's processed_at), and each is answered."""
    gathered = replace(settings, processing_gather_seconds=0.5, poll_seconds=30)
    server = RunningServer(gathered).start()
    try:
        for name in ("ann", "bob", "cat"):
            assert smtp_send(server.port, make_mail(f"{name}@example.org", "help"))[0] == 250
        sink.wait_count(3)
    finally:
        server.stop()
    with engine.connect() as conn:
        times = list(conn.scalars(select(InboxMessage.processed_at).order_by(InboxMessage.id)))
    assert len(times) == 3 and len(set(times)) == 1, times
