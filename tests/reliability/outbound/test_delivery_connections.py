"""A delivery worker keeps its relay connection across batches while there is mail, and that
costs no message: a relay that hung up in between gets a new connection, not a failed send.

Real SMTP relays on 127.0.0.1 (counting their connections) and the real database.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine

import pbmserv.runtime.worker as worker
from pbmserv.core.context import utcnow as utcnow_clock
from pbmserv.db.engine import session_factory
from pbmserv.outbound.delivery import deliver_all_due, deliver_due
from pbmserv.outbound.relay.connection import RelayConnection
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, enqueue, rows
from tests.support import RunningServer

pytestmark = pytest.mark.db

PLAYERS = [f"player{n}@example.org" for n in range(1, 13)]


class CountingHandler(ScriptedHandler):
    """A relay that tells its connections (SMTP sessions) apart and counts QUIT and NOOP."""

    def __init__(self, hang_up_after: int = 0) -> None:
        super().__init__()
        self.sessions: list[SMTPSession] = []
        self.quits = 0
        self.noops = 0
        self.hang_up_after = hang_up_after

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        reply = await super().handle_DATA(server, session, envelope)
        with self.lock:
            if not any(seen is session for seen in self.sessions):
                self.sessions.append(session)
            number = self.data_commands
        if number == self.hang_up_after:
            # The relay takes the message, then drops the idle client (as a relay restarting).
            assert server.transport is not None
            asyncio.get_running_loop().call_later(0.05, server.transport.close)
        return reply

    async def handle_QUIT(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        with self.lock:
            self.quits += 1
        return "221 Bye"

    async def handle_NOOP(
        self, server: SMTP, session: SMTPSession, envelope: Envelope, arg: str
    ) -> str:
        with self.lock:
            self.noops += 1
        return "250 OK"


@pytest.fixture
def counting_relay() -> Iterator[Relay]:
    with Relay(CountingHandler()) as relay:
        yield relay


def handler_of(relay: Relay) -> CountingHandler:
    assert isinstance(relay.handler, CountingHandler)
    return relay.handler


def test_consecutive_batches_share_one_connection(
    db_url: str, engine: Engine, counting_relay: Relay
) -> None:
    settings = delivery_settings(db_url, counting_relay)
    message_ids = enqueue(engine, settings, PLAYERS)
    factory = session_factory(engine)

    async def three_batches() -> list[int]:
        relay = RelayConnection(settings)
        try:
            return [await deliver_due(factory, settings, batch=5, relay=relay) for _ in range(3)]
        finally:
            await relay.close()

    assert asyncio.run(three_batches()) == [5, 5, 2]
    handler = handler_of(counting_relay)
    assert counting_relay.copies() == Counter(dict.fromkeys(message_ids, 1))
    assert (len(handler.sessions), handler.quits) == (1, 1)
    assert [row.status for row in rows(engine)] == ["sent"] * len(PLAYERS)


def test_deliver_all_due_uses_one_connection(
    db_url: str, engine: Engine, counting_relay: Relay
) -> None:
    settings = delivery_settings(db_url, counting_relay)
    enqueue(engine, settings, PLAYERS)
    report = asyncio.run(deliver_all_due(session_factory(engine), settings, batch=5))
    assert (report.claimed, report.sent) == (12, 12)
    assert (len(handler_of(counting_relay).sessions), handler_of(counting_relay).quits) == (1, 1)


def test_a_relay_that_hung_up_between_batches_costs_no_message(db_url: str, engine: Engine) -> None:
    with Relay(CountingHandler(hang_up_after=3)) as counting_relay:
        settings = delivery_settings(db_url, counting_relay)
        message_ids = enqueue(engine, settings, PLAYERS[:6])
        factory = session_factory(engine)

        async def two_batches() -> list[int]:
            relay = RelayConnection(settings)
            relay.CHECK_AFTER_SECONDS = 0.1  # a connection idle this long is checked first
            try:
                first = await deliver_due(factory, settings, batch=3, relay=relay)
                await asyncio.sleep(0.3)  # meanwhile the relay hangs up
                second = await deliver_due(factory, settings, batch=3, relay=relay)
                return [first, second]
            finally:
                await relay.close()

        assert asyncio.run(two_batches()) == [3, 3]
        handler = handler_of(counting_relay)
        copies = counting_relay.copies()
    assert copies == Counter(dict.fromkeys(message_ids, 1))
    assert len(handler.sessions) == 2
    # Every message went out at its first attempt: none waits for a retry.
    assert {(row.status, row.attempts) for row in rows(engine)} == {("sent", 1)}


def test_an_idle_connection_is_checked_before_it_carries_mail(
    db_url: str, engine: Engine, counting_relay: Relay
) -> None:
    settings = delivery_settings(db_url, counting_relay)
    enqueue(engine, settings, PLAYERS[:2])
    factory = session_factory(engine)

    async def two_batches() -> None:
        relay = RelayConnection(settings)
        relay.CHECK_AFTER_SECONDS = 0.1
        try:
            await deliver_due(factory, settings, batch=1, relay=relay)
            await asyncio.sleep(0.3)
            await deliver_due(factory, settings, batch=1, relay=relay)
        finally:
            await relay.close()

    asyncio.run(two_batches())
    handler = handler_of(counting_relay)
    assert (len(handler.sessions), handler.noops, handler.quits) == (1, 1, 1)


def test_serve_keeps_the_connection_while_mail_comes_and_closes_it_when_idle(
    db_url: str, engine: Engine, counting_relay: Relay, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(worker, "RELAY_IDLE_SECONDS", 1.0)
    settings = delivery_settings(
        db_url,
        counting_relay,
        listen="127.0.0.1:0",
        spool=tmp_path / "spool",
        poll_seconds=0.2,
        delivery_connections=1,
    )
    handler = handler_of(counting_relay)
    running = RunningServer(settings).start()
    try:
        enqueue(engine, settings, [f"a{n}@example.org" for n in range(120)])  # 3 batches
        counting_relay.wait_count(120)
        enqueue(engine, settings, ["late@example.org"])  # within the idle time: same connection
        counting_relay.wait_count(121)
        assert (len(handler.sessions), handler.quits) == (1, 0)
        deadline = time.monotonic() + 10
        while handler.quits == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert handler.quits == 1  # idle: said goodbye
        enqueue(engine, settings, ["later@example.org"])
        counting_relay.wait_count(122)
    finally:
        running.stop()
    assert len(handler.sessions) == 2
    assert handler.quits == 2  # and once more when the server stopped
    assert {row.status for row in rows(engine)} == {"sent"}


def test_marks_of_mail_sent_together_share_a_transaction(db_url: str, engine: Engine) -> None:
    from sqlalchemy import event

    from pbmserv.outbound.delivery_items import DELIVERED
    from pbmserv.outbound.leases import Lease, MarkGroup

    settings = delivery_settings(db_url, None)
    enqueue(engine, settings, PLAYERS)
    lease = Lease(session_factory(engine), settings, utcnow_clock)
    items = lease.claim(len(PLAYERS))
    commits: list[int] = []
    event.listen(engine, "commit", lambda _conn: commits.append(1))

    async def mark_all() -> list[bool]:
        group = MarkGroup(engine)
        return await asyncio.gather(*(group.write(lease.mark(i, DELIVERED)) for i in items))

    assert asyncio.run(mark_all()) == [True] * len(PLAYERS)
    assert len(commits) <= 2  # the first mark alone, then all the others together
    assert {row.status for row in rows(engine)} == {"sent"}
