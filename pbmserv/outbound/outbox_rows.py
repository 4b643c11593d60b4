"""The outbox rows of composed mail: an answer, a board mail, a notice, rendered and built
(or left as a draft that delivery builds, out of the processing transaction's lock) and
inserted in the caller's transaction, so that a message's mail commits with its changes."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import insert
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.play.board_mail import reply_address
from pbmserv.core.results import BulkMail, MailThread, Notification
from pbmserv.db.models import OutboxMessage, table_of
from pbmserv.db.wakes import OUTBOX, announce
from pbmserv.outbound.compose import build_message, message_id_for, render_notification
from pbmserv.outbound.delivery_items import PRIVATE_BOARD_KIND
from pbmserv.outbound.drafts import draft_raw
from pbmserv.outbound.headers import safe_address
from pbmserv.outbound.wording import notice_subject

log = logging.getLogger("pbmserv.process")


class Answered(Protocol):
    """What an answer needs of the message it answers (an inbound ``IncomingMail``): its id
    and references, for the threading headers."""

    @property
    def message_id(self) -> str | None: ...

    @property
    def references(self) -> tuple[str, ...]: ...


_OUTBOX = table_of(OutboxMessage)


def outbox_row(
    settings: Settings,
    *,
    to: str,
    kind: str,
    subject: str,
    body: str,
    now: datetime,
    inbox_id: int | None,
    answering: Answered | None = None,
    thread: MailThread | None = None,
    picture: str | None = None,
    pictures: Sequence[str] = (),
    reply_tag: str | None = None,
    draft: bool = False,
    bulk: BulkMail | None = None,
) -> dict[str, Any] | None:
    """The outbox row of one composed message; ``answering`` is the message it replies to
    (threading headers, auto-replied), ``thread`` its place in a board's thread (threading
    headers, the seat's reply address), ``reply_tag`` a reply address's tag where ``thread``
    has none (a message's notice, a board answered to its player); ``draft``: queued as the
    facts delivery builds it from (see outbound.drafts), not built now. None, with one log line,
    when ``to`` is no address we can safely write and send to."""
    if safe_address(to) is None:
        log.warning(
            "not answering an address we cannot write safely",
            extra={"fields": {"inbox": inbox_id, "kind": kind, "to": ascii(to)[:120]}},
        )
        return None
    if thread is not None:
        threading: dict[str, Any] = {
            "message_id": thread.message_id,
            "in_reply_to": thread.in_reply_to,
            "references": thread.references,  # build_message adds in_reply_to after them
            "reply_to": reply_address(settings.address, thread.reply_tag)
            if thread.reply_tag
            else None,
        }
    else:
        threading = {
            "in_reply_to": answering.message_id if answering else None,
            "references": answering.references if answering else (),
            "reply_to": reply_address(settings.address, reply_tag) if reply_tag else None,
        }
    facts: dict[str, Any] = {
        "to": to,
        "subject": subject,
        "body": body,
        "now": now,
        "auto_submitted": "auto-replied" if answering else "auto-generated",
        "picture": picture,
        "pictures": pictures,
        **threading,
    }
    if draft:
        message_id = message_id_for(settings, facts.pop("message_id", None))
        raw = draft_raw(message_id=message_id, **facts)
    else:
        message = build_message(settings=settings, bulk=bulk, **facts)
        message_id, raw = message.message_id, message.raw
    return {
        "inbox_id": inbox_id,
        "message_id": message_id,
        "recipient": to,
        "kind": kind,
        "raw": raw,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }


def insert_outbox(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Put composed messages in the outbox, in the caller's transaction, in their order."""
    if rows:
        session.execute(insert(_OUTBOX), list(rows))
        announce(session, OUTBOX)  # other servers' delivery (PostgreSQL: db.wakes)


def queue(session: Session, settings: Settings, **message: Any) -> bool:
    """Compose a message (the keywords of :func:`outbox_row`) and put it in the outbox, in
    the caller's transaction. False when its address cannot safely be written."""
    row = outbox_row(settings, **message)
    if row is None:
        return False
    insert_outbox(session, [row])
    return True


def notification_rows(
    settings: Settings,
    notifications: Sequence[Notification],
    now: datetime,
    inbox_id: int | None = None,
) -> list[dict[str, Any]]:
    """The outbox rows of the board mail and notices a command (or an operator) caused."""
    rows = []
    for note in notifications:
        row = outbox_row(
            settings,
            to=note.to,
            kind=_outbox_kind(note),
            subject=notice_subject(note),
            body=render_notification(note, settings),
            now=now,
            inbox_id=inbox_id,
            thread=note.thread,
            picture=note.picture,
            pictures=note.pictures,
            reply_tag=note.reply_tag,
            bulk=note.bulk,
            # A move's board mail, the most queued, is built in delivery: out of the lock.
            draft=note.channel == "board",
        )
        if row is not None:
            rows.append(row)
    return rows


def queue_notifications(
    session: Session,
    settings: Settings,
    notifications: Sequence[Notification],
    now: datetime,
    inbox_id: int | None = None,
) -> None:
    """Render and queue the board mail and notices a command (or an operator) caused."""
    insert_outbox(session, notification_rows(settings, notifications, now, inbox_id))


def _outbox_kind(note: Notification) -> str:
    """The outbox kind of a notification: its channel, but a board mail that carries its
    player's private link is kept only until sent, as a password is (SECRET_KINDS): the link
    is a capability the database otherwise holds only as a hash."""
    links = note.data.get("links") or {}
    return PRIVATE_BOARD_KIND if note.channel == "board" and links.get("private") else note.channel
