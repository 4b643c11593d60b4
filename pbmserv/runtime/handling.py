"""One message handled, inside its batch's transaction: a delivery report counted, automatic
mail ignored, an unconfirmed address's message held (or a confirmation run), a reply to a
seat's address read as that seat's commands, the commands dispatched and the answer composed.
What is to be mailed is returned with the message's new status, not queued (the batch queues
the mail of the messages that succeeded)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.accounts import bouncing, confirmation
from pbmserv.core.accounts.password_checks import PasswordChecks
from pbmserv.core.commands.accounts import confirmed_section
from pbmserv.core.context import CommandContext, Lookups
from pbmserv.core.dispatch import dispatch_line, is_command, looks_like_command
from pbmserv.core.no_command import no_command_section
from pbmserv.core.parser import printable
from pbmserv.core.play.board_mail import ReplyTag
from pbmserv.core.replies import ReplyLine
from pbmserv.core.results import Section
from pbmserv.inbound.authentication import Verdict, mta_verdict, trusted_ids
from pbmserv.inbound.bounces import bounce_tags, parse_report
from pbmserv.inbound.inbox import TOO_LARGE_KEY
from pbmserv.inbound.reading.decode import IncomingMail, command_lines, parse_message
from pbmserv.inbound.reading.reply_text import own_lines
from pbmserv.inbound.reply_address import answer_reply_tag, confirm_tags, reply_tags, seat_reply
from pbmserv.outbound.compose import render_reply_body
from pbmserv.outbound.outbox_rows import notification_rows, outbox_row
from pbmserv.runtime.answer_subjects import quoted_subject, reply_subject

log = logging.getLogger("pbmserv.process")


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


def handle(
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
