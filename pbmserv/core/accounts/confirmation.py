"""Confirmed addresses: the server writes to an address only once its owner has confirmed it,
and runs what waits for an address only when its owner says yes to that very request.

A message from an address we have not heard confirmed is held, unanswered, and the address gets
one short confirmation mail (at most one a day, whatever arrives from or names the address).
The mail names the one request it asks about, by kind and time and with nobody's text in it,
and its reply address carries that request's own secret code (``pbmserv+confirm-CODE@host``).
A reply to it, or ``confirm CODE``, confirms the address and runs that request alone: the held
message is processed as if it had just come, or the user's ``email`` (move mail here) or ``add``
(write from here) is made. Whatever else waits for the address (more messages in its name,
which anyone can forge, and other users' requests) is not run by it: the owner is told how many
wait, and they are dropped after HELD_FOR. A user's ``email``/``add`` naming an address that is
not yet theirs asks its owner the same way even when the address is confirmed: a yes to one
request is never a yes to another's. With ``confirm_addresses`` off (a private server) every
address counts as confirmed and nothing waits.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from pbmserv.core.accounts.addresses import MAX_ADDRESSES, users_of_address, users_registered_at
from pbmserv.core.context import CommandContext
from pbmserv.core.play.reply_rotation import rotate_reply_addresses
from pbmserv.core.results import MailThread, Notification
from pbmserv.db.models import Address, HeldRequest, InboxMessage, User, UserAddress

#: One confirmation mail a day at most, whatever arrives from (or names) the address.
RESEND_AFTER = timedelta(days=1)
#: Held requests wait this long for their address's owner, then are dropped.
HELD_FOR = timedelta(days=7)
#: Messages held for one address at most; later ones are dropped unanswered.
MAX_HELD = 10
TAG_PREFIX = "confirm-"
_CODE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_CODE_LENGTH = 16  # 80 bits
_TAG = re.compile(r"confirm-([a-z2-7]{16})")
#: A ``confirm CODE`` line's code.
CODE_PATTERN = re.compile(r"[A-Za-z2-7]{16}")

#: What a held request is: a message from the address, or a user's ``email``/``add`` to it.
MESSAGE, EMAIL, ADD = "message", "email", "add"
#: Command words a confirmation mail names at most (words the server knows, never the
#: sender's own text: a user id or a name is the forger's to choose).
_NAMED_COMMANDS = 5


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


def _aware(moment: datetime, like: datetime) -> datetime:
    """``moment`` as stored (SQLite keeps no zone) comparable with ``like``."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=like.tzinfo)


def ask(
    ctx: CommandContext,
    address: str,
    kind: str,
    *,
    inbox_id: int | None = None,
    user: User | None = None,
    commands: Sequence[str] = (),
) -> bool:
    """Ask the owner of ``address`` about one request (``kind``: MESSAGE with its held
    ``inbox_id`` and the command words it has, or EMAIL/ADD by ``user``), unless a mail went
    to the address within the day. True: the mail goes now, and the request waits for its
    code. False: nothing is sent or kept (only a mailed code could ever run a request)."""
    now = ctx.now()
    row = ctx.session.get(Address, _key(address))
    if row is None:
        row = Address(address=_key(address), created_at=now)
        ctx.session.add(row)
    sent = row.code_sent_at
    if sent is not None and now - _aware(sent, now) < RESEND_AFTER:
        ctx.session.flush()
        return False
    row.code_sent_at = now
    ctx.session.flush()
    others = waiting(ctx.session, row.address)  # counted before this one is kept
    held = HeldRequest(
        address=row.address,
        kind=kind,
        code="".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH)),
        inbox_id=inbox_id,
        user_id=user.id if user is not None else None,
        requested_at=now,
    )
    ctx.session.add(held)
    ctx.session.flush()
    data = {
        "code": held.code,
        "days": HELD_FOR.days,
        "request": kind,
        "at": now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commands": list(dict.fromkeys(commands))[:_NAMED_COMMANDS],
        "others": others,
        "confirmed": row.confirmed_at is not None,
    }
    ctx.notify(
        Notification(
            to=address,
            channel="confirmation",
            kind="confirmation",
            data=data,
            # No thread: a Message-ID of its own, and the code's reply address.
            thread=MailThread(
                message_id="", in_reply_to=None, references=(), reply_tag=TAG_PREFIX + held.code
            ),
        )
    )
    return True


@dataclass
class Confirmed:
    """What a confirmation did: the address, and what became of the one request it was for
    (``request``: its kind): the held message set going, the user whose mail moved to the
    address or who may write from it, or why that could not be done; and how many other
    requests still wait for the address (not run)."""

    address: str
    request: str | None = None
    released: int = 0
    moved: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    #: "called_off", "taken" or "full": the request named could not be done.
    refused: str | None = None
    waiting: int = 0


def confirm(ctx: CommandContext, code: str) -> Confirmed | None:
    """Confirm the address whose request has code ``code``, and run that request; None when
    no request waits for it (used already, expired, or never given)."""
    held = ctx.session.scalar(select(HeldRequest).where(HeldRequest.code == code.lower()))
    if held is None or ctx.now() - _aware(held.requested_at, ctx.now()) >= HELD_FOR:
        return None
    return _release(ctx, held)


def confirm_by_operator(ctx: CommandContext, address: str) -> Confirmed | None:
    """Confirm ``address`` without its code (the operator vouches for a player whose mail was
    lost): what the owner's reply would have done for the message of their own that was last
    asked about. Other users' requests to use the address wait for its owner's own yes.
    None when it is already confirmed."""
    row = ctx.session.get(Address, _key(address))
    if row is not None and row.confirmed_at is not None:
        return None
    newest = ctx.session.scalar(
        select(HeldRequest)
        .where(HeldRequest.address == _key(address), HeldRequest.kind == MESSAGE)
        .order_by(HeldRequest.id.desc())
        .limit(1)
    )
    if newest is not None:
        return _release(ctx, newest)
    mark_confirmed(ctx.session, address, ctx.now())
    ctx.forget_confirmations()
    return Confirmed(_key(address), waiting=waiting(ctx.session, address))


def _release(ctx: CommandContext, held: HeldRequest) -> Confirmed:
    """Confirm ``held``'s address and run ``held``, and nothing else: one place for both ways
    of confirming."""
    mark_confirmed(ctx.session, held.address, ctx.now())
    ctx.forget_confirmations()
    done = Confirmed(held.address, request=held.kind)
    if held.kind == MESSAGE:
        done.released = (
            ctx.session.connection()
            .execute(
                update(InboxMessage)
                .where(InboxMessage.id == held.inbox_id, InboxMessage.status == "held")
                .values(status="pending", not_before=None)
            )
            .rowcount
        ) or 0
    else:
        user = ctx.session.get(User, held.user_id) if held.user_id is not None else None
        done.refused = _grant(ctx, held, user, done)
    ctx.session.delete(held)
    ctx.session.flush()
    done.waiting = waiting(ctx.session, held.address)
    return done


def _grant(
    ctx: CommandContext, held: HeldRequest, user: User | None, done: Confirmed
) -> str | None:
    """Make ``user``'s ``email`` or ``add`` that the owner said yes to, checked again as the
    command checks it (things may have changed since); why not, when it cannot be."""
    address = held.address
    if user is None or user.disabled:
        return "called_off"
    if held.kind == EMAIL and (user.pending_email or "").lower() != address:
        return "called_off"  # moved elsewhere, or called off, since
    if any(other.id != user.id for other in users_of_address(ctx.session, address)):
        return "taken"
    if held.kind == EMAIL:
        if users_registered_at(ctx.session, address) >= ctx.settings.max_accounts_per_address:
            return "full"
        new, user.pending_email = user.pending_email or address, None
        move_mail(ctx, user, new)
        done.moved.append(user.display_id)
        return None
    if ctx.session.get(UserAddress, address) is None and address != user.email.lower():
        added = select(func.count()).select_from(UserAddress).where(UserAddress.user_id == user.id)
        if (ctx.session.scalar(added) or 0) >= MAX_ADDRESSES:
            return "full"
        ctx.session.add(UserAddress(address=address, user_id=user.id))
    done.added.append(user.display_id)
    return None


def waiting(session: Session, address: str) -> int:
    """How many requests wait for ``address``'s owner: messages held in its name, and other
    users' ``email``/``add`` asking for it."""
    messages = held_count(session, address)
    asked = select(func.count()).select_from(HeldRequest)
    asked = asked.where(HeldRequest.address == _key(address), HeldRequest.kind != MESSAGE)
    return messages + (session.scalar(asked) or 0)


def expire(session: Session, now: datetime) -> int:
    """Drop the requests older than HELD_FOR (their held messages are dropped beside them)."""
    stale = delete(HeldRequest).where(HeldRequest.requested_at < now - HELD_FOR)
    return session.connection().execute(stale).rowcount or 0


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
