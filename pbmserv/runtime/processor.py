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
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Integer, bindparam, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.accounts import bouncing, confirmation
from pbmserv.core.accounts.password_checks import (
    CheckedPassword,
    PasswordChecks,
    check_ahead,
    stored_hashes,
)
from pbmserv.core.accounts.passwords import is_remembered
from pbmserv.core.commands.accounts import confirmed_section
from pbmserv.core.context import CommandContext, Lookups, utcnow
from pbmserv.core.digest import send_digests
from pbmserv.core.dispatch import (
    dispatch_line,
    is_command,
    login_pairs,
    looks_like_command,
)
from pbmserv.core.maintenance import MaintenanceReport, run_maintenance
from pbmserv.core.no_command import no_command_section
from pbmserv.core.parser import printable
from pbmserv.core.play import board_mail, queued
from pbmserv.core.play.board_mail import ReplyTag
from pbmserv.core.play.game_service import boards_named, is_lock_conflict, lock_boards
from pbmserv.core.replies import ReplyLine
from pbmserv.core.results import Section
from pbmserv.core.timing.clock_sweep import ClockReport, sweep_clocks
from pbmserv.db.engine import transaction
from pbmserv.db.models import InboxMessage, table_of
from pbmserv.inbound.authentication import Verdict, mta_verdict, trusted_ids
from pbmserv.inbound.bounces import bounce_tags, parse_report
from pbmserv.inbound.inbox import TOO_LARGE_KEY
from pbmserv.inbound.reading.decode import IncomingMail, command_lines, parse_message
from pbmserv.inbound.reading.reply_text import own_lines
from pbmserv.inbound.reply_address import answer_reply_tag, confirm_tags, reply_tags, seat_reply
from pbmserv.outbound.compose import render, render_reply_body
from pbmserv.outbound.outbox_rows import (
    insert_outbox,
    notification_rows,
    outbox_row,
    queue,
    queue_notifications,
)
from pbmserv.runtime.answer_subjects import quoted_subject, reply_subject

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


@dataclass(frozen=True)
class Pending:
    """A stored message waiting to be processed."""

    id: int
    raw: bytes
    envelope_from: str | None
    #: The envelope recipients (RCPT TO), one a line, where the listener knew them.
    envelope_to: str | None = None
    dedupe_key: str | None = None

    @property
    def too_large(self) -> bool:
        """A stand-in for a message too large to keep (inbound.inbox.store_too_large)."""
        return bool(self.dedupe_key and self.dedupe_key.startswith(TOO_LARGE_KEY))


@dataclass(frozen=True)
class Prepared:
    """What is worked out of a message before its transaction: the decoded mail, its command
    lines and, sent to a seat's reply address, that address's tags and the sender's own
    lines (read as the seat's commands once the tag is checked)."""

    mail: IncomingMail
    lines: list[str]
    tags: list[ReplyTag] = field(default_factory=list)
    own: list[str] = field(default_factory=list)
    #: What the receiving MTA found of the From address (see inbound.authentication).
    verdict: Verdict = Verdict.UNCHECKED
    #: Confirmation codes the message carries: in the address it was sent to, or as a
    #: ``confirm CODE`` line.
    confirm_codes: list[str] = field(default_factory=list)


def prepare(settings: Settings, item: Pending) -> Prepared:
    mail = parse_message(item.raw, item.envelope_from, own_address=settings.address)
    if item.envelope_to:  # the envelope first: a reply address may be in it alone (Bcc, alias)
        recipients = (*item.envelope_to.split("\n"), *mail.recipients)
        mail = replace(mail, recipients=tuple(dict.fromkeys(recipients)))
    if mail.auto_reason:
        return Prepared(mail, [])
    if item.too_large:  # nothing of it runs, as SMTP would have refused it: it is answered
        return Prepared(replace(mail, recipients=()), [])
    most = settings.max_commands_per_message
    lines = command_lines(mail.subject, mail.text, looks_like_command, max_lines=most)
    tags = reply_tags(mail, settings.address)
    codes = confirm_tags(mail, settings.address) + [
        words[1]
        for words in (line.split() for line in lines)
        if len(words) == 2 and words[0].lower() == "confirm"
    ]
    return Prepared(
        mail,
        lines,
        tags,
        own_lines(mail.text, most) if tags else [],
        verdict=mta_verdict(mail, trusted_ids(settings.trusted_authserv_ids)),
        confirm_codes=codes,
    )


@dataclass
class Handled:
    """What became of one message: its new status, a summary kept on its row, fields for the
    log line, and the mail to queue."""

    status: str
    summary: str
    fields: dict[str, Any]
    outbox: list[dict[str, Any]] = field(default_factory=list)


def _handle(
    session: Session,
    settings: Settings,
    item: Pending,
    prepared: Prepared,
    now: datetime,
    checks: PasswordChecks,
    lookups: Lookups | None = None,
) -> Handled:
    """Process one message inside the caller's transaction (its mail is returned, not
    queued: the batch queues the mail of the messages that succeeded); ``lookups``: the
    batch's (see core.context.Lookups)."""
    lookups = lookups if lookups is not None else Lookups()
    mail, lines = prepared.mail, prepared.lines
    message_id = printable(mail.message_id or "")
    bounce_to = bounce_tags(mail.recipients, settings.address)
    if bounce_to:  # a delivery report (or an auto-reply) to the return path of our mail
        lookups.addresses.clear()  # it may mark an address bouncing
        return _bounce_report(session, settings, item, mail, bounce_to, now)
    if mail.auto_reason:
        return Handled(
            status="ignored",
            summary=printable(f"message-id={mail.message_id} ignored: {mail.auto_reason}"),
            fields={
                "message_id": message_id,
                "sender": mail.sender,
                "status": "ignored",
                "reason": mail.auto_reason,
            },
        )
    assert mail.sender is not None  # parse_message gives an auto_reason when there is none
    if prepared.verdict is Verdict.FAIL:
        # The From is forged (DMARC failed at our MTA): an answer would go to its victim.
        reason = "the receiving MTA found its From failed DMARC"
        return Handled(
            status="ignored",
            summary=printable(f"message-id={mail.message_id} ignored: {reason}"),
            fields={"message_id": message_id, "status": "ignored", "reason": "dmarc=fail"},
        )
    ctx = CommandContext(
        session=session,
        settings=settings,
        sender=mail.sender,
        message_id=message_id[:300] if mail.message_id else None,
        clock=lambda: now,
        password_checks=checks,
        sender_authenticated=prepared.verdict is Verdict.PASS,
        lookups=lookups,
    )
    # Mail came from it: it works, and whoever writes from it can be reached
    # (core.accounts.bouncing).
    if bouncing.clear_for_sender(ctx, mail.sender):
        ctx.forget_confirmations()
    if not ctx.may_mail(mail.sender):
        return _unconfirmed(ctx, item, prepared, now)
    tagged = [confirmation.confirm(ctx, code) for code in confirm_tags(mail, settings.address)]
    seat = (
        seat_reply(ctx, mail, prepared.tags, prepared.own, prepared.verdict)
        if prepared.tags
        else None
    )
    if item.too_large:
        sections = [too_large_section(settings)]
    elif seat is not None and seat.lines:
        sections = [_dispatch_reply(ctx, line, seat.userid) for line in seat.lines]
    elif any(looks_like_command(line) for line in lines):
        sections = [dispatch_line(ctx, line) for line in lines]
    elif seat is not None and seat.refusal is not None:
        sections = [seat.refusal]
    elif tagged:
        sections = [_confirmation_reply(done) for done in tagged]
    else:
        sections = [no_command_section(lines, mail.subject)]
    # A board shown to its player carries the seat's reply address (found before the body
    # is rendered: the board then says a reply plays).
    answer_tag = answer_reply_tag(ctx, sections, mail.sender)
    reply = outbox_row(
        settings,
        to=mail.sender,
        kind="reply",
        subject=reply_subject(quoted_subject(mail.subject, lines)),
        reply_tag=answer_tag,
        body=render_reply_body(sections, settings),
        now=now,
        inbox_id=item.id,
        answering=mail,
    )
    outbox = [reply] if reply is not None else []
    outbox += notification_rows(settings, ctx.notifications, now, inbox_id=item.id)
    return Handled(
        status="done",
        summary=printable(
            f"message-id={mail.message_id} " + "; ".join(s.summary for s in sections)
        ),
        fields={
            "message_id": message_id,
            "sender": mail.sender,
            "status": "done",
            "commands": [s.log_fields() for s in sections],
        },
        outbox=outbox,
    )


def _bounce_report(
    session: Session,
    settings: Settings,
    item: Pending,
    mail: IncomingMail,
    tags: Sequence[str],
    now: datetime,
) -> Handled:
    """A message to one of our bounce addresses (see core.accounts.bouncing): the delivery report of
    the mail its tag names, counted against that mail's recipient. Never answered."""
    fields: dict[str, Any] = {"message_id": printable(mail.message_id or "")}
    key = bouncing.bounce_key(session)
    known = [i for i in (bouncing.parse_bounce_tag(tag, key) for tag in tags) if i is not None]
    if not known:
        log.warning("a message to a bounce address with a wrong code; ignored")
        summary = "ignored: sent to a bounce address whose code is wrong"
        return Handled("ignored", summary, {**fields, "status": "ignored", "reason": summary})
    report = parse_report(item.raw)
    outcome = bouncing.record_bounce(session, settings, known[0], report, now)
    ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
    for notice in outcome.notices:
        ctx.notify(notice)
    status = "done" if report is not None else "ignored"
    summary = printable(f"bounce for outbox={known[0]}: {outcome.summary}")
    fields.update(status=status, bounce=known[0], hard=outcome.hard, counted=outcome.counted)
    outbox = notification_rows(settings, ctx.notifications, now, inbox_id=item.id)
    return Handled(status, summary, fields, outbox)


def _unconfirmed(ctx: CommandContext, item: Pending, prepared: Prepared, now: datetime) -> Handled:
    """A message from an address not (yet) confirmed: it may confirm an address with a code,
    and is answered at that address; otherwise it is held, and its address gets the one
    confirmation mail (at most one a day). Nothing else is sent, whatever it says."""
    mail = prepared.mail
    assert mail.sender is not None
    replied = set(confirm_tags(mail, ctx.settings.address))
    done = [
        (d, code in replied)
        for d, code in ((confirmation.confirm(ctx, c), c) for c in prepared.confirm_codes)
        if d
    ]
    fields: dict[str, Any] = {"message_id": printable(mail.message_id or ""), "sender": mail.sender}
    if done:
        outbox = []
        for confirmed, by_reply in done:
            row = outbox_row(
                ctx.settings,
                to=confirmed.address,
                kind="reply",
                subject=reply_subject(mail.subject),
                body=render_reply_body([_confirmation_reply(confirmed, by_reply)], ctx.settings),
                now=now,
                inbox_id=item.id,
                answering=mail,
            )
            outbox += [row] if row is not None else []
        outbox += notification_rows(ctx.settings, ctx.notifications, now, inbox_id=item.id)
        summary = f"confirmed {len(done)} address(es)"
        return Handled("done", summary, {**fields, "status": "done", "result": summary}, outbox)
    if confirmation.held_count(ctx.session, mail.sender) >= confirmation.MAX_HELD:
        summary = "ignored: too many messages wait for this address's confirmation"
        return Handled("ignored", summary, {**fields, "status": "ignored", "reason": summary})
    # The mail (if one goes) names this message by the command words it has, and its code
    # runs this message alone.
    words = [line.split()[0].lower() for line in prepared.lines if is_command(line)]
    sent = confirmation.ask(
        ctx, mail.sender, confirmation.MESSAGE, inbox_id=item.id, commands=words
    )
    summary = "held until the address is confirmed" + (" (asked)" if sent else "")
    outbox = notification_rows(ctx.settings, ctx.notifications, now, inbox_id=item.id)
    return Handled("held", summary, {**fields, "status": "held", "asked": sent}, outbox)


def _confirmation_reply(done: confirmation.Confirmed | None, by_reply: bool = True) -> Section:
    """The answer to a confirmation: quoting what confirmed it, a reply to the confirmation
    mail or a ``confirm CODE`` line (its code hidden, as any secret quoted back)."""
    if done is None:
        return Section(
            "address_confirmed", {"address": None}, ok=False, summary="confirmation unknown"
        )
    section = confirmed_section(done)
    section.command = "(a reply to the confirmation mail)" if by_reply else "confirm " + "*" * 8
    return section


def too_large_section(settings: Settings) -> Section:
    """The answer to a message over the size limit that a hosted mailbox took in."""
    limit = settings.max_message_bytes
    return Section(
        "too_large",
        {"limit_kb": limit // 1024},
        ok=False,
        summary="too large",
        command=f"(a message over {limit // 1024} KB)",
    )


def _dispatch_reply(ctx: CommandContext, line: ReplyLine, userid: str | None) -> Section:
    """A command of a reply to a seat's address; one built from bare words runs as the
    seat's user, who was checked instead of a password."""
    if not line.built:
        return dispatch_line(ctx, line.text)
    ctx.reply_login = userid
    try:
        section = dispatch_line(ctx, line.text)
    finally:
        ctx.reply_login = None
    if line.guessed and section.kind == "error" and section.data.get("syntax"):
        # The first line was no move (a move the rules forbid quotes no syntax): how a reply
        # is read is what the player needs to hear, not the command's full syntax.
        section.data = {**section.data, "syntax": None, "hint": REPLY_FIRST_LINE_HINT}
    return section


#: Said when a reply's first line, read as the move, did not work as one.
REPLY_FIRST_LINE_HINT = (
    "The first line of your reply (after a greeting) is read as your move: write the move\n"
    'alone on it, or start it with a command word such as "resign" or "chat TEXT".\n'
    'Send "help replying" for more.'
)


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
                handled = _handle(session, settings, item, ready, now, self.checks, lookups)
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


def process_batch(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    limit: int = BATCH,
    only: int | None = None,
    should_yield: Callable[[], bool] | None = None,
) -> int:
    """Process up to ``limit`` due messages (or just message ``only``) in one transaction;
    return how many were taken (0: none was due). ``should_yield``: see _BatchRun. See
    :func:`process_next` for the whole answer."""
    return process_next(factory, settings, clock, limit, only, should_yield).taken


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
    report.expired = expire_held(factory, now)
    with transaction(factory) as session:
        ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
        report.digested = send_digests(ctx)
        queue_notifications(session, settings, ctx.notifications, now)
    if report.reminded or report.forfeited or report.digested or report.expired:
        fields = {
            "reminded": report.reminded,
            "forfeited": report.forfeited,
            "digests": len(report.digested),
            "unconfirmed_dropped": report.expired,
        }
        log.info("maintenance", extra={"fields": fields})
    return report


def sweep(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    *,
    chunk: int = MAINTENANCE_CHUNK,
) -> ClockReport:
    """Run the clock sweep (core.timing.clock_sweep) and queue its mail, ``chunk`` due boards per
    transaction, until nothing is due."""
    now = clock()
    report = ClockReport()
    while True:
        with transaction(factory) as session:
            ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
            part = sweep_clocks(ctx, limit=chunk)
            queue_notifications(session, settings, ctx.notifications, now)
        for name in ("reminded", "lost_on_time", "vacations_begun", "vacations_ended"):
            getattr(report, name).extend(getattr(part, name))
        report.examined += part.examined
        if part.examined < chunk:
            break
    if report.lost_on_time or report.vacations_begun or report.vacations_ended:
        fields = {
            "lost_on_time": report.lost_on_time,
            "vacations_begun": report.vacations_begun,
            "vacations_ended": report.vacations_ended,
        }
        log.info("clocks", extra={"fields": fields})
    return report


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
