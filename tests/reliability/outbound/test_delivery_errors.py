"""One bad message never holds up its batch: each is judged alone, none is retried forever.

Non-ASCII recipients go out with SMTPUTF8 when the relay offers it, else fail for good; the
spool takes them as they are. Real SMTP relays on 127.0.0.1 and the real database throughout.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
from datetime import timedelta

import pytest
from aiosmtpd.smtp import SMTP
from sqlalchemy import Engine, select, update

from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import OutboxMessage
from pbmserv.db.times import utcnow
from pbmserv.outbound.delivery import deliver_due
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, enqueue, rows

pytestmark = pytest.mark.db

JUERGEN = "jürgen@example.test"
BATCH = ["alice@example.org", JUERGEN, "bob@example.org"]


def deliver_once(engine: Engine, settings, **kw) -> int:  # type: ignore[no-untyped-def]
    return asyncio.run(deliver_due(session_factory(engine), settings, **kw))


def test_a_relay_with_smtputf8_takes_a_non_ascii_recipient(db_url: str, engine: Engine) -> None:
    with Relay(ScriptedHandler(), smtputf8=True) as relay:
        settings = delivery_settings(db_url, relay)
        enqueue(engine, settings, BATCH)
        deliver_once(engine, settings)
        received = relay.messages
    assert [m.to for m in received] == BATCH
    assert [m.message["Subject"] for m in received] == ["message 1", "message 2", "message 3"]
    assert [row.status for row in rows(engine)] == ["sent"] * 3


def test_without_smtputf8_only_the_non_ascii_recipient_fails_for_good(
    db_url: str, engine: Engine
) -> None:
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(db_url, relay)
        enqueue(engine, settings, BATCH)
        deliver_once(engine, settings)
        received = [m.to for m in relay.messages]
        # Failed for good: no run, however much later, tries it again.
        assert deliver_once(engine, settings, clock=lambda: utcnow() + timedelta(days=1)) == 0
    assert received == ["alice@example.org", "bob@example.org"]
    alice, juergen, bob = rows(engine)
    assert (alice.status, bob.status) == ("sent", "sent")
    assert (juergen.status, juergen.attempts) == ("failed", 1)
    assert "SMTPUTF8" in (juergen.last_error or "") and JUERGEN in (juergen.last_error or "")


def test_the_spool_takes_a_non_ascii_recipient(db_url: str, engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = delivery_settings(db_url, None, spool=tmp_path / "spool")
    enqueue(engine, settings, BATCH)
    assert deliver_once(engine, settings) == 3
    files = sorted((tmp_path / "spool" / "new").glob("*.eml"))
    spooled = [email.message_from_bytes(f.read_bytes(), policy=email.policy.default) for f in files]
    assert [m["Subject"] for m in spooled] == ["message 1", "message 2", "message 3"]
    assert [row.status for row in rows(engine)] == ["sent"] * 3


def test_an_address_that_cannot_be_sent_fails_alone(db_url: str, engine: Engine) -> None:
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(db_url, relay)
        enqueue(engine, settings, ["alice@example.org"])
        # queue() refuses such an address now (outbound.headers.safe_address); a row from an
        # older server, or written by hand, must still fail alone.
        with transaction(session_factory(engine)) as session:
            first = session.scalar(select(OutboxMessage))
            session.add(
                OutboxMessage(
                    message_id="<bad@test.example>",
                    recipient="no body@example.org",
                    kind="notice",
                    raw=first.raw,
                    status="pending",
                    attempts=0,
                    next_attempt_at=first.next_attempt_at,
                    created_at=first.created_at,
                )
            )
        enqueue(engine, settings, ["bob@example.org"])
        deliver_once(engine, settings)
        received = [m.to for m in relay.messages]
    assert received == ["alice@example.org", "bob@example.org"]
    statuses = [(row.status, row.attempts) for row in rows(engine)]
    assert statuses == [("sent", 1), ("failed", 1), ("sent", 1)]
    assert "ValueError" in (rows(engine)[1].last_error or "")


def test_a_refusal_for_now_is_retried_then_given_up_after_days(db_url: str, engine: Engine) -> None:
    def refuse(number: int, server: SMTP) -> str:
        return "451 4.7.1 greylisted, try later"

    with Relay(ScriptedHandler(script=refuse)) as relay:
        settings = delivery_settings(db_url, relay)
        enqueue(engine, settings, ["old@example.org", "new@example.org"])
        with transaction(session_factory(engine)) as session:
            session.execute(
                update(OutboxMessage)
                .where(OutboxMessage.recipient == "old@example.org")
                .values(created_at=utcnow() - timedelta(days=6))
            )
        assert deliver_once(engine, settings) == 2
    old, new = rows(engine)
    assert (old.status, old.attempts) == ("failed", 1)
    assert "gave up after 5 days" in (old.last_error or "") and "451" in (old.last_error or "")
    assert (new.status, new.attempts) == ("pending", 1) and "451" in (new.last_error or "")
