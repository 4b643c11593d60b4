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
import hashlib
import logging
import os
import re
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import (
    ColumnElement,
    Delete,
    Engine,
    Update,
    bindparam,
    delete,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.accounts.bouncing import bounce_key, return_path
from pbmserv.core.accounts.delivery_reports import DeliveryReport as Bounce
from pbmserv.core.context import utcnow
from pbmserv.db.engine import core_transaction
from pbmserv.db.models import OutboxMessage, table_of
from pbmserv.outbound.drafts import compose_draft, is_draft
from pbmserv.outbound.mime import TO_PNG
from pbmserv.outbound.picture_parts import finish_pictures
from pbmserv.outbound.relay.hold import hold_outbox, relay_held
from pbmserv.outbound.relay.refusals import bounce_of, count_refusal
from pbmserv.outbound.relay.session import RelayBroken, RelaySession, wire_data
from pbmserv.outbound.relay.tls import RelayLoginRefused, explain, open_relay
from pbmserv.outbound.signing import DkimSigner, SigningError, signer_of
from pbmserv.pictures.raster import png_of
from pbmserv.private_files import open_private_for_writing, private_folder

log = logging.getLogger("pbmserv.delivery")

BATCH = 50
# A message the relay keeps refusing for now is failed for good after this long (as an MTA's
# queue lifetime); `pbmserv admin outbox retry` queues it again.
GIVE_UP_AFTER = timedelta(days=5)
SMTP_TIMEOUT_SECONDS = 60
QUIT_TIMEOUT_SECONDS = 5

#: Outbox kinds whose mail carries a secret (a new password, an address's confirmation code):
#: its body is removed from the database as soon as it is sent (relay or spool).
SECRET_KINDS = frozenset({"password_reset", "confirmation"})


@dataclass(frozen=True)
class Claimed:
    """One outbox row, as a delivery run holds it."""

    id: int
    recipient: str
    message_id: str
    raw: bytes
    created_at: datetime
    attempts: int  # before this run's attempt
    kind: str = "notice"


@dataclass(frozen=True)
class Outcome:
    """What became of one attempt: delivered (no error), or an error for now or for good."""

    error: str | None = None
    permanent: bool = False
    bounce: Bounce | None = None  # a refusal of the recipient, counted as a hard bounce


DELIVERED = Outcome()


def _as_utc(stamp: datetime) -> datetime:
    """SQLite hands back naive date-times; they were stored as UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass
class DeliveryReport:
    """Counts of one or more batches, for the log and `pbmserv deliver`."""

    claimed: int = 0
    sent: int = 0
    failed: int = 0  # for good
    deferred: int = 0  # to be retried after a backoff
    skipped: int = 0  # another run took the lease over

    def count(self, outcome: Outcome | None) -> None:
        if outcome is None:
            self.skipped += 1
        elif outcome.error is None:
            self.sent += 1
        elif outcome.permanent:
            self.failed += 1
        else:
            self.deferred += 1

    def add(self, other: DeliveryReport) -> None:
        for name in ("claimed", "sent", "failed", "deferred", "skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def settled(self) -> int:
        """Messages that left the queue (sent or failed for good)."""
        return self.sent + self.failed

    def summary(self) -> str:
        return (
            f"{self.sent} sent, {self.failed} failed, {self.deferred} deferred, "
            f"{self.skipped} left to another server"
        )


# --- the lease: which run may send and mark a row ------------------------------------------------

_outbox = table_of(OutboxMessage)
# Literally in the SQL, so that the planners can use the partial index on pending mail.
_PENDING: ColumnElement[str] = literal_column("'pending'")

# A send must end well inside the lease, or another server could take the message over and send
# it too: a send may last half the lease, and the lease is renewed before a send once a quarter
# of it has gone by, so a send always ends with a quarter of the lease to spare.
SEND_SHARE = 0.5
RENEW_SHARE = 0.25


def claim_statement(batch: int) -> Update:
    due = (
        select(_outbox.c.id)
        .where(
            _outbox.c.status == _PENDING,
            _outbox.c.next_attempt_at <= bindparam("now"),
            or_(_outbox.c.lease_until.is_(None), _outbox.c.lease_until < bindparam("now")),
        )
        .order_by(_outbox.c.next_attempt_at, _outbox.c.id)
        .limit(batch)
        .with_for_update(skip_locked=True)  # servers sharing PostgreSQL claim disjoint rows
    )
    return (
        update(_outbox)
        .where(_outbox.c.id.in_(due.scalar_subquery()))
        .values(lease_until=bindparam("until"), lease_owner=bindparam("owner"))
        .returning(
            _outbox.c.id,
            _outbox.c.recipient,
            _outbox.c.message_id,
            _outbox.c.raw,
            _outbox.c.created_at,
            _outbox.c.attempts,
            _outbox.c.kind,
        )
    )


# Every write after the claim names the row and the lease owner: only the holder may mark it.
_ours = (_outbox.c.id == bindparam("row_id"), _outbox.c.lease_owner == bindparam("owner"))
_released = {"lease_until": None, "lease_owner": None, "attempts": _outbox.c.attempts + 1}
_MARK_SENT = (
    update(_outbox)
    .where(*_ours)
    .values(status="sent", sent_at=bindparam("now"), last_error=None, **_released)
)
# Mail with a secret: in the same statement, only its header block stays (see kept_of_secret).
_MARK_SENT_SECRET = _MARK_SENT.values(raw=bindparam("kept"))
_MARK_FAILED = (
    update(_outbox)
    .where(*_ours)
    .values(status="failed", last_error=bindparam("error"), **_released)
)
_MARK_DEFERRED = (
    update(_outbox)
    .where(*_ours)
    .values(last_error=bindparam("error"), next_attempt_at=bindparam("retry_at"), **_released)
)
_RENEW = (
    update(_outbox)
    .where(
        _outbox.c.id.in_(bindparam("row_ids", expanding=True)),
        _outbox.c.lease_owner == bindparam("owner"),
        _outbox.c.status == _PENDING,
    )
    .values(lease_until=bindparam("until"))
    .returning(_outbox.c.id)
)


def _engine_of(factory: sessionmaker[Session]) -> Engine:
    """The engine behind ``factory``: the bookkeeping runs plain statements, no ORM session."""
    bind = factory.kw.get("bind")
    if not isinstance(bind, Engine):
        raise TypeError("the session factory must be bound to an engine")
    return bind


class Lease:
    """One delivery run's hold on the outbox rows it claimed; every write checks the owner.

    Each method is one short transaction of one statement (SQLAlchemy Core, no ORM objects):
    this bookkeeping runs for every message sent.
    """

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, clock: Callable[[], datetime]
    ) -> None:
        self.engine = _engine_of(factory)
        self.settings = settings
        self.clock = clock
        self.owner = secrets.token_hex(16)
        self.length = timedelta(seconds=settings.delivery_lease_seconds)
        # Measured on the monotonic clock: the age of a lease is real time gone by.
        self.renewed_at = time.monotonic()
        self.held: set[int] = set()

    def claim(self, batch: int) -> list[Claimed]:
        """Lease up to ``batch`` due rows no other run holds, in one statement."""
        now = self.clock()
        self.renewed_at = time.monotonic()
        with core_transaction(self.engine) as conn:
            found = conn.execute(
                claim_statement(batch),
                {"now": now, "until": now + self.length, "owner": self.owner},
            ).all()
        items = sorted((Claimed(*row) for row in found), key=lambda item: item.id)
        self.held = {item.id for item in items}
        return items

    @property
    def getting_old(self) -> bool:
        """A quarter of the lease has gone by since the claim or the last renewal."""
        age = time.monotonic() - self.renewed_at
        return age > self.settings.delivery_lease_seconds * RENEW_SHARE

    def renew(self, unsent: Iterable[Claimed]) -> None:
        """Extend the lease of all the run's rows still to send, in one statement; the rows
        another run has taken over meanwhile (after a stall) are no longer held."""
        ids = [item.id for item in unsent if item.id in self.held]
        started = time.monotonic()
        if ids:
            with core_transaction(self.engine) as conn:
                renewed = conn.execute(
                    _RENEW,
                    {"row_ids": ids, "owner": self.owner, "until": self.clock() + self.length},
                ).scalars()
                self.held = set(renewed)
        self.renewed_at = started

    def holds(self, item: Claimed) -> bool:
        """Whether ``item`` is still ours to send (as of the claim or the last renewal)."""
        return item.id in self.held

    def mark(self, item: Claimed, outcome: Outcome) -> tuple[Update, dict[str, object]]:
        """The statement recording an attempt, if the row is still ours (see finish)."""
        self.held.discard(item.id)
        now = self.clock()
        values: dict[str, object] = {"row_id": item.id, "owner": self.owner}
        if outcome.error is None and item.kind in SECRET_KINDS:
            statement, values["now"] = _MARK_SENT_SECRET, now
            values["kept"] = kept_of_secret(item.raw, self.settings.address)
        elif outcome.error is None:
            statement, values["now"] = _MARK_SENT, now
        elif outcome.permanent:
            statement, values["error"] = _MARK_FAILED, outcome.error[:2000]
        else:
            statement, values["error"] = _MARK_DEFERRED, outcome.error[:2000]
            # The attempts counted at the claim: nobody else writes the row while it is ours.
            values["retry_at"] = now + self._backoff(item.attempts + 1)
        return statement, values

    def finish(self, item: Claimed, outcome: Outcome) -> bool:
        """Record an attempt in its own transaction, if the row is still ours."""
        [result] = write_marks(self.engine, [self.mark(item, outcome)])
        if isinstance(result, Exception):
            raise result
        return result

    def _backoff(self, attempts: int) -> timedelta:
        base, ceiling = self.settings.retry_base_seconds, self.settings.retry_max_seconds
        return timedelta(seconds=min(base * 2 ** (attempts - 1), ceiling))

    def judge(self, item: Claimed, outcome: Outcome) -> Outcome:
        """A failure for now becomes one for good once the message has waited too long."""
        if outcome.error is None or outcome.permanent:
            return outcome
        if self.clock() - _as_utc(item.created_at) < GIVE_UP_AFTER:
            return outcome
        return Outcome(f"gave up after {GIVE_UP_AFTER.days} days; last: {outcome.error}", True)


# --- mail with a secret --------------------------------------------------------------------------

_END_OF_HEADER = re.compile(rb"\r?\n\r?\n")
BODY_REMOVED = b"X-Pbmserv-Body-Removed: the body carried a secret; removed once sent"
_MASK = "********"


def kept_of_secret(raw: bytes, server_address: str) -> bytes:
    """What stays of a sent message that carried a secret: its header block, where the tag of
    any reply address of the server (``pbmserv+TAG@host``, which may be a code) is masked, and
    a line saying the body was removed; the body is empty."""
    found = _END_OF_HEADER.search(raw)
    head = raw[: found.start()] if found else raw
    local, _at, domain = server_address.rpartition("@")
    if local and domain:
        tagged = re.compile(
            rb"(?i)("
            + re.escape(local.encode())
            + rb"\+)[^@\s<>\"]+(@"
            + re.escape(domain.encode())
            + rb")"
        )
        head = tagged.sub(rb"\g<1>" + _MASK.encode() + rb"\g<2>", head)
    newline = b"\r\n" if b"\r\n" in head else b"\n"
    return head.rstrip(b"\r\n") + newline + BODY_REMOVED + newline + newline


# --- the spool -----------------------------------------------------------------------------------


def spool_file_name(item_id: int, message_id: str) -> str:
    digest = hashlib.sha1(message_id.encode()).hexdigest()[:10]
    return f"{item_id:010d}-{digest}.eml"


def write_spool(spool: Path, item: Claimed) -> Path:
    """Write one message maildir-style (tmp, then rename into new): never half a file."""
    private_folder(spool / "tmp")
    private_folder(spool / "new")
    name = spool_file_name(item.id, item.message_id)
    temporary = spool / "tmp" / name
    with open(open_private_for_writing(temporary), "wb") as handle:
        handle.write(item.raw)
        handle.flush()
        os.fsync(handle.fileno())
    final = spool / "new" / name
    os.replace(temporary, final)
    return final


def _spool_one(spool: Path, item: Claimed) -> Outcome:
    try:
        write_spool(spool, item)
    except OSError as error:  # a full disk or a permission: try again later
        return Outcome(_describe(error))
    except Exception as error:  # anything else is this message's own fault
        return Outcome(_describe(error), permanent=True)
    return DELIVERED


# --- the relay -----------------------------------------------------------------------------------


class RelayUnreachable(Exception):
    """No connection to the relay: every message still to send waits for the next run."""


class RelayConnection:
    """An SMTP connection to the relay, opened on first use and again after it broke.

    A delivery worker keeps it open across batches while there is work (connecting, EHLO and
    QUIT cost more than sending a small message); it is replaced after ``MAX_MESSAGES`` or
    ``MAX_SECONDS``, and a connection unused for a while is checked with NOOP before a message
    is trusted to it. aiosmtplib opens it (pbmserv.outbound.relay.tls); the transactions are
    pbmserv.outbound.relay.session's, pipelined where the relay offers it.
    """

    MAX_MESSAGES = 1000
    MAX_SECONDS = 300.0
    CHECK_AFTER_SECONDS = 2.0

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.session: RelaySession | None = None
        self.opened_at = self.used_at = 0.0
        self.messages, self.recipient = 0, ""

    async def open(self) -> RelaySession:
        if self.session is not None and self.session.is_connected:
            now = time.monotonic()
            if self.messages >= self.MAX_MESSAGES or now - self.opened_at > self.MAX_SECONDS:
                await self.close()  # a long-lived conversation is retired, politely
            elif now - self.used_at <= self.CHECK_AFTER_SECONDS or await self._alive(self.session):
                return self.session
        self.drop()
        try:
            # TLS and AUTH as the settings ask; the extensions (SMTPUTF8) are known after it.
            client = await open_relay(self.settings)
        except Exception as error:
            raise RelayUnreachable(explain(error, self.settings)) from error
        self.session = RelaySession.take_over(client.transport, client.esmtp_extensions)
        self.opened_at = self.used_at = time.monotonic()
        self.messages = 0
        return self.session

    async def _alive(self, session: RelaySession) -> bool:
        """Whether an idle connection still answers: the relay may have hung up meanwhile, and
        a message sent into a dead connection would wait for a retry."""
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                reply = await session.command(b"NOOP")
        except Exception:
            return False
        if reply.code != 250:
            return False
        self.used_at = time.monotonic()
        return True

    def idle_for(self) -> float:
        """Seconds since the connection last carried a message (0 when there is none)."""
        return 0.0 if self.session is None else time.monotonic() - self.used_at

    async def close(self) -> None:
        """Say goodbye when the work is done; a relay that does not answer is just dropped."""
        session, self.session = self.session, None
        if session is None or not session.is_connected:
            return
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                await session.quit()
        except Exception:
            session.close()

    def drop(self) -> None:
        """Hang up on a conversation in an unknown state (it broke, stalled or went wrong)."""
        session, self.session = self.session, None
        if session is not None:
            session.close()

    async def start(self, item: Claimed, deadline: float, sender: str) -> Outcome | None:
        """Begin ``item``'s mail transaction from ``sender`` (its return path) and write all
        its data but the end: None when the relay waits for the end (see ``finish``), or else
        the outcome (refused, broken). ``deadline`` (the loop's clock) bounds this and
        ``finish`` together."""
        session = await self.open()
        self.messages += 1
        self.recipient = item.recipient  # whom a refusal of the data's end refuses
        try:
            return await self._start(session, item, deadline, sender)
        finally:
            self.used_at = time.monotonic()

    async def _start(
        self, session: RelaySession, item: Claimed, deadline: float, sender: str
    ) -> Outcome | None:
        needs_utf8 = not (sender.isascii() and item.recipient.isascii())
        if needs_utf8 and not session.supports("smtputf8"):
            # Without SMTPUTF8 no relay can take this address; trying would only break the
            # conversation for the messages after it.
            return Outcome(
                f"the relay does not offer SMTPUTF8, which the address {item.recipient!r} needs",
                permanent=True,
            )
        data = wire_data(item.raw)
        options = ["SMTPUTF8"] if needs_utf8 else []
        if session.supports("size"):
            options.insert(0, f"SIZE={len(data)}")
        encoding = "utf-8" if needs_utf8 else "ascii"
        # A send must end well inside its lease (see SEND_SHARE); a stalled relay becomes a
        # timeout, retried later.
        try:
            async with asyncio.timeout_at(deadline):
                refused = await session.begin(sender, item.recipient, options, encoding)
                if refused is None:
                    session.write(data)
        except (RelayBroken, OSError) as error:  # broken, closed, timed out
            # (TimeoutError is an OSError)
            self.drop()
            return Outcome(_describe(error))
        except Exception as error:  # this message cannot be sent at all (a malformed address)
            self.drop()  # the conversation may be half-way: start the next one afresh
            return Outcome(_describe(error), permanent=True)
        if refused is not None:  # the envelope is reset for the next message
            await self._reset(session)
            return Outcome(str(refused), refused.code >= 500, bounce_of(refused, item.recipient))
        return None

    async def finish(self, deadline: float) -> Outcome:
        """End the data ``start`` wrote: from now on the relay may take the message, so the
        caller holds the handover (see ``handover``) until it has recorded the outcome."""
        if asyncio.get_running_loop().time() >= deadline:
            # The wait for the handover used the time up. Ending the data now could hand the
            # message over after the lease's safe part: hang up instead (nothing is taken).
            self.drop()
            return Outcome("TimeoutError: no time left in the lease to end the message")
        try:
            if self.session is None:
                raise RelayBroken("the relay connection is gone")
            async with asyncio.timeout_at(deadline):
                reply = await self.session.end()
        except (RelayBroken, OSError) as error:  # taken or not: retried later
            self.drop()
            return Outcome(_describe(error))
        finally:
            self.used_at = time.monotonic()
        if reply.code != 250:  # the transaction is over either way: no reset needed
            return Outcome(str(reply), reply.code >= 500, bounce_of(reply, self.recipient, "."))
        return DELIVERED

    async def _reset(self, session: RelaySession) -> None:
        """Start the next transaction afresh after a refusal (as sendmail does)."""
        try:
            async with asyncio.timeout(QUIT_TIMEOUT_SECONDS):
                reply = await session.command(b"RSET")
        except Exception:
            self.drop()
            return
        if reply.code != 250:
            self.drop()


# --- the handover --------------------------------------------------------------------------------

_HANDOVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


@asynccontextmanager
async def handover() -> AsyncIterator[None]:
    """Hand one message over (end its data at the relay, or write its spool file) and record
    the outcome, with no other message of this event loop (of the process, in `serve`) between
    the two: so at most one message is ever sent but not marked, and a process killed at any
    moment sends at most one message twice when its lease has run out."""
    loop = asyncio.get_running_loop()
    lock = _HANDOVERS.get(loop)
    if lock is None:
        lock = _HANDOVERS[loop] = asyncio.Lock()
    async with lock:
        yield


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


Mark = tuple[Update, dict[str, object]]


def write_marks(engine: Engine, marks: Sequence[Mark]) -> list[bool | Exception]:
    """Write marks in one transaction; True for each row still ours. If that transaction
    fails, each mark is written alone, so one mark's trouble is its own (an Exception)."""
    try:
        with core_transaction(engine) as conn:
            return [conn.execute(statement, values).rowcount == 1 for statement, values in marks]
    except Exception as error:
        if len(marks) == 1:
            return [error]
    return [write_marks(engine, [mark])[0] for mark in marks]


class MarkGroup:
    """The marks the delivery workers of one loop have to write, written together (a group
    commit) while the previous group is being written: the refusals and deferrals of several
    connections share a transaction. A message sent is marked inside its handover, so no other
    message is sent before its mark is written, and a crash resends at most that one."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.loop = asyncio.get_running_loop()
        self._waiting: list[tuple[Mark, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def write(self, mark: Mark) -> bool:
        future: asyncio.Future[bool] = self.loop.create_future()
        self._waiting.append((mark, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        return await future

    async def _write(self) -> None:
        while self._waiting:
            group, self._waiting = self._waiting, []
            try:
                results = await asyncio.to_thread(
                    write_marks, self.engine, [mark for mark, _future in group]
                )
            except Exception as error:  # not even one at a time: every waiter hears of it
                results = [error] * len(group)
            for (_mark, future), result in zip(group, results, strict=True):
                if future.done():
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(result)


_MARK_GROUPS: weakref.WeakKeyDictionary[Engine, MarkGroup] = weakref.WeakKeyDictionary()


def _mark_group(engine: Engine) -> MarkGroup:
    group = _MARK_GROUPS.get(engine)
    if group is None or group.loop is not asyncio.get_running_loop():
        group = _MARK_GROUPS[engine] = MarkGroup(engine)
    return group


async def _settle(lease: Lease, item: Claimed, outcome: Outcome) -> Outcome | None:
    """Record one attempt at once (so a later crash cannot resend it); None if not ours."""
    outcome = lease.judge(item, outcome)
    if not await _mark_group(lease.engine).write(lease.mark(item, outcome)):
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
            return await _settle(lease, item, Outcome(f"could not build: {_describe(error)}"))
    if TO_PNG in item.raw or signer is not None:
        # A board's picture is drawn, and the mail signed, now rather than while moves are
        # played. On the event loop: half a millisecond, less than a worker thread's hand-offs
        # cost (and the GIL would keep the loop waiting meanwhile anyway).
        item = replace(item, raw=_finished(item.raw, signer))
    if relay is None:
        async with handover():
            outcome = await asyncio.to_thread(_spool_one, lease.settings.spool, item)
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
    """Send batches until nothing is due, or a whole batch only waits for a retry."""
    total = DeliveryReport()
    relay = RelayConnection(settings) if settings.relay_host_port else None
    try:
        while True:
            report = await deliver_batch(factory, settings, clock, batch, relay)
            total.add(report)
            # A batch that settled nothing (the relay is down) would only be tried again at once.
            if report.claimed < batch or report.settled == 0:
                return total
    finally:
        if relay is not None:
            await relay.close()


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
    engine = _engine_of(factory)
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
