"""Mail to a seat's reply address (``pbmserv+b17-s0-TOKEN@host``): which seat it is for, whether
its sender may speak for that seat, and the commands it carries.

The sender may when the token is the seat's (see :mod:`pbmserv.core.play.board_mail`), the board
is still being played, the From address is the player's (registered or added), and, where
trusted authserv-ids are set, the receiving MTA's Authentication-Results pass the From
address (see :mod:`pbmserv.inbound.authentication`): with them set, a reply with no such verdict
is refused too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pbmserv.core import replies
from pbmserv.core.accounts import confirmation
from pbmserv.core.accounts.addresses import users_of_address
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import is_command
from pbmserv.core.play import board_mail
from pbmserv.core.play.board_mail import ReplyTag
from pbmserv.core.replies import ReplyLine
from pbmserv.core.results import Section
from pbmserv.db.models import GameRow
from pbmserv.inbound.authentication import Verdict
from pbmserv.inbound.reading.decode import IncomingMail


def _plus_tags(mail: IncomingMail, server_address: str) -> list[str]:
    """What follows the ``+`` in the server's addresses the message was sent to."""
    local, _at, domain = server_address.lower().rpartition("@")
    tags = []
    for address in mail.recipients:
        their_local, _at, their_domain = address.rpartition("@")
        base, plus, tag = their_local.partition("+")
        if plus and base == local and their_domain == domain:
            tags.append(tag)
    return tags


def reply_tags(mail: IncomingMail, server_address: str) -> list[ReplyTag]:
    """The seats' reply-address tags of the server's addresses the message was sent to."""
    parsed = (board_mail.parse_tag(tag) for tag in _plus_tags(mail, server_address))
    return [tag for tag in parsed if tag is not None]


def confirm_tags(mail: IncomingMail, server_address: str) -> list[str]:
    """The codes of the confirmation reply addresses the message was sent to."""
    codes = (confirmation.parse_tag(tag) for tag in _plus_tags(mail, server_address))
    return [code for code in codes if code is not None]


@dataclass
class SeatReply:
    """What a reply to a seat's address comes to: the commands to run as the seat's user
    (``userid``), or the section that says why it cannot be taken as the seat's."""

    userid: str | None = None
    lines: list[ReplyLine] = field(default_factory=list)
    refusal: Section | None = None


def _refusal(
    reason: str, game: str | None = None, board: int | None = None, **more: str | None
) -> SeatReply:
    facts = {"reason": reason, "game": game, "board": board, **more}
    shown = f"(a reply to {game} board {board})" if board is not None else "(a reply)"
    section = Section("reply_refused", facts, ok=False, summary=f"reply {reason}", command=shown)
    return SeatReply(refusal=section)


def seat_reply(
    ctx: CommandContext,
    mail: IncomingMail,
    tags: Sequence[ReplyTag],
    own: Sequence[str],
    verdict: Verdict,
) -> SeatReply:
    """Check the first tag that names a seat and read the reply's ``own`` lines as that
    seat's commands; ``verdict`` is the receiving MTA's word on the From (mta_verdict)."""
    message = next((tag for tag in tags if tag.kind == board_mail.MESSAGE), None)
    if message is not None and not any(tag.kind != board_mail.MESSAGE for tag in tags):
        return _message_reply(ctx, mail, message, own, verdict)
    found = next(
        (seat for tag in tags if (seat := board_mail.find_reply_seat(ctx.session, tag))), None
    )
    if found is None:
        return _refusal("unknown")
    game, board = found.row.game, found.row.id
    sender = mail.sender or ""
    if not replies.writes_from(ctx.session, found.user, sender):
        # Another player replying to a board mail not his own is told whose seat it is.
        others = [u for u in users_of_address(ctx.session, sender) if not u.disabled]
        return _refusal(
            "sender",
            game,
            board,
            seat_user=found.user.display_id if others else None,
            sender_user=others[0].display_id if others else None,
        )
    if verdict not in (Verdict.UNCHECKED, Verdict.PASS):
        return _refusal("authentication", game, board)
    if found.problem is not None:
        return _refusal(found.problem, game, board)
    if found.via == board_mail.CHAT and own and not replies.starts_with_command(found, own[0]):
        # A reply to a chat line is a chat line back, unless it starts with a command word.
        line = replies.chat_back(found, own)
        return SeatReply(userid=found.user.userid, lines=[line])
    return SeatReply(userid=found.user.userid, lines=replies.seat_commands(found, own, is_command))


def _message_reply(
    ctx: CommandContext,
    mail: IncomingMail,
    tag: ReplyTag,
    own: Sequence[str],
    verdict: Verdict,
) -> SeatReply:
    """A reply to a message's notice: a message back to its author, from the reader's own
    address (a whole command in it stands as written)."""
    found = board_mail.find_message_reply(ctx.session, tag)
    if found is None:
        return _refusal("unknown")
    reader, author = found
    if not replies.writes_from(ctx.session, reader, mail.sender or ""):
        return _refusal("message_sender")
    if verdict not in (Verdict.UNCHECKED, Verdict.PASS):
        return _refusal("authentication")
    if own and is_command(own[0]):
        return SeatReply(userid=reader.userid, lines=[ReplyLine(t, built=False) for t in own])
    lines = [replies.message_back(reader, author, own)] if own else []
    return SeatReply(userid=reader.userid, lines=lines)


def _shown_board(section: Section) -> int | None:
    """The board a section shows as it is now: a ``board`` answer, or a ``show`` of the
    current position."""
    if not section.ok:
        return None
    if section.kind == "board":
        return int(section.data["view"]["board"])
    if section.kind == "shown" and section.data.get("move") == section.data.get("moves"):
        return int(section.data["board"])
    return None


def answer_reply_tag(ctx: CommandContext, sections: Sequence[Section], sender: str) -> str | None:
    """The reply-address tag of the answer to ``sender``: the seat's, when the answer shows a
    board being played (the last one it shows) and the sender's address is that seat's
    player's (registered or added). The answer goes to that address alone, so the token
    reaches no one else; a ``board`` answer in that player's own view then says so."""
    for section in reversed(sections):
        number = _shown_board(section)
        if number is None:
            continue
        row = ctx.session.get(GameRow, number)
        if row is None or row.status != "active":
            return None
        for seated in sorted(row.seats, key=lambda s: s.seat):
            user = seated.user
            if user.disabled or not replies.writes_from(ctx.session, user, sender):
                continue
            view = section.data.get("view")
            if isinstance(view, dict) and view.get("userid") == user.display_id:
                section.data = {**section.data, "reply_by_mail": True}
            return board_mail.reply_tag(ctx, row, user, seated.seat)
        return None
    return None
