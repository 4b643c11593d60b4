"""Which delivery run may send and mark an outbox row: a row is claimed with a lease, renewed
while it is being sent, and every attempt is marked at once (sent, failed, deferred) in a group
commit, so that a crash resends at most the one message being handed over. A sent message that
carried a secret keeps only its header block."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Update,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.db.engine import (
    core_transaction,
    core_transaction_if_free,
    engine_of,
    is_postgres,
)
from pbmserv.db.models import OutboxMessage, table_of
from pbmserv.db.times import as_utc
from pbmserv.outbound.delivery_items import GIVE_UP_AFTER, SECRET_KINDS, Claimed, Outcome

log = logging.getLogger("pbmserv.delivery")


# --- the lease: which run may send and mark a row ------------------------------------------------

_outbox = table_of(OutboxMessage)
# Literally in the SQL, so that the planners can use the partial index on pending mail.
_PENDING: ColumnElement[str] = literal_column("'pending'")

# A send must end well inside the lease, or another server could take the message over and send
# it too: a send may last half the lease, and the lease is renewed before a send once a quarter
# of it has gone by, so a send always ends with a quarter of the lease to spare.
SEND_SHARE = 0.5
RENEW_SHARE = 0.25


#: The same table again, for a recipient's earlier mail.
_earlier = _outbox.alias("earlier")
#: Earlier mail to the same recipient that another run is sending now (its lease is live). A
#: claim passes over such mail: sent over another connection it could overtake the earlier one,
#: and a player would see a board older than the one they have. The recipient's next claim
#: takes it, once the earlier is marked. (Mail waiting for a retry holds nothing up.)
_EARLIER_IN_FLIGHT = (
    exists()
    .where(
        _earlier.c.recipient == _outbox.c.recipient,
        _earlier.c.status == _PENDING,
        _earlier.c.id < _outbox.c.id,
        _earlier.c.lease_until >= bindparam("now"),
    )
    .correlate(_outbox)
)
#: Due mail no run holds: what a claim now could take, or passes over while the recipient's
#: earlier mail is in flight.
_UNCLAIMED = (
    select(func.count())
    .select_from(_outbox)
    .where(
        _outbox.c.status == _PENDING,
        _outbox.c.next_attempt_at <= bindparam("now"),
        or_(_outbox.c.lease_until.is_(None), _outbox.c.lease_until < bindparam("now")),
    )
)


def unclaimed_due(engine: Engine, now: datetime) -> int:
    """How many due messages no run holds a lease on."""
    with engine.connect() as conn:
        return conn.scalar(_UNCLAIMED, {"now": now}) or 0


#: On PostgreSQL the claims of all servers take turns (a lock held to the end of the claim's
#: short transaction): each then sees the leases of the claims before it, which the check above
#: needs. SQLite's claims take turns on its write lock anyway.
CLAIMS_TAKE_TURNS = select(func.pg_advisory_xact_lock(0x70626D_636C61696D))


@lru_cache(maxsize=8)
def claim_statement(batch: int) -> Update:
    """The claim of up to ``batch`` due rows (built once a size: a claim every batch)."""
    due = (
        select(_outbox.c.id)
        .where(
            _outbox.c.status == _PENDING,
            _outbox.c.next_attempt_at <= bindparam("now"),
            or_(_outbox.c.lease_until.is_(None), _outbox.c.lease_until < bindparam("now")),
            ~_EARLIER_IN_FLIGHT,
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


class Lease:
    """One delivery run's hold on the outbox rows it claimed; every write checks the owner.

    Each method is one short transaction of one statement (SQLAlchemy Core, no ORM objects):
    this bookkeeping runs for every message sent.
    """

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, clock: Callable[[], datetime]
    ) -> None:
        self.engine = engine_of(factory)
        self.settings = settings
        self.clock = clock
        self.owner = secrets.token_hex(16)
        self.length = timedelta(seconds=settings.delivery_lease_seconds)
        # Measured on the monotonic clock: the age of a lease is real time gone by.
        self.renewed_at = time.monotonic()
        self.held: set[int] = set()

    def claim(self, batch: int) -> list[Claimed]:
        """Lease up to ``batch`` due rows no other run holds, in one statement."""
        claimed = self._claim(batch, core_transaction)
        assert claimed is not None
        return claimed

    def claim_at_once(self, batch: int) -> list[Claimed] | None:
        """:meth:`claim` here and now where that needs no wait (see write_marks_at_once);
        None when it would have to wait, or went wrong (the caller claims in a thread)."""
        try:
            return self._claim(batch, core_transaction_if_free)
        except Exception:
            return None

    def _claim(
        self,
        batch: int,
        begin: Callable[[Engine], AbstractContextManager[Connection | None]],
    ) -> list[Claimed] | None:
        now = self.clock()
        # Measured from before the claim: the lease is never thought younger than it is.
        self.renewed_at = time.monotonic()
        with begin(self.engine) as conn:
            if conn is None:
                return None
            if is_postgres(self.engine):
                conn.execute(CLAIMS_TAKE_TURNS)
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
        if self.clock() - as_utc(item.created_at) < GIVE_UP_AFTER:
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


def write_marks_at_once(engine: Engine, marks: Sequence[Mark]) -> list[bool] | None:
    """:func:`write_marks` here and now where that needs no wait (SQLite, its write lock
    free: a tenth of a millisecond, less than a worker thread's hand-offs); None when it
    would have to wait, or anything went wrong (the caller writes them in a thread then)."""
    try:
        with core_transaction_if_free(engine) as conn:
            if conn is None:
                return None
            return [conn.execute(statement, values).rowcount == 1 for statement, values in marks]
    except Exception:
        return None


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
            marks = [mark for mark, _future in group]
            at_once = write_marks_at_once(self.engine, marks)
            results: list[bool | Exception]
            if at_once is not None:
                results = list(at_once)
            else:
                try:
                    results = await asyncio.to_thread(write_marks, self.engine, marks)
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


def mark_group(engine: Engine) -> MarkGroup:
    group = _MARK_GROUPS.get(engine)
    if group is None or group.loop is not asyncio.get_running_loop():
        group = _MARK_GROUPS[engine] = MarkGroup(engine)
    return group
