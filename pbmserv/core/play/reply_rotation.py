"""New reply addresses at once: when a user's password or address changes, every seat of theirs
gets a new reply token (the addresses mailed before stop working), and each active board of
theirs is mailed to them again, in its thread, with the seat's new reply address, so that a
reply plays again straight away and not only after the opponent's next move."""

from __future__ import annotations

from typing import Any

from pbmserv.core.context import CommandContext
from pbmserv.core.play import board_mail
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_notification
from pbmserv.core.play.boards import board_of
from pbmserv.db.models import User

#: The first line of the board mail that brings a seat's new reply address.
NEW_ADDRESS_EVENT = (
    "This board's reply address has changed with your password or address: reply to this\n"
    "mail from now on (replies to older board mail of this board are not taken)."
)


def rotate_reply_addresses(ctx: CommandContext, user: User) -> list[dict[str, Any]]:
    """New reply tokens for every seat of ``user``, and the board mail of each of their active
    boards again, to their address (never the sender's), with the new reply address. Returns
    the boards mailed (``game``, ``board``), for the answer to name them."""
    board_mail.rotate_tokens(ctx.session, user)
    if user.disabled or not user.email:
        return []
    mailed: list[dict[str, Any]] = []
    for row, seat in service.active_seats(ctx, user):
        board = board_of(row)
        if board is None:  # boards are made of known games only
            continue
        thread = board_mail.thread(ctx, row, user, seat)
        ctx.notify(board_notification(ctx, board, user, seat, NEW_ADDRESS_EVENT, thread))
        mailed.append({"game": row.game, "board": row.id})
    return mailed
