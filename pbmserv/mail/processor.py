"""Processing the inbox: decode a stored message, run its commands, queue the answers.

One message is one transaction: its state changes, its reply, its board mail and the mark
"done" commit together, so a crash anywhere leaves the message pending and it is processed
again, exactly once, after a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext, utcnow
from pbmserv.core.dispatch import dispatch_line, is_command, quote
from pbmserv.core.maintenance import MaintenanceReport, run_maintenance
from pbmserv.core.parser import printable
from pbmserv.core.results import Notification, Section
from pbmserv.db.engine import transaction
from pbmserv.db.models import InboxMessage, OutboxMessage
from pbmserv.mail.compose import (
    build_message,
    render,
    render_notification,
    render_reply_body,
    reply_subject,
)
from pbmserv.mail.decode import _REPLY_PREFIX, IncomingMail, command_lines, parse_message
from pbmserv.mail.headers import safe_address

log = logging.getLogger("pbmserv.process")

MAX_ATTEMPTS = 3


def queue(
    session: Session,
    settings: Settings,
    *,
    to: str,
    kind: str,
    subject: str,
    body: str,
    now: datetime,
    inbox_id: int | None,
    answering: IncomingMail | None = None,
) -> bool:
    """Compose a message and put it in the outbox (in the caller's transaction).

    ``answering``: the message this one replies to (threading headers, auto-replied).
    False, with one log line, when ``to`` is no address we can safely write and send to.
    """
    if safe_address(to) is None:
        log.warning(
            "not answering an address we cannot write safely",
            extra={"fields": {"inbox": inbox_id, "kind": kind, "to": ascii(to)[:120]}},
        )
        return False
    message = build_message(
        settings=settings,
        to=to,
        subject=subject,
        body=body,
        now=now,
        auto_submitted="auto-replied" if answering else "auto-generated",
        in_reply_to=answering.message_id if answering else None,
        references=answering.references if answering else (),
    )
    session.add(
        OutboxMessage(
            inbox_id=inbox_id,
            message_id=message.message_id,
            recipient=to,
            kind=kind,
            raw=message.raw,
            status="pending",
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
    )
    return True


@dataclass(frozen=True)
class Handled:
    """What became of one message: a summary kept on its row, and fields for the log line."""

    summary: str
    fields: dict[str, Any]


def _handle(session: Session, settings: Settings, row: InboxMessage, now: datetime) -> Handled:
    """Process one message inside the caller's transaction."""
    mail = parse_message(row.raw, row.envelope_from, own_address=settings.address)
    if mail.auto_reason:
        row.status = "ignored"
        return Handled(
            summary=printable(f"message-id={mail.message_id} ignored: {mail.auto_reason}"),
            fields={
                "message_id": printable(mail.message_id or ""),
                "sender": mail.sender,
                "status": "ignored",
                "reason": mail.auto_reason,
            },
        )
    assert mail.sender is not None  # parse_message gives an auto_reason when there is none
    ctx = CommandContext(
        session=session,
        settings=settings,
        sender=mail.sender,
        message_id=printable(mail.message_id)[:300] if mail.message_id else None,
        clock=lambda: now,
    )
    lines = command_lines(
        mail.subject, mail.text, is_command, max_lines=settings.max_commands_per_message
    )
    if lines:
        sections = [dispatch_line(ctx, line) for line in lines]
    else:
        sections = [Section("mail/sections/no_command.txt.j2", {}, ok=False, summary="no command")]
    body = render_reply_body(sections, settings)
    subject = _quoted_subject(mail.subject, lines)
    queue(
        session,
        settings,
        to=mail.sender,
        kind="reply",
        subject=reply_subject(subject),
        body=body,
        now=now,
        inbox_id=row.id,
        answering=mail,
    )
    queue_notifications(session, settings, ctx.notifications, now, inbox_id=row.id)
    row.status = "done"
    return Handled(
        summary=printable(
            f"message-id={mail.message_id} " + "; ".join(s.summary for s in sections)
        ),
        fields={
            "message_id": printable(mail.message_id or ""),
            "sender": mail.sender,
            "status": "done",
            "commands": [s.log_fields() for s in sections],
        },
    )


def _quoted_subject(subject: str, lines: Sequence[str]) -> str:
    """The Subject to answer under, with nothing in it that could be a secret: a command is
    quoted as dispatch quotes it; a reply's subject (most likely one of ours) stays; other
    text shows its first words only."""
    if lines == [subject] or is_command(subject):
        return quote(subject)
    if _REPLY_PREFIX.match(subject):
        return subject
    words = subject.split()
    return " ".join(words[:2]) + (" ..." if len(words) > 2 else "")


def queue_notifications(
    session: Session,
    settings: Settings,
    notifications: Sequence[Notification],
    now: datetime,
    inbox_id: int | None = None,
) -> None:
    """Render and queue the board mail and notices a command (or an operator) caused."""
    for note in notifications:
        queue(
            session,
            settings,
            to=note.to,
            kind=note.kind,
            subject=note.subject,
            body=render_notification(note, settings),
            now=now,
            inbox_id=inbox_id,
        )


def _claim_next(session: Session, now: datetime) -> InboxMessage | None:
    query = (
        select(InboxMessage)
        .where(
            InboxMessage.status == "pending",
            or_(InboxMessage.not_before.is_(None), InboxMessage.not_before <= now),
        )
        .order_by(InboxMessage.id)
        .limit(1)
        # Several servers on one PostgreSQL database each take a different message.
        .with_for_update(skip_locked=True)
    )
    return session.scalar(query)


def process_one(
    factory: sessionmaker[Session], settings: Settings, clock: Callable[[], datetime] = utcnow
) -> bool:
    """Process the oldest pending message that is due. False when there was none.

    Whatever goes wrong with one message (its commands, its reply, even the commit) is
    recorded against that message alone, so it can never hold up the ones behind it.
    """
    claimed: int | None = None
    try:
        with transaction(factory) as session:
            now = clock()
            row = _claim_next(session, now)
            if row is None:
                return False
            claimed = row.id
            handled = _handle(session, settings, row, now)
            row.processed_at = now
            row.summary = handled.summary[:2000]
            row.raw = redacted(row.raw)
        log.info("processed", extra={"fields": {"inbox": claimed, **handled.fields}})
        return True
    except Exception as error:  # a bug must not lose the message or stop the server
        if claimed is None:
            raise  # the database itself: the worker logs it and tries again shortly
        log.exception("processing inbox message %s failed", claimed)
        error_text = f"{type(error).__name__}: {error}"
    if _record_failure(factory, claimed, error_text, clock()):
        _apologise(factory, settings, claimed, clock())
    return True


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
    return b"\n".join(kept)[:8192] + b"\n\n"


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
    """Process pending messages until none is left (or ``limit``); return how many."""
    count = 0
    while (limit is None or count < limit) and process_one(factory, settings, clock):
        count += 1
    return count


#: Due boards handled per maintenance transaction: short locks, bounded memory, and a crash
#: loses or repeats nothing (a chunk's reminders and their mail commit together).
MAINTENANCE_CHUNK = 200


def maintain(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    *,
    chunk: int = MAINTENANCE_CHUNK,
) -> MaintenanceReport:
    """Run the idle-board maintenance once and queue the reminders and forfeit mail, ``chunk``
    due boards per transaction."""
    now = clock()
    report = MaintenanceReport()
    after_id = 0
    while True:
        with transaction(factory) as session:
            ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
            part = run_maintenance(ctx, after_id=after_id, limit=chunk)
            queue_notifications(session, settings, ctx.notifications, now)
        report.reminded += part.reminded
        report.forfeited += part.forfeited
        report.examined += part.examined
        report.last_id = part.last_id or report.last_id
        if part.examined < chunk or part.last_id is None:
            break
        after_id = part.last_id
    if report.reminded or report.forfeited:
        fields = {"reminded": report.reminded, "forfeited": report.forfeited}
        log.info("maintenance", extra={"fields": fields})
    return report
