"""Processing the inbox: decode a stored message, run its commands, queue the answers.

Messages are processed in batches, one transaction a batch: a message's state changes, its
reply, its board mail and its mark "done" commit together, so a crash anywhere leaves it
pending and it is processed again, exactly once, after a restart. If anything goes wrong in a
batch, it is rolled back and its messages are processed again one at a time, each in its own
transaction; a message that fails alone is recorded against itself, so one bad message never
holds up another.

argon2 password checks run outside the transaction: when a batch needs one, its
transaction steps back before writing anything, the passwords are checked, and it begins
again. On SQLite, where the transaction holds the only write lock, the listener is never kept
waiting behind argon2.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ParamSpec

from sqlalchemy import Integer, bindparam, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.accounts import confirmation
from pbmserv.core.accounts.password_checks import CheckedPassword, check_ahead, stored_hashes
from pbmserv.core.accounts.passwords import is_remembered
from pbmserv.core.context import Lookups
from pbmserv.core.dispatch import login_pairs
from pbmserv.core.play import board_mail, queued
from pbmserv.core.play.boards import boards_named, is_lock_conflict, lock_boards
from pbmserv.db.engine import transaction
from pbmserv.db.models import InboxMessage, table_of
from pbmserv.db.times import utcnow
from pbmserv.inbound.reading.decode import parse_message
from pbmserv.outbound.compose import render
from pbmserv.outbound.outbox_rows import insert_outbox, queue
from pbmserv.runtime.handling import Handled, Pending, Prepared, handle, prepare

P = ParamSpec("P")

log = logging.getLogger("pbmserv.process")

MAX_ATTEMPTS = 3
#: Messages a transaction processes: enough to share its cost, few enough that the
#: write lock (SQLite) is held only briefly.
BATCH = 20
#: A batch that has held the write lock this long lets a waiting writer in (SQLite has one
#: write lock: the listener's stores would otherwise wait for a whole batch, ~100 ms). In a
#: 2,000-move burst 5 ms stored 483-499 messages/s, 15 ms 364-389, at the same CPU a move.
YIELD_AFTER_SECONDS = 0.005

_INBOX = table_of(InboxMessage)


_DUE = (
    select(
        _INBOX.c.id,
        _INBOX.c.raw,
        _INBOX.c.envelope_from,
        _INBOX.c.envelope_to,
        _INBOX.c.dedupe_key,
    )
    .where(
        _INBOX.c.status == "pending",
        or_(_INBOX.c.not_before.is_(None), _INBOX.c.not_before <= bindparam("now")),
    )
    .order_by(_INBOX.c.id)
    .limit(bindparam("limit", type_=Integer))
    # Several servers on one PostgreSQL database each take different messages.
    .with_for_update(skip_locked=True)
)
_DUE_ONE = _DUE.where(_INBOX.c.id == bindparam("only"))


def _claim(session: Session, now: datetime, limit: int, only: int | None) -> list[Pending]:
    """The due messages, locked for this transaction (built once: it runs every batch)."""
    if only is None:
        rows = session.connection().execute(_DUE, {"now": now, "limit": limit})
    else:
        rows = session.connection().execute(_DUE_ONE, {"now": now, "limit": 1, "only": only})
    return [Pending(*row) for row in rows]


_MARK_PROCESSED = (
    update(_INBOX)
    .where(_INBOX.c.id == bindparam("inbox_id"))
    .values(
        status=bindparam("new_status"),
        processed_at=bindparam("processed_at"),
        summary=bindparam("new_summary"),
        raw=bindparam("kept_raw"),
        envelope_to=bindparam("kept_to"),
    )
)


_MARK_HELD = (
    update(_INBOX)
    .where(_INBOX.c.id == bindparam("inbox_id"))
    .values(from_address=bindparam("held_from"))
)


@dataclass
class _Batch:
    """The outcome of one batch transaction, acted on once it has committed."""

    handled: list[tuple[int, Handled]] = field(default_factory=list)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (inbox id, error)

    @property
    def count(self) -> int:
        return len(self.handled) + len(self.failed)


class _CheckPasswordsFirst(Exception):
    """Raised inside a batch's transaction (before it has written anything) when passwords
    must go through argon2: the transaction is rolled back, they are checked, and it starts
    again, so argon2 never runs while the transaction holds SQLite's write lock."""

    def __init__(self, hashes: dict[str, str], pairs: list[tuple[str, str]]) -> None:
        super().__init__("passwords to check first")
        self.hashes, self.pairs = hashes, pairs


def _prepared(settings: Settings, item: Pending) -> Prepared | Exception:
    try:
        return prepare(settings, item)
    except Exception as error:  # raised again inside the message's savepoint, as its failure
        return error


def _login_pairs(item: Prepared) -> list[tuple[str, str]]:
    try:
        return [pair for line in item.lines for pair in login_pairs(line)]
    except Exception:  # its command will fail on its own, as that message's failure
        log.exception("could not read the logins of a message")
        return []


def _unchecked_pairs(
    session: Session,
    items: Sequence[Prepared | Exception],
    checks: dict[tuple[str, str], CheckedPassword],
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The stored hashes and the (user id, password) pairs of ``items`` that argon2 must
    check; the pairs remembered as verified are added to ``checks`` at once."""
    pairs = [
        (userid.lower(), password)
        for item in items
        if isinstance(item, Prepared)
        for userid, password in _login_pairs(item)
    ]
    pairs = [pair for pair in dict.fromkeys(pairs) if pair not in checks]
    if not pairs:
        return {}, []
    hashes = stored_hashes(session.connection(), pairs)
    unchecked = []
    for userid, password in pairs:
        stored = hashes.get(userid)
        if stored is not None and is_remembered(stored, password):
            checks[(userid, password)] = CheckedPassword(stored, True)
        elif stored is not None:
            unchecked.append((userid, password))
    return hashes, unchecked


@dataclass
class _BatchRun:
    """One call of process_batch: what it was asked for, and what it has worked out so far
    (kept when its transaction steps back to check passwords)."""

    factory: sessionmaker[Session]
    settings: Settings
    clock: Callable[[], datetime]
    limit: int
    only: int | None
    #: Asked once the batch has held the write lock YIELD_AFTER_SECONDS: is a writer waiting
    #: for it (the listener, storing messages)? Then the batch commits what it has done and
    #: leaves the rest pending for the next one.
    should_yield: Callable[[], bool] | None = None
    #: The ids of the messages taken, as they are taken.
    claimed: list[int] = field(default_factory=list)
    #: Whether due messages may be left: the claim was full, or the batch made way early.
    left_some: bool = False
    prepared: dict[int, Prepared | Exception] = field(default_factory=dict)
    checks: dict[tuple[str, str], CheckedPassword] = field(default_factory=dict)

    def run(self) -> _Batch:
        """One transaction over the due messages, begun again after checking passwords
        first if need be (the last attempt checks any left inside)."""
        for attempt in range(3):
            try:
                return self._transaction(may_step_out=attempt < 2)
            except _CheckPasswordsFirst as first:
                self.checks.update(check_ahead(first.hashes, first.pairs))
        raise AssertionError("unreachable: the last attempt checks passwords inside")

    def _yields(self, began: float) -> bool:
        if self.should_yield is None or not self.claimed:
            return False
        return time.monotonic() - began >= YIELD_AFTER_SECONDS and self.should_yield()

    def _transaction(self, may_step_out: bool) -> _Batch:
        settings, prepared = self.settings, self.prepared
        batch = _Batch()
        with transaction(self.factory) as session:
            now = self.clock()
            items = _claim(session, now, self.limit, self.only)
            self.left_some = len(items) >= self.limit
            for item in items:
                if item.id not in prepared:
                    prepared[item.id] = _prepared(settings, item)
            waiting = [prepared[i.id] for i in items]
            hashes, unchecked = _unchecked_pairs(session, waiting, self.checks)
            if unchecked and may_step_out:
                raise _CheckPasswordsFirst(hashes, unchecked)
            # Every board the batch may lock, in ascending order, before any command locks
            # one: two servers' batches never each hold a board the other waits for.
            boards = _boards_of(waiting)
            lock_boards(session, boards)
            lookups = Lookups(queues=queued.queues_on(session, boards))
            outbox: list[dict[str, Any]] = []
            marks: list[dict[str, Any]] = []
            began = time.monotonic()
            for item in items:
                if self._yields(began):
                    self.left_some = True
                    break  # the messages not taken stay pending, for the next batch
                self.claimed.append(item.id)
                ready = prepared[item.id]
                if isinstance(ready, Exception):
                    raise ready
                # A failure here (a bug) aborts the batch, which is then redone one message
                # at a time (see process_batch): no savepoint a message is needed for that.
                handled = handle(session, settings, item, ready, now, self.checks, lookups)
                batch.handled.append((item.id, handled))
                outbox += handled.outbox
                marks.append(
                    {
                        "inbox_id": item.id,
                        "new_status": handled.status,
                        "processed_at": now,
                        "new_summary": handled.summary[:2000],
                        # A held message is processed whole once its address is confirmed.
                        "kept_raw": item.raw if handled.status == "held" else redacted(item.raw),
                        "kept_to": item.envelope_to
                        if handled.status == "held"
                        else masked_recipients(item.envelope_to),
                    }
                )
            insert_outbox(session, outbox)
            if marks:
                session.execute(_MARK_PROCESSED, marks)
            held = [
                {"inbox_id": i, "held_from": h.fields["sender"].lower()}
                for i, h in batch.handled
                if h.status == "held"
            ]
            if held:
                session.execute(_MARK_HELD, held)
        return batch


def _boards_of(items: Sequence[Prepared | Exception]) -> set[int]:
    """The boards a batch's messages may lock: those their command lines name, and those of
    the reply addresses they were sent to."""
    named: set[int] = set()
    for item in items:
        if isinstance(item, Prepared):
            named |= boards_named(item.lines)
            named.update(tag.board for tag in item.tags if tag.board is not None)
    return named


@dataclass(frozen=True)
class Processed:
    """What one batch did: how many messages it took, and whether due messages may be left
    (a full claim, a batch that made way, a retry): if not, the next batch waits to be woken
    by a new message instead of beginning an empty transaction at once."""

    taken: int
    more_due: bool


def process_next(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    limit: int = BATCH,
    only: int | None = None,
    should_yield: Callable[[], bool] | None = None,
) -> Processed:
    """Process up to ``limit`` due messages (or just message ``only``) in one transaction.

    If anything goes wrong (a bug in a command, a reply that cannot be built, a commit that
    fails), the batch is rolled back and the messages it took are processed again one at a
    time; a lone message that still fails is recorded as failed (and retried later, then
    quarantined), so it can never hold up the ones behind it.
    """
    run = _BatchRun(factory, settings, clock, limit, only, should_yield)
    claimed = run.claimed
    try:
        batch = run.run()
    except Exception as error:  # a bug must not lose the messages or stop the server
        if not claimed:
            raise  # the database itself: the worker logs it and tries again shortly
        if is_lock_conflict(error):  # another server's transaction won: nothing is wrong
            log.warning(
                "%s message(s) met another server's on a lock (%s); processing them again",
                len(claimed),
                type(getattr(error, "orig", error)).__name__,
            )
            if len(claimed) == 1:
                # Still pending, not counted as a failure: taken again at once.
                return Processed(1, more_due=True)
        elif len(claimed) > 1:
            log.exception("a batch of %s messages failed; one at a time now", len(claimed))
        if len(claimed) > 1:
            for inbox_id in claimed:
                process_batch(factory, settings, clock, limit=1, only=inbox_id)
            return Processed(len(claimed), more_due=True)
        log.exception("processing inbox message %s failed", claimed[0])
        batch = _Batch(failed=[(claimed[0], f"{type(error).__name__}: {error}")])
    for inbox_id, handled in batch.handled:
        log.info("processed", extra={"fields": {"inbox": inbox_id, **handled.fields}})
    for inbox_id, error_text in batch.failed:
        if _record_failure(factory, inbox_id, error_text, clock()):
            _apologise(factory, settings, inbox_id, clock())
    return Processed(batch.count, more_due=run.left_some or bool(batch.failed))


def process_one(
    factory: sessionmaker[Session], settings: Settings, clock: Callable[[], datetime] = utcnow
) -> bool:
    """Process the oldest pending message that is due. False when there was none."""
    return process_batch(factory, settings, clock, limit=1) > 0


_KEPT_HEADERS = (b"from", b"to", b"date", b"message-id", b"in-reply-to", b"references")


def redacted(raw: bytes) -> bytes:
    """What is kept of a processed message: its trace headers, never its Subject or body,
    where passwords are (deduplication has its own key column and needs nothing of this)."""
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    kept, keep = [], False
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            if keep:
                kept.append(line)
            continue
        keep = line.split(b":", 1)[0].strip().lower() in _KEPT_HEADERS
        if keep:
            kept.append(line)
    kept.append(b"X-Pbmserv-Redacted: subject and body removed once processed")
    # A reply address's token is a secret too (it stands for a password).
    masked = board_mail.mask_tokens(b"\n".join(kept).decode("utf-8", "surrogateescape"))
    return masked.encode("utf-8", "surrogateescape")[:8192] + b"\n\n"


def masked_recipients(envelope_to: str | None) -> str | None:
    """The envelope recipients kept of a processed message: reply tokens masked."""
    return None if envelope_to is None else board_mail.mask_tokens(envelope_to)


def _retry_delay(attempts: int) -> timedelta:
    """How long a failed message waits before its next try: the others go first."""
    return timedelta(seconds=min(300, 2**attempts))


def _record_failure(
    factory: sessionmaker[Session], inbox_id: int, error: str, now: datetime
) -> bool:
    """Count a failed attempt in a transaction of its own (nothing in it can fail on the
    message's content); after MAX_ATTEMPTS the message is quarantined as ``failed``, kept
    whole for the operator (``pbmserv admin inbox``). True when it was just quarantined."""
    with transaction(factory) as session:
        row = session.get(InboxMessage, inbox_id)
        if row is None or row.status != "pending":
            return False
        row.attempts += 1
        row.error = error[:4000]
        if row.attempts < MAX_ATTEMPTS:
            row.not_before = now + _retry_delay(row.attempts)
            return False
        row.status = "failed"
        row.processed_at = now
        log.error(
            "inbox message quarantined after %s failed attempts",
            row.attempts,
            extra={"fields": {"inbox": row.id, "status": "failed"}},
        )
        return True


def _apologise(
    factory: sessionmaker[Session], settings: Settings, inbox_id: int, now: datetime
) -> None:
    """Tell the sender of a quarantined message, if we can; a failure here is only logged."""
    try:
        with transaction(factory) as session:
            row = session.get(InboxMessage, inbox_id)
            if row is None:
                return
            mail = parse_message(row.raw, row.envelope_from, own_address=settings.address)
            if mail.sender and not mail.auto_reason:
                body = render("mail/internal_error.txt.j2", {"server_address": settings.address})
                queue(
                    session,
                    settings,
                    to=mail.sender,
                    kind="reply",
                    subject="pbmserv could not process your message",
                    body=body,
                    now=now,
                    inbox_id=row.id,
                    answering=mail,
                )
    except Exception:
        log.exception("could not queue the apology for quarantined inbox message %s", inbox_id)


def process_pending(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    limit: int | None = None,
) -> int:
    """Process pending messages until none is left (or about ``limit``); return how many."""
    count = 0
    while limit is None or count < limit:
        taken = process_batch(factory, settings, clock)
        if not taken:
            break
        count += taken
    return count


#: Due boards handled per maintenance transaction: short locks, bounded memory, and a crash
#: loses or repeats nothing (a chunk's reminders and their mail commit together).
def expire_held(factory: sessionmaker[Session], now: datetime, chunk: int = 500) -> int:
    """Drop the messages whose address was not confirmed in time: they stay as ``ignored``,
    redacted like any processed message. Returns how many."""
    cutoff = now - confirmation.HELD_FOR
    with transaction(factory) as session:
        confirmation.expire(session, now)  # the codes of what is dropped below stop with it
    due = (
        select(_INBOX.c.id, _INBOX.c.raw, _INBOX.c.envelope_to)
        .where(_INBOX.c.status == "held", _INBOX.c.received_at < cutoff)
        .order_by(_INBOX.c.id)
        .limit(chunk)
    )
    dropped = 0
    while True:
        with transaction(factory) as session:
            rows = session.execute(due).all()
            if rows:
                session.execute(
                    _MARK_PROCESSED,
                    [
                        {
                            "inbox_id": row.id,
                            "new_status": "ignored",
                            "processed_at": now,
                            "new_summary": "ignored: its address was never confirmed",
                            "kept_raw": redacted(row.raw),
                            "kept_to": masked_recipients(row.envelope_to),
                        }
                        for row in rows
                    ],
                )
        dropped += len(rows)
        if len(rows) < chunk:
            return dropped


def _taken(run: Callable[P, Processed]) -> Callable[P, int]:
    def taken(*args: P.args, **kwargs: P.kwargs) -> int:
        return run(*args, **kwargs).taken

    return taken


#: :func:`process_next` answering only how many messages it took (0: none was due).
process_batch = _taken(process_next)
