"""A message whose processing fails is retried a bounded number of times, then quarantined;
it never holds up the messages behind it. Real SMTP in and out, a real database."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from pbmserv.db.models import InboxMessage
from pbmserv.runtime.processor import MAX_ATTEMPTS
from tests.support import Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

# Addresses the listener accepts but that no header can safely carry: the email package
# raised IndexError and ValueError building a reply to them, forever.
UNANSWERABLE = ["=?utf-8?q??=@x.test", "=?utf-8?b?YQ0KWC1FdmlsOiAx?=@ex.test"]


def raw_from(address: str, subject: str) -> bytes:
    return (
        f"From: {address}\r\nTo: pbmserv@localhost\r\nSubject: {subject}\r\n"
        f"Message-ID: <{time.monotonic_ns()}@test.example>\r\n\r\n\r\n"
    ).encode()


def test_good_mail_interleaved_with_poison_is_all_answered_and_poison_quarantined(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, poisoned_help
) -> None:
    good = [f"good{k}@example.org" for k in range(8)]
    poison = [f"poison{k}@example.org" for k in range(3)]
    for k, address in enumerate(good):
        if k < len(poison):
            assert smtp_send(server.port, make_mail(poison[k], "help poison"))[0] == 250
        for unanswerable in UNANSWERABLE if k == 1 else []:
            assert (
                smtp_send(server.port, raw_from(unanswerable, "help"), mail_from="x@x.test")[0]
                == 250
            )
        assert smtp_send(server.port, make_mail(address, "help"))[0] == 250
    # Every good message is answered while the poison still waits for its next try.
    replies = sink.wait_for(lambda m: {r.to for r in m} >= set(good), timeout=20)
    assert {r.to for r in replies} >= set(good)
    settle(engine, timeout=40)
    with engine.connect() as conn:
        rows = conn.execute(
            select(InboxMessage.status, InboxMessage.attempts, InboxMessage.error).order_by(
                InboxMessage.id
            )
        ).all()
    failed = [row for row in rows if row.status == "failed"]
    assert len(failed) == len(poison)
    assert all(row.attempts == MAX_ATTEMPTS and "a bug in a handler" in row.error for row in failed)
    assert sum(row.status == "done" for row in rows) == len(good) + len(UNANSWERABLE)
    # The poison senders get one apology each (queued just after the quarantine is
    # committed); the unanswerable addresses get nothing.
    sorry = "pbmserv could not process your message"
    sink.wait_for(lambda m: len([r for r in m if r.subject == sorry]) >= len(poison))
    settle(engine)
    apologies = [r for r in sink.messages if r.subject == sorry]
    assert sorted(r.to for r in apologies) == sorted(poison)
    assert not [r for r in sink.messages if "x.test" in r.to]
    assert len(sink.messages) == len(good) + len(poison)


def test_an_unanswerable_sender_whose_message_fails_is_quarantined_without_a_loop(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, poisoned_help
) -> None:
    for address in UNANSWERABLE:
        raw = raw_from(address, "help poison")
        assert smtp_send(server.port, raw, mail_from="x@x.test")[0] == 250
    assert smtp_send(server.port, make_mail("later@example.org", "help"))[0] == 250
    sink.wait_for(lambda m: any(r.to == "later@example.org" for r in m))
    settle(engine, timeout=40)
    with engine.connect() as conn:
        rows = conn.execute(select(InboxMessage.status, InboxMessage.attempts)).all()
    assert sorted(rows) == sorted([("failed", MAX_ATTEMPTS)] * 2 + [("done", 0)])
    assert [r.to for r in sink.messages] == ["later@example.org"]


def test_control_characters_in_ids_and_envelopes_are_stored_and_answered(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink
) -> None:
    # PostgreSQL refuses a NUL in text: such a message was refused with 451 for ever.
    raw = (
        b"From: nul@example.org\r\nTo: pbmserv@localhost\r\nSubject: help\r\n"
        b"Message-ID: <a\x00b\x01c@x.test>\r\n\r\n\r\n"
    )
    assert smtp_send(server.port, raw, mail_from="nul@example.org")[0] == 250
    assert b"already" in smtp_send(server.port, raw, mail_from="nul@example.org")[1]
    sink.wait_for(lambda m: [r.to for r in m] == ["nul@example.org"])
    settle(engine)
    assert [r.to for r in sink.messages] == ["nul@example.org"]
