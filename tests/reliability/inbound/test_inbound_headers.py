"""Issue 15, item 4: header limits checked on the raw bytes before the stdlib parser runs.

A 590 KB folded Content-Type took seconds to parse, and so did a From with 14,000 addresses.
Messages over the limits are not parsed: they are marked with an ``auto_reason`` (so the
processor ignores them, with the reason on the inbox row) in a fraction of the time. How long
each shape takes is printed by ``bench/security/hostile_headers.py``; these tests assert the limits.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.db.models import InboxMessage
from pbmserv.inbound.reading.decode import dedupe_key, header_from_address, parse_message
from tests.support import RunningServer, Sink, make_mail, settle, smtp_send

OVER_LIMITS = "headers over the limits"
TOP = b"From: alice@example.org\r\nTo: pbmserv@localhost\r\nMessage-ID: <h@example.org>\r\n"


def folded_content_type(size: int = 590_000) -> bytes:
    params = b"".join(b";\r\n p%d=v%d" % (i, i) for i in range(size // 14))
    return TOP + b"Subject: help\r\nContent-Type: text/plain" + params + b"\r\n\r\nhelp\r\n"


def crowded_from(count: int = 14_000) -> bytes:
    people = b",\r\n ".join(b'"User %d" <u%d@example.org>' % (i, i) for i in range(count))
    return b"From: " + people + b"\r\nSubject: help\r\nMessage-ID: <c@example.org>\r\n\r\nhelp\r\n"


def over_limits(raw: bytes) -> str:
    reason = parse_message(raw, "alice@example.org").auto_reason or ""
    assert reason.startswith(OVER_LIMITS), reason
    return reason


# --- the limits ------------------------------------------------------------------------------


def test_a_huge_folded_content_type_is_over_the_limits() -> None:
    assert "Content-Type" in over_limits(folded_content_type())


def test_a_from_with_thousands_of_addresses_is_over_the_limits() -> None:
    assert "From" in over_limits(crowded_from())


def test_too_many_header_fields() -> None:
    fields = b"".join(b"X-Field-%d: x\r\n" % i for i in range(201))
    assert "more than 200 header fields" in over_limits(TOP + fields + b"\r\nhelp\r\n")


def test_one_field_too_long_unfolded() -> None:
    subject = b"Subject: " + b"\r\n ".join([b"w" * 70] * 120) + b"\r\n"  # 8.5 KB unfolded
    assert "Subject" in over_limits(TOP + subject + b"\r\nhelp\r\n")


def test_too_many_addresses_in_a_short_field() -> None:
    cc = b"Cc: " + b",".join(b"a%d@x.example" % i for i in range(51)) + b"\r\n"
    assert "51 addresses" in over_limits(TOP + cc + b"\r\nhelp\r\n")


def test_too_many_mime_parameters_in_a_part() -> None:
    params = b"".join(b"; p%d=v" % i for i in range(70))
    raw = (
        TOP + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\n'
        b"Content-Type: text/plain" + params + b"\r\n\r\nhelp\r\n--B--\r\n"
    )
    assert "MIME parameters" in over_limits(raw)


def test_an_unclosed_quote_in_a_long_parameter_list() -> None:
    # One line, so only the stdin pipe can bring it (SMTP lines stop at 1000 bytes); the
    # stdlib takes minutes over it.
    raw = TOP + b'Content-Type: text/plain; a="' + b";x" * 100_000 + b"\r\n\r\nhelp\r\n"
    assert "Content-Type" in over_limits(raw)


def test_real_mail_with_long_trace_headers_is_within_the_limits() -> None:
    received = b"".join(
        b"Received: from mx%d.example.net (mx%d.example.net [192.0.2.%d])\r\n"
        b"\tby mx.example.org with ESMTPS id %d; Mon, 5 Jan 2026 12:00:00 +0000\r\n" % (i, i, i, i)
        for i in range(60)
    )
    antispam = b"X-Microsoft-Antispam-Message-Info: " + b"\r\n\t".join([b"Q" * 76] * 150)
    attachment = (
        b"Content-Disposition: attachment;\r\n"
        + b";\r\n".join(b" filename*%d*=utf-8''part%d" % (i, i) for i in range(8))
        + b"\r\n"
    )
    raw = (
        received
        + antispam
        + b"\r\n"
        + TOP
        + b"Cc: "
        + b", ".join(b'"Player %d" <p%d@example.org>' % (i, i) for i in range(40))
        + b'\r\nSubject: help\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n'
        b"--B\r\nContent-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\r\n\r\n"
        b"help\r\n--B\r\nContent-Type: application/octet-stream\r\n"
        + attachment
        + b"\r\nAAAA\r\n--B--\r\n"
    )
    mail = parse_message(raw, "alice@example.org")
    assert mail.auto_reason is None and mail.text.strip() == "help"


# --- what still works on a message over the limits -------------------------------------------


@pytest.mark.parametrize("raw", [folded_content_type(), crowded_from()])
def test_a_message_over_the_limits_still_has_a_key_and_a_message_id(raw: bytes) -> None:
    mail = parse_message(raw, "alice@example.org")
    assert mail.message_id in ("<h@example.org>", "<c@example.org>")
    assert dedupe_key(raw).startswith("mid:")


def test_the_from_address_of_a_message_over_the_limits() -> None:
    assert header_from_address(folded_content_type()) == "alice@example.org"
    assert header_from_address(crowded_from()) is None  # the From itself is over them


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    raw=st.binary(max_size=3000)
    | st.lists(
        st.sampled_from(
            [
                b"From:",
                b" ",
                b"\r\n",
                b"\t",
                b"<",
                b">",
                b"@",
                b'"',
                b"(",
                b")",
                b",",
                b"a",
                b"\xff",
            ]
        ),
        max_size=300,
    ).map(b"".join)
)
def test_header_from_address_never_raises(raw: bytes) -> None:
    address = header_from_address(raw)
    assert address is None or ("@" in address and address == address.lower())


# --- over SMTP ----------------------------------------------------------------------------


@pytest.mark.db
def test_over_smtp_messages_over_the_limits_are_ignored_with_the_reason(
    with_settings,
    engine,
    sink: Sink,  # type: ignore[no-untyped-def]
) -> None:
    running = RunningServer(with_settings(max_message_bytes=2_000_000)).start()
    try:
        for raw in (folded_content_type(), crowded_from()):
            assert smtp_send(running.port, raw, mail_from="alice@example.org")[0] == 250
        assert smtp_send(running.port, make_mail("bob@example.org", "help"))[0] == 250
        settle(engine)
        time.sleep(0.3)
    finally:
        running.stop()
    assert [m.to for m in sink.messages] == ["bob@example.org"]
    with engine.connect() as conn:
        rows = conn.execute(
            select(InboxMessage.status, InboxMessage.summary).order_by(InboxMessage.id)
        ).all()
    assert [row.status for row in rows] == ["ignored", "ignored", "done"]
    assert OVER_LIMITS in rows[0].summary and "Content-Type" in rows[0].summary
    assert OVER_LIMITS in rows[1].summary and "From" in rows[1].summary
