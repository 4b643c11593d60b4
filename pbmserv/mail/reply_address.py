"""Mail to a seat's reply address (``pbmserv+b17-s0-TOKEN@host``): which seat it is for, whether
its sender may speak for that seat, and the commands it carries.

The sender may when the token is the seat's (see :mod:`pbmserv.core.board_mail`), the board
is still being played, the From address is the player's (registered or added), and, where
trusted authserv-ids are set, the receiving MTA's Authentication-Results pass the From
address (see :mod:`pbmserv.mail.authentication`): with them set, a reply with no such verdict
is refused too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pbmserv.core import board_mail, confirmation, replies
from pbmserv.core.addresses import users_of_address
from pbmserv.core.board_mail import ReplyTag
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import is_command
from pbmserv.core.replies import ReplyLine
from pbmserv.core.results import Section
from pbmserv.mail.authentication import Verdict
from pbmserv.mail.decode import IncomingMail


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
    return SeatReply(userid=found.user.userid, lines=replies.seat_commands(found, own, is_command))
