"""Several servers, slow relays and crashes: every message reaches the relay exactly once.

Real parts: a real SMTP relay on 127.0.0.1, the real database (SQLite or PostgreSQL), delivery
runs in threads (two servers) or in a process that is killed in the middle of a batch.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from aiosmtpd.smtp import SMTP
from sqlalchemy import Connection, Engine, func, select

from pbmserv.config import Settings
from pbmserv.db.engine import make_engine, session_factory
from pbmserv.db.models import OutboxMessage
from pbmserv.db.times import utcnow
from pbmserv.outbound.delivery import deliver_all_due, deliver_due
from pbmserv.outbound.delivery_items import DELIVERED, Outcome
from pbmserv.outbound.leases import Lease
from tests.reliability.outbox import (
    Relay,
    ScriptedHandler,
    delivery_settings,
    drop_connection,
    enqueue,
    rows,
)

pytestmark = pytest.mark.db

PLAYERS = [f"player{n}@example.org" for n in range(1, 17)]


def pending(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.scalar(
            select(func.count()).select_from(OutboxMessage).where(OutboxMessage.status == "pending")
        )


def deliver_until_empty(settings: Settings, deadline: float) -> None:
    """One server's delivery loop: its own engine, polling until the outbox is empty."""
    engine = make_engine(settings.db_url)
    factory = session_factory(engine)

    async def loop() -> None:
        while time.monotonic() < deadline and pending(engine):
            if not await deliver_due(factory, settings):
                await asyncio.sleep(0.05)

    try:
        asyncio.run(loop())
    finally:
        engine.dispose()


def test_two_servers_and_a_slow_relay_send_every_message_once(db_url: str, engine: Engine) -> None:
    with Relay(ScriptedHandler(delay=0.3)) as relay:
        # The lease is far shorter than a batch takes (16 x 0.3 s), far longer than one message.
        settings = delivery_settings(db_url, relay, delivery_lease_seconds=2.0)
        message_ids = enqueue(engine, settings, PLAYERS)
        deadline = time.monotonic() + 60
        servers = [
            threading.Thread(target=deliver_until_empty, args=(settings, deadline))
            for _ in range(2)
        ]
        for server in servers:
            server.start()
        for server in servers:
            server.join()
        copies = relay.copies()
    assert copies == Counter(dict.fromkeys(message_ids, 1))
    assert {(row.status, row.attempts, row.lease_owner) for row in rows(engine)} == {
        ("sent", 1, None)
    }


DELIVER_ONCE = """
import asyncio, sys
from pbmserv.config import Settings
from pbmserv.db.engine import make_engine, session_factory
from pbmserv.outbound.delivery import deliver_all_due, deliver_due
settings = Settings(
    confirm_addresses=False, db_url=sys.argv[1], relay=sys.argv[2], delivery_lease_seconds=1.0
)
asyncio.run(deliver_due(session_factory(make_engine(settings.db_url)), settings))
"""


def test_a_server_killed_mid_batch_resends_none_of_the_accepted(
    db_url: str, engine: Engine
) -> None:
    process: list[subprocess.Popen] = []

    def kill_on_the_second(number: int, server: SMTP) -> str | None:
        if number == 2:  # the relay has taken message 1; the server dies sending message 2
            os.kill(process[0].pid, signal.SIGKILL)
            return "451 4.3.0 try again"
        return None

    with Relay(ScriptedHandler(script=kill_on_the_second)) as relay:
        # A lease long enough that a loaded machine's slow send does not outlast it (the
        # second server's clock is moved past it below, so it costs no waiting).
        settings = delivery_settings(db_url, relay, delivery_lease_seconds=5.0)
        message_ids = enqueue(engine, settings, PLAYERS[:3])
        process.append(
            subprocess.Popen([sys.executable, "-c", DELIVER_ONCE, db_url, relay.address])
        )
        assert process[0].wait(60) == -signal.SIGKILL
        assert [row.status for row in rows(engine)] == ["sent", "pending", "pending"]
        # Another server, once the dead one's lease has run out, sends the rest.
        later = utcnow() + timedelta(seconds=6)
        asyncio.run(deliver_due(session_factory(engine), settings, clock=lambda: later))
        copies = relay.copies()
    assert copies == Counter(dict.fromkeys(message_ids, 1))
    assert [row.status for row in rows(engine)] == ["sent"] * 3


def test_a_connection_dropped_on_one_message_fails_only_that_one(
    db_url: str, engine: Engine
) -> None:
    def drop_the_second(number: int, server: SMTP) -> str | None:
        return drop_connection(server) if number == 2 else None

    with Relay(ScriptedHandler(script=drop_the_second)) as relay:
        settings = delivery_settings(db_url, relay)
        message_ids = enqueue(engine, settings, PLAYERS[:4])
        factory = session_factory(engine)
        assert asyncio.run(deliver_due(factory, settings)) == 4
        first = rows(engine)
        assert [row.status for row in first] == ["sent", "pending", "sent", "sent"]
        assert first[1].attempts == 1 and "the relay closed the connection" in (
            first[1].last_error or ""
        )
        # Nothing is due again before the backoff; after it, only message 2 is sent.
        assert asyncio.run(deliver_due(factory, settings)) == 0
        later = utcnow() + timedelta(minutes=2)
        assert asyncio.run(deliver_due(factory, settings, clock=lambda: later)) == 1
        copies = relay.copies()
    assert copies == Counter(dict.fromkeys(message_ids, 1))
    assert [row.status for row in rows(engine)] == ["sent"] * 4


def test_a_stalled_relay_never_holds_a_message_past_its_lease(db_url: str, engine: Engine) -> None:
    def stall_on_the_first(number: int) -> float:
        return 5.0 if number == 1 else 0.0

    with Relay(ScriptedHandler(delay=stall_on_the_first)) as relay:
        settings = delivery_settings(db_url, relay, delivery_lease_seconds=1.0)
        enqueue(engine, settings, PLAYERS[:3])
        started = time.monotonic()
        asyncio.run(deliver_due(session_factory(engine), settings))
        elapsed = time.monotonic() - started
    first, *others = rows(engine)
    # Given up before another server could take the message over, and retried later.
    assert (first.status, first.attempts) == ("pending", 1)
    assert "TimeoutError" in (first.last_error or "")
    assert [row.status for row in others] == ["sent", "sent"]
    assert elapsed < 3


def test_a_renewed_lease_keeps_the_run_s_unsent_mail(db_url: str, engine: Engine) -> None:
    settings = delivery_settings(db_url, None, delivery_lease_seconds=1.5)
    enqueue(engine, settings, PLAYERS[:3])
    factory = session_factory(engine)
    ours = Lease(factory, settings, utcnow)
    items = ours.claim(10)
    time.sleep(0.45)  # more than a quarter of the lease: old enough to renew
    assert ours.getting_old
    ours.renew(items)  # one statement for all three
    assert not ours.getting_old
    time.sleep(1.15)  # past the first lease, inside the renewed one
    assert Lease(factory, settings, utcnow).claim(10) == []
    assert all(ours.holds(item) for item in items)
    assert all(ours.finish(item, DELIVERED) for item in items)
    assert {(row.status, row.attempts, row.lease_owner) for row in rows(engine)} == {
        ("sent", 1, None)
    }


def test_a_run_stalled_past_its_lease_sends_and_marks_none_of_what_was_taken_over(
    db_url: str, engine: Engine
) -> None:
    settings = delivery_settings(db_url, None, delivery_lease_seconds=0.3)
    enqueue(engine, settings, PLAYERS[:3])
    factory = session_factory(engine)
    stalled = Lease(factory, settings, utcnow)
    items = stalled.claim(10)
    assert stalled.finish(items[0], DELIVERED)  # the first went out before the stall
    time.sleep(0.4)  # the stall: the lease runs out and another server takes the rest
    other = Lease(factory, settings, utcnow)
    assert [item.id for item in other.claim(10)] == [item.id for item in items[1:]]
    # Waking up, the stalled run renews before sending and finds the rest no longer its own.
    assert stalled.getting_old
    stalled.renew(items[1:])
    assert not any(stalled.holds(item) for item in items[1:])
    assert not stalled.finish(items[1], DELIVERED)  # only the lease holder may mark a row
    assert other.finish(items[1], Outcome("451 try again"))
    first, second, third = rows(engine)
    assert (first.status, second.status, second.attempts) == ("sent", "pending", 1)
    assert third.lease_owner == other.owner


def test_a_recipient_s_mail_waits_while_their_earlier_mail_is_being_sent(
    db_url: str, engine: Engine
) -> None:
    """Over several connections, a later mail to one recipient (the final standings) must not
    overtake an earlier one still being sent (the last board mail): a claim passes it over
    while the earlier one's lease is live, and takes it once that is marked."""
    settings = delivery_settings(db_url, None)
    enqueue(engine, settings, ["alice@example.org", "bob@example.org", "alice@example.org"])
    factory = session_factory(engine)
    first = Lease(factory, settings, utcnow)
    [sending] = first.claim(1)
    assert sending.recipient == "alice@example.org"
    second = Lease(factory, settings, utcnow)
    assert [item.recipient for item in second.claim(10)] == ["bob@example.org"]
    assert first.finish(sending, DELIVERED)
    [later] = Lease(factory, settings, utcnow).claim(10)
    assert (later.recipient, later.id) == ("alice@example.org", sending.id + 2)


def test_mail_of_one_recipient_claimed_together_goes_in_queued_order(
    db_url: str, engine: Engine
) -> None:
    """Nothing of a recipient is in flight: one claim takes all their mail, oldest first; and
    mail whose earlier mail's lease ran out (a server gone) waits for nothing."""
    settings = delivery_settings(db_url, None, delivery_lease_seconds=0.3)
    enqueue(engine, settings, ["alice@example.org", "alice@example.org", "bob@example.org"])
    factory = session_factory(engine)
    assert [i.recipient for i in Lease(factory, settings, utcnow).claim(1)] == ["alice@example.org"]
    time.sleep(0.4)  # that run is gone: its lease ran out
    taken = Lease(factory, settings, utcnow).claim(10)
    assert [item.recipient for item in taken] == ["alice@example.org"] * 2 + ["bob@example.org"]
    assert [item.id for item in taken] == sorted(item.id for item in taken)


def test_servers_claiming_at_once_never_split_a_recipient_s_mail_out_of_order(
    db_url: str, engine: Engine
) -> None:
    """Many runs claim side by side (threads, each its own engine, as servers): whichever way
    their claims interleave, no run holds a recipient's mail while another run holds an
    earlier mail of theirs unsent."""
    settings = delivery_settings(db_url, None)
    recipients = [f"player{n % 3}@example.org" for n in range(30)]
    enqueue(engine, settings, recipients)
    errors: list[str] = []
    lock = threading.Lock()
    held: dict[int, tuple[str, str]] = {}  # id -> (recipient, owner) of mail claimed, unsent

    def server() -> None:
        own = make_engine(db_url)
        try:
            lease = Lease(session_factory(own), settings, utcnow)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                items = lease.claim(2)
                if not items:
                    with lock:
                        if not held and not pending(own):
                            return
                    time.sleep(0.01)
                    continue
                with lock:
                    for item in items:
                        for other_id, (recipient, owner) in held.items():
                            if (
                                recipient == item.recipient
                                and other_id < item.id
                                and owner != lease.owner
                            ):
                                errors.append(f"{item.id} claimed while {other_id} was unsent")
                        held[item.id] = (item.recipient, lease.owner)
                for item in items:
                    with lock:  # marked and forgotten as one step, as a send is
                        assert lease.finish(item, DELIVERED)
                        del held[item.id]
        finally:
            own.dispose()

    servers = [threading.Thread(target=server) for _ in range(3)]
    for thread in servers:
        thread.start()
    for thread in servers:
        thread.join()
    assert errors == []
    assert {row.status for row in rows(engine)} == {"sent"}


def test_a_claim_made_while_another_is_under_way_sees_that_one_s_leases(
    db_url: str, engine: Engine
) -> None:
    """Two servers' claims at the same moment (PostgreSQL runs them side by side): the second
    waits for the first to end, so it sees that alice's earlier mail is now being sent and
    leaves her later mail alone. Without the wait it would read the rows as they were."""
    settings = delivery_settings(db_url, None)
    enqueue(engine, settings, ["alice@example.org", "bob@example.org", "alice@example.org"])
    claimed, release = threading.Event(), threading.Event()

    @contextmanager
    def held_open(own: Engine) -> Iterator[Connection]:
        with own.begin() as connection:
            yield connection
            claimed.set()  # its rows are leased, not yet committed
            release.wait(10)

    first = Lease(session_factory(engine), settings, utcnow)
    results: dict[str, list[str]] = {}
    firsts = threading.Thread(
        target=lambda: results.update(first=[i.recipient for i in first._claim(1, held_open)])
    )
    firsts.start()
    assert claimed.wait(10)
    other = make_engine(db_url)
    try:
        second = Lease(session_factory(other), settings, utcnow)
        seconds = threading.Thread(
            target=lambda: results.update(second=[i.recipient for i in second.claim(10)])
        )
        seconds.start()
        seconds.join(0.5)
        assert seconds.is_alive()  # waiting for its turn
        release.set()
        firsts.join(10)
        seconds.join(10)
    finally:
        release.set()
        other.dispose()
    assert results == {"first": ["alice@example.org"], "second": ["bob@example.org"]}


def _deliver_everything(settings: Settings) -> dict[str, object]:
    """`pbmserv deliver`'s run (deliver_all_due) in a thread, with its own engine."""
    result: dict[str, object] = {}

    def run() -> None:
        own = make_engine(settings.db_url)
        try:
            result["report"] = asyncio.run(deliver_all_due(session_factory(own), settings))
        finally:
            own.dispose()

    result["thread"] = threading.Thread(target=run)
    result["thread"].start()  # type: ignore[attr-defined]
    return result


def test_a_run_leaves_no_mail_behind_another_run_s_earlier_mail(
    db_url: str, engine: Engine, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """Another run is sending alice's first mail, so a claim passes her second over; a run with
    no server behind it (`pbmserv mail`, `pbmserv deliver`) waits for the first to be marked and
    sends the second, rather than leaving it for whatever runs next."""
    settings = delivery_settings(db_url, None, spool=tmp_path / "spool")
    enqueue(engine, settings, ["alice@example.org", "alice@example.org", "bob@example.org"])
    factory = session_factory(engine)
    other = Lease(factory, settings, utcnow)
    [sending] = other.claim(1)
    running = _deliver_everything(settings)
    time.sleep(0.3)
    assert [row.status for row in rows(engine)] == ["pending", "pending", "sent"]
    assert other.finish(sending, DELIVERED)
    running["thread"].join(10)  # type: ignore[attr-defined]
    assert [row.status for row in rows(engine)] == ["sent"] * 3
    report = running["report"]
    assert (report.sent, report.claimed) == (2, 2)  # type: ignore[attr-defined]


def test_a_run_takes_over_mail_held_back_by_a_run_that_died(
    db_url: str, engine: Engine, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The run sending alice's first mail died: once its lease runs out, the waiting run sends
    both, in order."""
    settings = delivery_settings(db_url, None, spool=tmp_path / "spool", delivery_lease_seconds=0.6)
    enqueue(engine, settings, ["alice@example.org", "alice@example.org"])
    [_abandoned] = Lease(session_factory(engine), settings, utcnow).claim(1)
    running = _deliver_everything(settings)
    running["thread"].join(10)  # type: ignore[attr-defined]
    assert [row.status for row in rows(engine)] == ["sent", "sent"]
    assert running["report"].sent == 2  # type: ignore[attr-defined]
    with engine.connect() as conn:
        sent = conn.execute(select(OutboxMessage.id, OutboxMessage.sent_at)).all()
    first, second = sorted(sent)
    assert first.sent_at <= second.sent_at
