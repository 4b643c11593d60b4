"""Each user's mail of a board: one thread, and for a player a reply address of the seat.

Every board mail to a user carries a Message-ID that the next one answers (In-Reply-To, and
References back to the first), so mail programs keep a board in one thread. A player's board
mail also names a reply address, ``pbmserv+b17-s0-TOKEN@host``: a reply to it from the
player's own address is that seat's command on that board, with no password. The token is
secret (80 random bits), one per seat and board, new whenever the user's password or address
changes, and worth nothing once the board has ended.

A chat line's notice to a player names another address of the seat, ``pbmserv+c17-s0-MAC@host``:
a reply to it is a chat line back to the board's other readers (unless it starts with a
command word). Its MAC is made of the seat's token, so it changes with it, and gives nothing of
it away. A message's notice names ``pbmserv+m5-u3-MAC@host``: a reply from user 5's address is
a message back to user 3; its MAC (the server's key over both users, the reader's password hash
and address) changes when the reader's password or address does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from email.utils import make_msgid

from sqlalchemy import bindparam, inspect, select, update
from sqlalchemy.orm import Session

from pbmserv.core.accounts.bouncing import (
    bounce_key,  # the server's key (of the bounce addresses' MACs)
)
from pbmserv.core.context import CommandContext
from pbmserv.core.results import MailThread
from pbmserv.db.models import BoardMail, GameRow, User, table_of

#: Lower case only: some mail systems lower-case the local part of an address.
_TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_TOKEN_LENGTH = 16  # 80 bits
_TAG = re.compile(r"([bc])(\d{1,9})-s(\d{1,2})-([a-z2-7]{16})")
_MESSAGE_TAG = re.compile(r"m(\d{1,9})-u(\d{1,9})-([a-z2-7]{16})")
#: A reply address's secret (a seat's token, a chat's or a message's MAC, an address's
#: confirmation code) in any letter case: mail systems may change the case of a local part,
#: and the server reads it case-blind.
_TAG_IN_TEXT = re.compile(
    r"(\+(?:[bc]\d{1,9}-s\d{1,2}|m\d{1,9}-u\d{1,9}|confirm)-)[a-z2-7]{16}", re.IGNORECASE
)
#: What a reply to each kind of address is: a seat's commands, a chat line back to a board's
#: readers, a message back to its author.
SEAT, CHAT, MESSAGE = "seat", "chat", "message"


@dataclass(frozen=True)
class ReplyTag:
    """A reply address's tag: ``board`` and ``seat`` (a seat's or a chat's), or ``reader``
    and ``author`` (a message's), and the secret."""

    board: int | None
    seat: int | None
    token: str
    kind: str = SEAT
    reader: int | None = None
    author: int | None = None


def new_token() -> str:
    return "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(_TOKEN_LENGTH))


def reply_address(server_address: str, tag: str) -> str:
    """The server's address with ``tag`` after a ``+`` (plus addressing)."""
    local, _at, domain = server_address.rpartition("@")
    return f"{local}+{tag}@{domain}"


def mask_tokens(text: str) -> str:
    """``text`` with the token of every reply address in it masked, in any letter case (for
    logs and kept headers): ``pbmserv+b17-s0-********@host``, ``pbmserv+confirm-********@host``."""
    return _TAG_IN_TEXT.sub(r"\1********", text)


def _tag(board: int, seat: int, token: str | None) -> str:
    """A reply-address tag, as :func:`parse_tag` reads it back."""
    return f"b{board}-s{seat}-{token}"


def parse_tag(tag: str) -> ReplyTag | None:
    """The parts of a reply-address tag, or None when it is not one."""
    match = _TAG.fullmatch(tag.lower())
    if match is not None:
        kind = SEAT if match.group(1) == "b" else CHAT
        return ReplyTag(int(match.group(2)), int(match.group(3)), match.group(4), kind)
    match = _MESSAGE_TAG.fullmatch(tag.lower())
    if match is not None:
        reader, author = int(match.group(1)), int(match.group(2))
        return ReplyTag(None, None, match.group(3), MESSAGE, reader=reader, author=author)
    return None


def _mac(key: bytes, text: str) -> str:
    digest = hmac.new(key, text.encode(), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:_TOKEN_LENGTH]


def chat_tag(board: int, seat: int, seat_token: str) -> str:
    """The tag of a chat notice's reply address for a seat (``c17-s0-MAC``)."""
    return f"c{board}-s{seat}-{_chat_mac(seat_token)}"


def _chat_mac(seat_token: str) -> str:
    """A chat address's secret: made of the seat's token, and giving nothing of it away."""
    return _mac(seat_token.encode(), "chat")


def _message_mac(key: bytes, reader: User, author_id: int) -> str:
    return _mac(key, f"message|{reader.id}|{author_id}|{reader.password_hash}|{reader.email}")


def message_tag(session: Session, reader: User, author: User) -> str:
    """The tag of a message notice's reply address (``m5-u3-MAC``): ``reader`` answers
    ``author`` by replying."""
    return f"m{reader.id}-u{author.id}-{_message_mac(bounce_key(session), reader, author.id)}"


def find_message_reply(session: Session, tag: ReplyTag) -> tuple[User, User] | None:
    """The reader and the author a message's reply address stands for; None when its MAC is
    wrong (never right, or the reader's password or address changed since) or either is
    gone."""
    if tag.kind != MESSAGE or tag.reader is None or tag.author is None:
        return None
    reader, author = session.get(User, tag.reader), session.get(User, tag.author)
    if reader is None or author is None or reader.disabled or author.disabled:
        return None
    right = _message_mac(bounce_key(session), reader, author.id)
    return (reader, author) if hmac.compare_digest(right, tag.token) else None


def _mail_of(
    ctx: CommandContext, row: GameRow, user: User, seat: int | None, stored: dict[int, BoardMail]
) -> BoardMail:
    """The user's row of the board (made if need be), its seat current, a seat's token set."""
    mail = stored.get(user.id)
    if mail is None:
        mail = BoardMail(game_id=row.id, user_id=user.id, seat=seat)
        ctx.session.add(mail)
        stored[user.id] = mail
    if mail.seat != seat:
        mail.seat, mail.token = seat, None
    if seat is not None and mail.token is None:
        mail.token = new_token()
    return mail


#: Built once: every move's board mail reads its threads.
_THREADS = select(BoardMail).where(BoardMail.game_id == bindparam("board"))


def _stored(ctx: CommandContext, row: GameRow) -> dict[int, BoardMail]:
    return {m.user_id: m for m in ctx.session.scalars(_THREADS, {"board": row.id})}


def reply_tag(ctx: CommandContext, row: GameRow, user: User, seat: int) -> str:
    """The seat's reply-address tag (``b17-s0-TOKEN``), made if need be; the thread stays."""
    mail = _mail_of(ctx, row, user, seat, _stored(ctx, row))
    return _tag(row.id, seat, mail.token)


def threads(
    ctx: CommandContext, row: GameRow, recipients: Iterable[tuple[User, int | None]]
) -> dict[int, MailThread]:
    """The next mail of ``row`` to each (user, seat or None), by user id: each user's thread
    advances by one message, and a player's seat gets its reply token if it has none."""
    wanted = list(recipients)
    stored = _stored(ctx, row)
    domain = ctx.settings.address.rpartition("@")[2] or "localhost"
    result = {}
    advanced: list[tuple[BoardMail, dict[str, object]]] = []
    for user, seat in wanted:
        mail = _mail_of(ctx, row, user, seat, stored)
        message_id = make_msgid(idstring=f"b{row.id}", domain=domain)
        previous, first = mail.last_message_id, mail.first_message_id
        # The thread's first mail, when the previous one is not it (that one is In-Reply-To).
        root = (first,) if first is not None and first != previous else ()
        first = first or message_id
        if _unchanged(ctx.session, mail):
            values = {"game": row.id, "user": user.id, "first": first, "last": message_id}
            advanced.append((mail, values))
        else:
            mail.first_message_id, mail.last_message_id = first, message_id
        tag = _tag(row.id, seat, mail.token) if seat is not None else None
        result[user.id] = MailThread(message_id, previous, root, tag)
    if advanced:
        _advance(ctx.session, advanced)
    return result


_BOARD_MAIL = table_of(BoardMail)
#: A thread's next mail, written at once: every move advances its readers' threads, and
#: the ORM's flush of the rows cost several times this one statement.
_ADVANCE = (
    update(_BOARD_MAIL)
    .where(_BOARD_MAIL.c.game_id == bindparam("game"), _BOARD_MAIL.c.user_id == bindparam("user"))
    .values(first_message_id=bindparam("first"), last_message_id=bindparam("last"))
)


def _unchanged(session: Session, mail: BoardMail) -> bool:
    """Whether ``mail`` is a stored row this session has nothing to write for."""
    state = inspect(mail)
    return state.persistent and not state.modified and state.session is session


def _advance(session: Session, advanced: list[tuple[BoardMail, dict[str, object]]]) -> None:
    """Write the threads' new Message-IDs; their rows' attributes are expired rather than set,
    so that read again they come from the database: right even after a savepoint's rollback
    (which undoes the statement but would not undo values set on the objects)."""
    session.connection().execute(_ADVANCE, [values for _mail, values in advanced])
    for mail, _values in advanced:
        session.expire(mail, ["first_message_id", "last_message_id"])


def thread(ctx: CommandContext, row: GameRow, user: User, seat: int | None) -> MailThread:
    """The next mail of ``row`` to one user (see :func:`threads`)."""
    return threads(ctx, row, [(user, seat)])[user.id]


def chat_thread(ctx: CommandContext, row: GameRow, user: User, seat: int | None) -> MailThread:
    """The next mail of ``row`` to one user, a chat line's notice: a player's carries the
    seat's chat reply address (a reply is a chat line back), an observer's none."""
    found = thread(ctx, row, user, seat)
    seats = parse_tag(found.reply_tag) if found.reply_tag is not None else None
    if seat is None or seats is None:
        return replace(found, reply_tag=None)
    return replace(found, reply_tag=chat_tag(row.id, seat, seats.token))


def rotate_tokens(session: Session, user: User) -> None:
    """New reply tokens for every seat of ``user`` (their password or address changed: the
    reply addresses mailed before must stop working)."""
    for mail in session.scalars(
        select(BoardMail).where(BoardMail.user_id == user.id, BoardMail.token.is_not(None))
    ):
        mail.token = new_token()


@dataclass(frozen=True)
class ReplySeat:
    """What a reply address stands for: the board, the seat and its player, and ``problem``
    when it takes no command now: ``ended`` (the board is over) or ``disabled``."""

    row: GameRow
    seat: int
    user: User
    problem: str | None = None
    #: The kind of address replied to: the seat's own, or a chat notice's.
    via: str = SEAT


def _chat_mail(session: Session, tag: ReplyTag) -> BoardMail | None:
    """The seat's row whose token the chat address's MAC was made of, if any."""
    query = select(BoardMail).where(
        BoardMail.game_id == tag.board, BoardMail.seat == tag.seat, BoardMail.token.is_not(None)
    )
    for mail in session.scalars(query):
        assert mail.token is not None
        if hmac.compare_digest(_chat_mac(mail.token), tag.token):
            return mail
    return None


def find_reply_seat(session: Session, tag: ReplyTag) -> ReplySeat | None:
    """The seat a reply address (a seat's, or a chat notice's) stands for; None when no seat
    has that token (it never did, or it was rotated, or the seat changed hands)."""
    if tag.kind == CHAT:
        mail = _chat_mail(session, tag)
    elif tag.kind == SEAT:
        mail = session.scalar(select(BoardMail).where(BoardMail.token == tag.token))
    else:
        return None
    if mail is None or (mail.game_id, mail.seat) != (tag.board, tag.seat) or tag.seat is None:
        return None
    row = session.get(GameRow, tag.board)
    seated = next((s for s in row.seats if s.seat == tag.seat), None) if row else None
    if row is None or seated is None or seated.user_id != mail.user_id:
        return None
    problem = "ended" if row.status != "active" else "disabled" if seated.user.disabled else None
    return ReplySeat(row, tag.seat, seated.user, problem, via=tag.kind)
