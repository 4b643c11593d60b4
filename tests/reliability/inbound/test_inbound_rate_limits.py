"""Issue 15, item 2: rate limits by envelope sender and by the header From address.

Someone rotating envelope senders with a fixed From got 400 replies sent to that From. The
From address is now stored with each message and limited too; the real owner of the address,
whose envelope sender is the From address itself, is not locked out by the forgeries.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory
from pbmserv.db.models import InboxMessage
from pbmserv.inbound.inbox import Stored, store_message
from pbmserv.inbound.reading.decode import parse_message
from tests.support import RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

VICTIM = "Victim <Victim@Example.ORG>"


def test_rotating_envelopes_with_one_from_are_deferred_and_the_owner_still_gets_through(
    with_settings,
    engine,
    sink: Sink,  # type: ignore[no-untyped-def]
) -> None:
    settings = with_settings(rate_limit_per_hour=100, from_rate_limit_per_hour=3)
    running = RunningServer(settings).start()
    try:
        forged = [
            smtp_send(running.port, make_mail(VICTIM, f"help {i}"), f"bot{i}@spam.example")[0]
            for i in range(5)
        ]
        own = smtp_send(running.port, make_mail(VICTIM, "help"), "victim@example.org")[0]
        settle(engine)
    finally:
        running.stop()
    assert forged == [250, 250, 250, 451, 451]
    assert own == 250
    # Three forgeries and the owner's own message: four answers, not six.
    assert [m.to for m in sink.messages].count("Victim@example.org") == 4
    with engine.connect() as conn:
        stored = set(conn.scalars(select(InboxMessage.from_address)))
    assert stored == {"victim@example.org"}


def test_the_from_limit_answers_451_4_7_1(with_settings, engine) -> None:  # type: ignore[no-untyped-def]
    running = RunningServer(with_settings(from_rate_limit_per_hour=1)).start()
    try:
        smtp_send(running.port, make_mail(VICTIM, "help"), "one@spam.example")
        code, text = smtp_send(running.port, make_mail(VICTIM, "help"), "two@spam.example")
    finally:
        running.stop()
    assert code == 451 and text.startswith(b"4.7.1")


def test_the_envelope_limit_still_holds_with_changing_from(with_settings, engine) -> None:  # type: ignore[no-untyped-def]
    running = RunningServer(with_settings(rate_limit_per_hour=2)).start()
    try:
        codes = [
            smtp_send(running.port, make_mail(f"x{i}@example.org", "help"), "bulk@example.org")[0]
            for i in range(3)
        ]
    finally:
        running.stop()
    assert codes == [250, 250, 451]


def test_only_accepted_messages_count(settings: Settings, engine) -> None:  # type: ignore[no-untyped-def]
    """Refused and duplicate messages are not stored, so they never extend a lock-out."""
    limited = replace(settings, from_rate_limit_per_hour=2)
    factory = session_factory(engine)
    message = make_mail(VICTIM, "help").as_bytes()
    results = [store_message(factory, limited, message, "a@spam.example") for _ in range(3)]
    results += [
        store_message(factory, limited, make_mail(VICTIM, "help").as_bytes(), f"{n}@spam.example")
        for n in "bcd"
    ]
    assert results == [Stored.ACCEPTED, Stored.DUPLICATE, Stored.DUPLICATE] + [
        Stored.ACCEPTED,
        Stored.RATE_LIMITED,
        Stored.RATE_LIMITED,
    ]
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(InboxMessage)) == 2


@pytest.mark.parametrize(
    "from_header, expected",
    [
        (b"From: Alice <Alice@Example.ORG>", "alice@example.org"),
        (b'From: "Smith, Bob" <bob@example.org>, carol@example.org', "bob@example.org"),
        (b"From: =?utf-8?q?Zo=C3=AB?= <zoe@example.org>", "zoe@example.org"),
        (b'From: "mallory@evil.example" <alice@example.org>', "alice@example.org"),
        (b"From: <>", None),
        (b"From: not an address", None),
        (b"X-No-From: here", None),
    ],
)
def test_the_from_address_is_stored_lower_cased(
    settings: Settings, engine, from_header: bytes, expected: str | None
) -> None:  # type: ignore[no-untyped-def]
    assert stored_from_address(settings, engine, from_header) == expected


@pytest.mark.parametrize(
    "from_header",
    [
        b"From: \xff\xfe<\x00@\x01>",
        b'From: "unterminated <a@b.example',
        b"From: " + b"<" * 5000,
        b"From: a@b.example, <>, (((((",
        b"From: <junk@@>, second@example.org",
        b"From:\r\n\r\n",
        b"From: " + b"x@y," * 3000,
    ],
)
def test_garbage_from_headers_never_raise_and_key_the_address_replies_go_to(
    settings: Settings, engine, from_header: bytes
) -> None:  # type: ignore[no-untyped-def]
    sender = parse_message(from_header + BODY).sender
    expected = sender.lower() if sender else None
    assert stored_from_address(settings, engine, from_header) == expected


BODY = b"\r\nSubject: help\r\n\r\nhelp\r\n"


def stored_from_address(settings: Settings, engine, from_header: bytes) -> str | None:  # type: ignore[no-untyped-def]
    stored = store_message(session_factory(engine), settings, from_header + BODY, "x@example.net")
    assert stored is Stored.ACCEPTED
    with engine.connect() as conn:
        return conn.scalar(select(InboxMessage.from_address))
