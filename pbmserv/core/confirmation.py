"""Confirmed addresses: the server writes to an address only once its owner has confirmed it.

A message from an address we have not heard confirmed is held, unanswered, and the address gets
one short confirmation mail (at most one a day) whose reply address carries a secret code
(``pbmserv+confirm-CODE@host``); a reply to it, or ``confirm CODE``, confirms the address and
the held messages are processed as if they had just come. An address a user asks to move to
(``email``) or to write from (``add``) gets the same mail, and the change waits for it. So
nobody can make the server mail a stranger anything but that one mail, with no one's text in
it. With ``confirm_addresses`` off (a private server) every address counts as confirmed.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.core.reply_rotation import rotate_reply_addresses
from pbmserv.core.results import MailThread, Notification
from pbmserv.db.models import Address, InboxMessage, User

#: One confirmation mail a day at most, whatever arrives from (or names) the address.
RESEND_AFTER = timedelta(days=1)
#: Held messages wait this long for their address to be confirmed, then are dropped.
HELD_FOR = timedelta(days=7)
#: Messages held for one address at most; later ones are dropped unanswered.
MAX_HELD = 10
TAG_PREFIX = "confirm-"
_CODE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_CODE_LENGTH = 16  # 80 bits
_TAG = re.compile(r"confirm-([a-z2-7]{16})")
#: A ``confirm CODE`` line's code.
CODE_PATTERN = re.compile(r"[A-Za-z2-7]{16}")


def _key(address: str) -> str:
    return address.strip().lower()


def parse_tag(tag: str) -> str | None:
    """The code of a confirmation reply-address tag (``confirm-CODE``), or None."""
    match = _TAG.fullmatch(tag.lower())
    return match.group(1) if match else None


def is_confirmed(session: Session, address: str) -> bool:
    """Has the owner of ``address`` confirmed it? (The caller checks the setting.)"""
    confirmed = session.scalar(select(Address.confirmed_at).where(Address.address == _key(address)))
    return confirmed is not None


def mark_confirmed(session: Session, address: str, now: datetime) -> None:
    """Take ``address`` as confirmed (the operator vouches for it, or its owner replied)."""
    row = session.get(Address, _key(address))
    if row is None:
        session.add(Address(address=_key(address), confirmed_at=now, created_at=now))
        session.flush()
    elif row.confirmed_at is None:
        row.confirmed_at, row.code = now, None


def request(ctx: CommandContext, address: str) -> bool:
    """Send ``address`` its confirmation mail unless one went within the day; True when one
    is sent now. The address keeps its code until it is confirmed."""
    now = ctx.now()
    row = ctx.session.get(Address, _key(address))
    if row is None:
        row = Address(address=_key(address), created_at=now)
        ctx.session.add(row)
    if row.confirmed_at is not None:
        return False
    if row.code is None:
        row.code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
    sent = row.code_sent_at
    if sent is not None and now - sent.replace(tzinfo=now.tzinfo) < RESEND_AFTER:
        ctx.session.flush()
        return False
    row.code_sent_at = now
    ctx.session.flush()
    tag = TAG_PREFIX + row.code
    ctx.notify(
        Notification(
            to=address,
            channel="confirmation",
            kind="confirmation",
            data={"code": row.code, "days": HELD_FOR.days},
            # No thread: a Message-ID of its own, and the code's reply address.
            thread=MailThread(message_id="", in_reply_to=None, references=(), reply_tag=tag),
        )
    )
    return True


@dataclass
class Confirmed:
    """What a confirmation did: the address, how many held messages it set going, and the
    users whose mail moved to it."""

    address: str
    released: int = 0
    moved: list[str] = field(default_factory=list)


def confirm(ctx: CommandContext, code: str) -> Confirmed | None:
    """Confirm the address whose code is ``code``; None when no address waits for it."""
    row = ctx.session.scalar(select(Address).where(Address.code == code.lower()))
    if row is None or row.confirmed_at is not None:
        return None
    return _release(ctx, row)


def confirm_by_operator(ctx: CommandContext, address: str) -> Confirmed | None:
    """Confirm ``address`` without its code (the operator vouches for a player whose mail
    was lost): the same release as the owner's reply. None when it is already confirmed."""
    row = ctx.session.get(Address, _key(address))
    if row is None:
        row = Address(address=_key(address), created_at=ctx.now())
        ctx.session.add(row)
    elif row.confirmed_at is not None:
        return None
    return _release(ctx, row)


def _release(ctx: CommandContext, row: Address) -> Confirmed:
    """Mark ``row`` confirmed and release what waited for it: its held messages, and the
    users whose move to it waited. One place for both ways of confirming."""
    now = ctx.now()
    row.confirmed_at, row.code = now, None
    ctx.forget_confirmations()
    released = (
        ctx.session.connection()
        .execute(
            update(InboxMessage)
            .where(InboxMessage.status == "held", InboxMessage.from_address == row.address)
            .values(status="pending", not_before=None)
        )
        .rowcount
    )
    done = Confirmed(row.address, released=released or 0)
    waiting = ctx.session.scalars(
        select(User).where(func.lower(User.pending_email) == row.address).order_by(User.id)
    )
    for user in waiting:
        new, user.pending_email = user.pending_email or row.address, None
        move_mail(ctx, user, new)
        done.moved.append(user.display_id)
    return done


def move_mail(ctx: CommandContext, user: User, new_address: str) -> None:
    """Send ``user``'s mail to ``new_address`` from now on; both addresses are told."""
    old_address = user.email
    user.email = new_address
    rotate_reply_addresses(ctx, user)  # old reply addresses stop; new ones go out at once
    data = {"userid": user.display_id, "old": old_address, "new": new_address}
    told = {ctx.sender.lower()} if ctx.sender else set()
    for address in (old_address, new_address):
        if address and address.lower() not in told:
            told.add(address.lower())
            ctx.notify(
                Notification(to=address, channel="notice", kind="address_changed", data=data)
            )


def held_count(session: Session, address: str) -> int:
    query = select(func.count()).select_from(InboxMessage)
    query = query.where(InboxMessage.status == "held", InboxMessage.from_address == _key(address))
    return session.scalar(query) or 0
