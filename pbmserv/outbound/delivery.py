"""Delivering the outbox: to an SMTP relay with retries and backoff, or to a spool folder.

A relay that is down only delays mail: the row stays pending and is retried later, until it
has waited ``GIVE_UP_AFTER``. Each message is judged on its own: a refusal, an address the
relay cannot take or any other error fails that one message (for now or for good), never the
rest of its batch.

Several servers may deliver from one database. A run claims a batch under a lease with its own
token (``lease_owner``), skipping the rows another run has locked (FOR UPDATE SKIP LOCKED on
PostgreSQL). Before sending a message it makes sure its lease still has more time left than a
send may take (renewing the lease of all its unsent messages in one statement once a quarter of
it has gone by), and right after the relay accepts the message, marks it sent, each only while
it still holds the lease. So a message is sent twice only when a process dies (or stalls past
the lease) in the middle of sending it, and a crash between messages resends none of those
already accepted.

The delivery workers of a process send over several relay connections at once, but only one
message at a time is handed over (see ``handover``): from the end of its data, when the relay
may take it, until its mark is written, no other message of the process is. So at any moment at
most one message is sent but not yet marked, and a process killed (kill -9) costs at most one
duplicate mail. Everything before (connecting, MAIL, RCPT, DATA and the message's bytes, the
pictures) still overlaps.

Mail that carries a secret (``SECRET_KINDS``: a new password, a confirmation code) is kept only
until it is sent: the statement that marks it sent also replaces its body with a line saying so.

The bookkeeping is a few SQLAlchemy Core statements (a claim per batch, one UPDATE per message,
a renewal now and then), and a delivery worker keeps its relay connection across batches.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import Delete, Engine, delete, literal_column, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.accounts.bouncing import bounce_key, return_path
from pbmserv.db.engine import core_transaction, engine_of
from pbmserv.db.models import OutboxMessage, table_of
from pbmserv.db.times import utcnow
from pbmserv.outbound.delivery_items import Claimed, DeliveryReport, Outcome, describe_error
from pbmserv.outbound.drafts import compose_draft, is_draft
from pbmserv.outbound.leases import SEND_SHARE, Lease, mark_group, unclaimed_due
from pbmserv.outbound.mime import TO_PNG
from pbmserv.outbound.picture_parts import finish_pictures
from pbmserv.outbound.relay.connection import RelayConnection, RelayUnreachable, handover
from pbmserv.outbound.relay.hold import hold_outbox, relay_held
from pbmserv.outbound.relay.refusals import count_refusal
from pbmserv.outbound.relay.tls import RelayLoginRefused
from pbmserv.outbound.signing import DkimSigner, SigningError, signer_of
from pbmserv.outbound.spool import spool_one
from pbmserv.pictures.raster import png_of

log = logging.getLogger("pbmserv.delivery")

_outbox = table_of(OutboxMessage)
BATCH = 50
#: How often a run with held-back mail looks whether the earlier mail has gone out.
HELD_BACK_POLL_SECONDS = 0.05


# --- a batch -------------------------------------------------------------------------------------


def _log_outcome(item: Claimed, outcome: Outcome | None) -> None:
    if outcome is None:
        log.info("outbox=%s left to the server that took its lease over", item.id)
    elif outcome.error is None:
        log.info("delivered outbox=%s to %s", item.id, item.recipient)
    else:
        verdict = "failed for good" if outcome.permanent else "failed, will retry"
        log.warning(
            "delivery of outbox=%s to %s %s: %s", item.id, item.recipient, verdict, outcome.error
        )


async def _settle(lease: Lease, item: Claimed, outcome: Outcome) -> Outcome | None:
    """Record one attempt at once (so a later crash cannot resend it); None if not ours."""
    outcome = lease.judge(item, outcome)
    if not await mark_group(lease.engine).write(lease.mark(item, outcome)):
        # Only when a send outlasted the lease: the server that took it over records it.
        log.warning("outbox=%s: another server took its lease over; not recorded", item.id)
        return None
    return outcome


_BOUNCE_KEYS: weakref.WeakKeyDictionary[Engine, bytes] = weakref.WeakKeyDictionary()


async def _bounce_key(engine: Engine) -> bytes:
    """The key of the return paths' MACs: read (or made) once per database, then kept."""
    key = _BOUNCE_KEYS.get(engine)
    if key is None:
        key = _BOUNCE_KEYS[engine] = await asyncio.to_thread(bounce_key, engine)
    return key


def _finished(raw: bytes, signer: DkimSigner | None) -> bytes:
    """The bytes that leave: the picture drawn, then the DKIM signature over them."""
    if TO_PNG in raw:
        raw = finish_pictures(raw)
    return raw if signer is None else signer.sign(raw)


async def _deliver_one(
    lease: Lease, relay: RelayConnection | None, items: list[Claimed], index: int
) -> Outcome | None:
    item = items[index]
    if relay is not None:
        await relay.open()  # connecting may take long: do it before looking at the lease
    if lease.getting_old:  # else no statement at all: a young lease is still ours
        await asyncio.to_thread(lease.renew, items[index:])
    if not lease.holds(item):
        return None  # another run has it now
    try:
        signer = signer_of(lease.settings)
    except SigningError as error:  # the operator must fix the key: the mail waits meanwhile
        return await _settle(lease, item, Outcome(str(error)))
    if is_draft(item.raw):
        # Built now, its picture drawn as it is (see outbound.drafts), on the loop for the same
        # reason as the drawing below.
        try:
            item = replace(item, raw=compose_draft(item.raw, lease.settings, png_of))
        except Exception as error:  # a bug: the mail waits (retried) rather than being lost
            log.exception("outbox=%s: its draft could not be built", item.id)
            return await _settle(lease, item, Outcome(f"could not build: {describe_error(error)}"))
    if TO_PNG in item.raw or signer is not None:
        # A board's picture is drawn, and the mail signed, now rather than while moves are
        # played. On the event loop: half a millisecond, less than a worker thread's hand-offs
        # cost (and the GIL would keep the loop waiting meanwhile anyway).
        item = replace(item, raw=_finished(item.raw, signer))
    if relay is None:
        async with handover():
            outcome = await asyncio.to_thread(spool_one, lease.settings.spool, item)
            return await _settle(lease, item, outcome)
    deadline = (
        asyncio.get_running_loop().time() + lease.settings.delivery_lease_seconds * SEND_SHARE
    )
    # Its own return path: a delivery report names the very mail that bounced
    # (core.accounts.bouncing).
    sender = return_path(lease.settings.address, await _bounce_key(lease.engine), item.id)
    refused = await relay.start(item, deadline, sender)  # beside the other connections' mail
    if refused is not None:
        return await _settle(lease, item, refused)
    async with handover():  # a wait here counts against the deadline, as a slow relay would
        outcome = await relay.finish(deadline)
        return await _settle(lease, item, outcome)


async def _deliver_items(
    lease: Lease, relay: RelayConnection | None, items: list[Claimed]
) -> DeliveryReport:
    report = DeliveryReport(claimed=len(items))
    for index, item in enumerate(items):
        try:
            outcome = await _deliver_one(lease, relay, items, index)
        except RelayUnreachable as error:
            if isinstance(error.__cause__, RelayLoginRefused):  # ours, not the mail's: held
                rest = [i.id for i in items[index:]]
                await asyncio.to_thread(hold_outbox, lease, error.__cause__, rest)
                report.deferred += len(rest)
            else:
                await _defer_all(lease, items[index:], Outcome(str(error)), report)
            break
        _log_outcome(item, outcome)
        report.count(outcome)
        if outcome is not None and outcome.bounce is not None:  # as a delivery report would
            args = (lease.engine, lease.settings, item.id, outcome.bounce, lease.clock())
            await asyncio.to_thread(count_refusal, *args)
    return report


async def _defer_all(
    lease: Lease, items: Iterable[Claimed], outcome: Outcome, report: DeliveryReport
) -> None:
    """The relay is unreachable: each message waits its backoff (a relay down only delays)."""
    for item in items:
        settled = await _settle(lease, item, outcome)
        _log_outcome(item, settled)
        report.count(settled)


async def deliver_batch(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
    relay: RelayConnection | None = None,
) -> DeliveryReport:
    """Claim up to ``batch`` due messages and send them over one relay connection: ``relay``,
    left open for the next batch, or else one opened and closed for this batch."""
    lease = Lease(factory, settings, clock)
    if await relay_held(lease.engine, settings):
        return DeliveryReport()  # the relay refused our login: no mail, no login until released
    items = lease.claim_at_once(batch)
    if items is None:
        items = await asyncio.to_thread(lease.claim, batch)
    if not items:
        return DeliveryReport()
    if not settings.relay_host_port:
        return await _deliver_items(lease, None, items)
    if relay is not None:
        return await _deliver_items(lease, relay, items)
    own = RelayConnection(settings)
    try:
        return await _deliver_items(lease, own, items)
    finally:
        await own.close()


async def deliver_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
    relay: RelayConnection | None = None,
) -> int:
    """Send one batch of due messages; return how many were claimed (0: nothing was due)."""
    report = await deliver_batch(factory, settings, clock, batch, relay)
    return report.claimed


async def deliver_all_due(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    batch: int = BATCH,
) -> DeliveryReport:
    """Send batches until nothing is due, or a whole batch only waits for a retry.

    Due mail is never left behind unclaimed: a claim passes over a recipient's later mail while
    another run sends their earlier one, and that run may have claimed before the later mail was
    queued. So the run looks again (every ``HELD_BACK_POLL_SECONDS``, for at most a lease's
    length: by then the earlier mail is marked, or its lease ran out and a claim takes both);
    `pbmserv mail` and `pbmserv deliver` have no server behind them to send it later.
    """
    total = DeliveryReport()
    relay = RelayConnection(settings) if settings.relay_host_port else None
    engine = engine_of(factory)
    deadline = time.monotonic() + settings.delivery_lease_seconds
    try:
        while True:
            report = await deliver_batch(factory, settings, clock, batch, relay)
            total.add(report)
            if report.claimed and report.settled == 0:
                return total  # the relay is down: trying again at once would only fail again
            if report.claimed >= batch:
                continue
            if time.monotonic() >= deadline or not await _more_to_claim(engine, settings, clock()):
                return total
            await asyncio.sleep(HELD_BACK_POLL_SECONDS)
    finally:
        if relay is not None:
            await relay.close()


async def _more_to_claim(engine: Engine, settings: Settings, now: datetime) -> bool:
    """Due mail no run holds (held back behind earlier mail, or queued since the claim), and a
    relay that takes mail."""
    if await relay_held(engine, settings):
        return False
    return await asyncio.to_thread(unclaimed_due, engine, now) > 0


# --- retention -----------------------------------------------------------------------------------

PURGE_CHUNK = 2000
PURGE_PAUSE_SECONDS = 0.05


def purge_statement(cutoff: datetime, chunk: int) -> Delete:
    old = (
        select(_outbox.c.id)
        .where(_outbox.c.status == literal_column("'sent'"), _outbox.c.created_at < cutoff)
        .limit(chunk)
        .with_for_update(skip_locked=True)  # another server purging at once: no waiting
    )
    return delete(_outbox).where(_outbox.c.id.in_(old.scalar_subquery()))


def purge_sent(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    chunk: int = PURGE_CHUNK,
    stopping: Callable[[], bool] = lambda: False,
) -> int:
    """Delete the mail sent more than ``sent_retention_days`` ago (by its queueing time, as
    `pbmserv admin outbox purge`); return how many rows. Nothing with 0 days.

    ``chunk`` rows per transaction, with a pause between, so that the purge never holds the
    database (SQLite: its only write lock) for long, however much there is to delete.
    """
    if settings.sent_retention_days <= 0:
        return 0
    cutoff = clock() - timedelta(days=settings.sent_retention_days)
    engine = engine_of(factory)
    purged = 0
    while not stopping():
        with core_transaction(engine) as conn:
            deleted = conn.execute(purge_statement(cutoff, chunk)).rowcount
        purged += deleted
        if deleted < chunk:
            break
        time.sleep(PURGE_PAUSE_SECONDS)  # let the waiting writers in
    if purged:
        log.info(
            "purged %s sent message(s) older than %s days", purged, settings.sent_retention_days
        )
    return purged
