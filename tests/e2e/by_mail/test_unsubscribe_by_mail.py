"""Bulk mail and its one-mail unsubscribe, end to end: the real listener, relay, delivery and
DKIM signer. A digest and a broadcast carry List-Id, List-Unsubscribe (a mailto),
List-Unsubscribe-Post and Precedence: bulk, signed by DKIM; board mail and answers carry none.
The mail the List-Unsubscribe mailto stands for, sent as a mail program's button sends it,
stops the digest (or the broadcasts) at once, with no confirmation; the code never shows in a
log or an answer."""

from __future__ import annotations

import email
import email.policy
import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import dkim
import pytest
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, select

from pbmserv.config import Settings
from pbmserv.core import admin
from pbmserv.core.context import CommandContext
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import InboxMessage
from pbmserv.outbound.outbox_rows import queue_notifications
from pbmserv.outbound.signing import new_key, public_key_record
from pbmserv.runtime.upkeep import maintain
from tests.support import CapturingHandler, Received, RunningServer, Sink, make_mail, settle
from tests.support import smtp_send as send_over_smtp

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"
SERVER = "pbmserv@games.example.org"
BULK_HEADERS = ("List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Precedence")


class RawHandler(CapturingHandler):
    """The capturing relay, keeping the bytes as they came too (for DKIM's verifier)."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: dict[str, bytes] = {}

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        self.raw[str(parsed["Message-ID"])] = raw
        return await super().handle_DATA(server, session, envelope)


class RawSink(Sink):
    def __init__(self) -> None:
        super().__init__()
        self.handler = RawHandler()
        self.controller.handler = self.handler


@pytest.fixture
def key_pem() -> bytes:
    return new_key(1024)  # quick to make; the signing is the same


@pytest.fixture
def relay() -> Iterator[RawSink]:
    sink = RawSink()
    sink.start()
    yield sink
    sink.stop()


@pytest.fixture
def bulk_server(settings: Settings, relay: RawSink, key_pem: bytes, tmp_path: Path):  # type: ignore[no-untyped-def]
    key_file = tmp_path / "dkim.pem"
    key_file.write_bytes(key_pem)
    changed = replace(
        settings,
        address=SERVER,
        relay=relay.address,
        dkim_selector="pbmserv",
        dkim_key_file=key_file,
        maintenance_interval_seconds=0,  # the test runs the digest pass itself
    )
    running = RunningServer(changed).start()
    yield running
    running.stop()


def send(
    server: RunningServer, engine: Engine, relay: RawSink, sender: str, subject: str, body: str = ""
) -> list[Received]:
    before = len(relay.messages)
    message = make_mail(sender, subject, body, to=SERVER)
    assert send_over_smtp(server.port, message, to=SERVER)[0] == 250
    settle(engine)
    return relay.messages[before:]


def signed_headers(raw: bytes, key_pem: bytes) -> list[str]:
    """The header names the DKIM signature covers (its h= tag), once dkimpy verified it."""
    record = public_key_record(key_pem).encode()

    def lookup(name: bytes, timeout: int = 5) -> bytes:
        return record if name == b"pbmserv._domainkey.games.example.org." else b""

    assert dkim.verify(raw, dnsfunc=lookup)
    head = raw.split(b"\r\n\r\n", 1)[0].decode()
    unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ")
    [signature] = [line for line in unfolded.split("\r\n") if line.startswith("DKIM-Signature:")]
    tags = dict(part.strip().split("=", 1) for part in signature.split(":", 1)[1].split(";"))
    return [name.strip().lower() for name in tags["h"].replace(" ", "").split(":")]


def unsubscribe_mail(received: Received) -> tuple[str, str, str]:
    """What a mail program's unsubscribe button sends for ``received``: (to, subject, body)."""
    [target] = [u.strip().strip("<>") for u in str(received.message["List-Unsubscribe"]).split(",")]
    parts = urlsplit(target)
    assert parts.scheme == "mailto"
    query = parse_qs(parts.query)
    return unquote(parts.path), query["subject"][0], query["body"][0]


def run_digest(settings: Settings, engine: Engine, day: int) -> list[int]:
    """The digest pass of ``day`` days ago at 07:00: its mail is due at once (a later pass
    is a later day, as the digests of days to come would be)."""
    seven = datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0)
    report = maintain(session_factory(engine), settings, clock=lambda: seven - timedelta(day))
    settle(engine)
    return report.digested


def run_broadcast(settings: Settings, engine: Engine, subject: str) -> str:
    """What ``pbmserv admin broadcast`` does: the notices queued in one transaction."""
    with transaction(session_factory(engine)) as session:
        ctx = CommandContext(session=session, settings=settings, sender=None)
        done = admin.broadcast(ctx, subject, "The server stops at noon.", playing_only=False)
        queue_notifications(session, settings, ctx.notifications, ctx.now())
    settle(engine)
    return done


def test_a_digest_and_a_broadcast_are_left_with_the_one_mail_their_header_names(
    bulk_server: RunningServer, engine: Engine, relay: RawSink, key_pem: bytes, caplog
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)
    settings = bulk_server.settings
    send(bulk_server, engine, relay, ALICE, "signup alice secret1")
    send(bulk_server, engine, relay, BOB, "signup bob hunter22")
    send(bulk_server, engine, relay, BOB, "set bob hunter22 digest=daily")
    send(bulk_server, engine, relay, BOB, "chameleon challenge -size=5 bob alice")
    transactional = relay.messages
    assert any(m.message["Reply-To"] for m in transactional)  # board mail among them
    assert any(m.message["In-Reply-To"] for m in transactional)  # answers among them

    # The digest: bulk mail, its list headers inside the DKIM signature.
    assert len(run_digest(settings, engine, day=4)) == 1
    [digest] = [m for m in relay.messages if m.subject.startswith("pbmserv: your move")]
    assert digest.to == BOB
    assert digest.message["List-Id"] == "pbmserv digest <digest.games.example.org>"
    assert digest.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert digest.message["Precedence"] == "bulk"
    covered = signed_headers(relay.handler.raw[str(digest.message["Message-ID"])], key_pem)
    assert {"list-unsubscribe", "list-unsubscribe-post", "list-id"} <= set(covered)
    # Oversigned: nobody on the way can add a second List-Unsubscribe that still verifies.
    assert covered.count("list-unsubscribe") == 2 and covered.count("list-unsubscribe-post") == 2

    # Bob's mail program sends the mail the header names: the digest stops, no question asked.
    to, subject, body = unsubscribe_mail(digest)
    assert to == SERVER and subject.startswith("unsubscribe digest bob ")
    code = subject.split()[-1]
    out = send(bulk_server, engine, relay, BOB, subject, body)
    [answer] = out
    assert answer.to == BOB and answer.subject == "Re: unsubscribe digest bob ********"
    assert "bob gets no daily digest from now on" in answer.body
    assert "set bob PASSWORD digest=daily" in answer.body
    assert not any(answer.message[h] for h in BULK_HEADERS)  # an answer: transactional
    assert run_digest(settings, engine, day=3) == []  # the board still waits: no digest
    assert len([m for m in relay.messages if m.subject.startswith("pbmserv: your move")]) == 1

    # The operator's broadcast: to both, each with a List-Unsubscribe of its own.
    assert run_broadcast(settings, engine, "Downtime") == "broadcast to 2 user(s)"
    news = {m.to: m for m in relay.messages if m.subject == "pbmserv: Downtime"}
    assert set(news) == {ALICE, BOB}
    assert news[ALICE].message["List-Id"] == "pbmserv broadcasts <broadcasts.games.example.org>"
    raw = relay.handler.raw[str(news[ALICE].message["Message-ID"])]
    assert {"list-unsubscribe", "list-unsubscribe-post"} <= set(signed_headers(raw, key_pem))
    to, subject, body = unsubscribe_mail(news[ALICE])
    alice_code = subject.split()[-1]
    [answer] = send(bulk_server, engine, relay, ALICE, subject, body)
    assert "alice gets no messages from the server's operator" in answer.body
    assert run_broadcast(settings, engine, "Back") == "broadcast to 1 user(s)"
    assert [m.to for m in relay.messages if m.subject == "pbmserv: Back"] == [BOB]

    # And back on, with the password.
    send(bulk_server, engine, relay, ALICE, "set alice secret1 broadcasts=on")
    send(bulk_server, engine, relay, BOB, "set bob hunter22 digest=daily")
    assert run_broadcast(settings, engine, "Again") == "broadcast to 2 user(s)"
    assert len(run_digest(settings, engine, day=2)) == 1

    # Board mail and answers stay transactional: no list headers on any of them.
    bulk = {id(m) for m in relay.messages if m.message["List-Unsubscribe"]}
    assert len(bulk) == 1 + 2 + 1 + 2 + 1  # the digests and broadcasts above, alone
    for mail in relay.messages:
        if id(mail) not in bulk:
            assert not any(mail.message[h] for h in BULK_HEADERS), mail.subject
    # The codes are secrets: in no log line and in no kept copy of the messages that held them.
    assert code not in caplog.text and alice_code not in caplog.text
    with engine.connect() as conn:
        kept = b"".join(conn.scalars(select(InboxMessage.raw)))
    assert code.encode() not in kept and alice_code.encode() not in kept
