"""A relay's refusal of a recipient counts as a hard bounce, as a delivery report would.

A real aiosmtpd relay that refuses bob's address at RCPT (550 5.1.1, what a provider's
submission server says at once in the hosted-mailbox mode) or his message at the end of its
data (554); the real database, delivery path and bounce counting. Before, such mail was marked
failed and nothing else: the address never became bouncing and the opponents were never told.
"""

from __future__ import annotations

import asyncio

import pytest
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, select

from pbmserv.core.accounts.delivery_reports import DeliveryReport
from pbmserv.db.engine import session_factory
from pbmserv.db.models import Address, OutboxMessage
from pbmserv.outbound.delivery import deliver_all_due
from pbmserv.outbound.relay.refusals import bounce_of
from pbmserv.outbound.relay.session import Reply
from tests.core.client import Client
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, enqueue, rows

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"
UNKNOWN_USER = "550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown"


class RefusingHandler(ScriptedHandler):
    """A relay that answers bob's RCPT (``at_rcpt``) or the end of his data (``at_data``)
    with a refusal, and takes everyone else's mail."""

    def __init__(self, at_rcpt: str | None = None, at_data: str | None = None) -> None:
        super().__init__()
        self.at_rcpt, self.at_data = at_rcpt, at_data
        self.refused = 0

    async def handle_RCPT(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if address == BOB and self.at_rcpt:
            with self.lock:
                self.refused += 1
            return self.at_rcpt
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        if BOB in envelope.rcpt_tos and self.at_data:
            with self.lock:
                self.refused += 1
            return self.at_data
        return await super().handle_DATA(server, session, envelope)


def a_board_between_alice_and_bob(engine: Engine) -> Client:
    client = Client(engine)
    assert client.run("signup alice secret1", sender=ALICE).ok
    assert client.run("signup bob hunter22", sender=BOB).ok
    assert client.run("chameleon challenge -size=5 alice bob", sender=ALICE).ok
    return client


def queue_to_bob(engine: Engine, count: int) -> None:
    """``count`` notices to bob, queued as the server queues them."""
    enqueue(engine, delivery_settings(str(engine.url), None), [BOB] * count)


def deliver(engine: Engine, relay: Relay) -> None:
    settings = delivery_settings(str(engine.url), relay, bounce_limit=3)
    asyncio.run(deliver_all_due(session_factory(engine), settings))


def bob_address(engine: Engine) -> Address | None:
    with session_factory(engine)() as session:
        return session.get(Address, BOB)


@pytest.mark.parametrize(
    "refusal",
    [{"at_rcpt": UNKNOWN_USER}, {"at_data": "554 5.7.1 <bob@example.org>: mailbox disabled"}],
    ids=["550 at RCPT", "554 at the end of the data"],
)
def test_refusals_of_bobs_address_mark_it_bouncing_and_alice_is_told(
    engine: Engine, refusal: dict[str, str]
) -> None:
    a_board_between_alice_and_bob(engine)
    queue_to_bob(engine, 2)
    handler = RefusingHandler(**refusal)
    with Relay(handler) as relay:
        deliver(engine, relay)
        # Two refusals: two hard bounces, below bounce_limit (3); nobody told yet.
        assert [r.status for r in rows(engine)] == ["failed", "failed"]
        assert all((r.last_error or "").startswith("bounced: ") for r in rows(engine))
        held = bob_address(engine)
        assert held is not None and held.hard_bounces == 2 and held.bouncing_since is None
        assert handler.messages == []

        # The third marks the address; alice, his opponent, gets the notice, once.
        queue_to_bob(engine, 1)
        deliver(engine, relay)
        deliver(engine, relay)  # the notice, queued by the third refusal
    held = bob_address(engine)
    assert held is not None and held.hard_bounces == 3 and held.bouncing_since is not None
    assert "outbox 3:" in (held.last_bounce or "") and "5." in (held.last_bounce or "")
    assert handler.refused == 3
    [told] = handler.messages
    assert told.to == ALICE and told.subject == "pbmserv: bob cannot be reached by mail"
    assert "chameleon board 1 (with bob)" in told.body


def test_a_refusal_counts_once_and_a_refusal_that_blames_the_relay_counts_not(
    engine: Engine,
) -> None:
    """Relay access denied (a wrong setting of ours) fails the mail as ever but counts for
    nothing: one wrong setting must not mark every player."""
    a_board_between_alice_and_bob(engine)
    queue_to_bob(engine, 3)
    handler = RefusingHandler(at_rcpt="554 5.7.1 <bob@example.org>: Relay access denied")
    with Relay(handler) as relay:
        deliver(engine, relay)
    assert [r.status for r in rows(engine)] == ["failed"] * 3
    assert all("Relay access denied" in (r.last_error or "") for r in rows(engine))
    assert bob_address(engine) is None or bob_address(engine).hard_bounces == 0  # type: ignore[union-attr]
    with engine.connect() as conn:
        assert conn.scalar(select(OutboxMessage.id).where(OutboxMessage.recipient == ALICE)) is None


def test_a_temporary_refusal_is_retried_and_counts_not(engine: Engine) -> None:
    a_board_between_alice_and_bob(engine)
    queue_to_bob(engine, 1)
    with Relay(RefusingHandler(at_rcpt="450 4.2.0 mailbox busy")) as relay:
        deliver(engine, relay)
    [row] = rows(engine)
    assert row.status == "pending" and row.last_error == "450 4.2.0 mailbox busy"
    assert bob_address(engine) is None or bob_address(engine).hard_bounces == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("reply", "counted"),
    [
        (Reply(550, "5.1.1 <bob@example.org>: User unknown", "RCPT"), "5.1.1"),
        (Reply(553, "mailbox name not allowed", "RCPT"), ""),
        (Reply(554, "5.6.0 message refused", "DATA"), "5.6.0"),
        (Reply(550, "5.7.1 sender rejected", "MAIL"), None),
        (Reply(503, "5.5.1 need MAIL command", "RCPT"), None),
        (Reply(530, "5.7.0 Authentication required", "RCPT"), None),
        (Reply(550, "5.7.1 Unable to relay for bob@example.org", "RCPT"), None),
        (Reply(554, "5.7.1 <bob@example.org>: Relay access denied", "RCPT"), None),
        (Reply(451, "4.3.0 try later", "RCPT"), None),
    ],
)
def test_which_refusals_count(reply: Reply, counted: str | None) -> None:
    report = bounce_of(reply, "Bob@Example.org")
    if counted is None:
        assert report is None
        return
    assert isinstance(report, DeliveryReport) and report.permanent
    assert report.status == counted and report.decisive.recipient == BOB
    assert report.describe().startswith((counted or "(no status)") + " failed " + str(reply.code))
