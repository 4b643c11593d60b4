"""Daily digests: for a user who chose ``digest=daily``, one mail a day (at ``digest_hour``)
listing every board where it is their move, each with its picture and reply address, instead of
a board mail after every move (and, where the server has a web view, a link to each board's page
and to the player's Atom feed). Game ends, new games, proposals and reminders still come at once
(see ``board_views.notify_board``). Run with the maintenance, hourly by ``serve``."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select

from pbmserv.core.accounts import unsubscribing
from pbmserv.core.accounts.bouncing import bounce_key
from pbmserv.core.context import CommandContext
from pbmserv.core.play import board_mail
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_picture, board_view, page_link
from pbmserv.core.play.boards import Board, board_of
from pbmserv.core.results import Notification
from pbmserv.db.models import User

DAILY = "daily"


def takes_digest(user: User) -> bool:
    return user.digest == DAILY


def _due_since(now: datetime, hour: int) -> datetime:
    """The latest digest time at or before ``now``: today's hour, or yesterday's."""
    today = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return today if today <= now else today - timedelta(days=1)


def send_digests(ctx: CommandContext) -> list[int]:
    """Make the digests due now (in the caller's transaction); the ids of the users mailed.
    A user is counted as done for the day even with no board waiting (no mail then)."""
    now = ctx.now()
    since = _due_since(now, ctx.settings.digest_hour)
    users = ctx.session.scalars(
        select(User)
        .where(User.digest == DAILY, User.disabled.is_(False))
        .where(or_(User.digest_sent_at.is_(None), User.digest_sent_at < since))
        .order_by(User.id)
        .with_for_update(skip_locked=True)
    ).all()
    mailed = []
    for user in users:
        user.digest_sent_at = now
        boards = _waiting_for(ctx, user)
        if boards:
            _mail_digest(ctx, user, boards, now)
            mailed.append(user.id)
    return mailed


def _waiting_for(ctx: CommandContext, user: User) -> list[tuple[Board, int]]:
    """The user's active boards where it is their move, with their seat."""
    waiting = []
    for row, seat in service.active_seats(ctx, user):
        board = board_of(row)
        if board is not None and str(seat) in row.to_move.split(","):
            waiting.append((board, seat))
    return waiting


def feed_link(base: str, userid: str) -> str:
    """The player's Atom feed on the web view at ``base``: their boards where it is their move
    and their finished games (``web/views/feeds.py``)."""
    return f"{base}/u/{userid}/feed.atom"


def _mail_digest(
    ctx: CommandContext, user: User, boards: list[tuple[Board, int]], now: datetime
) -> None:
    entries, pictures = [], []
    base = ctx.settings.web_base
    for board, seat in boards:
        tag = board_mail.reply_tag(ctx, board.row, user, seat)
        entry = {
            "view": board_view(board, seat, user, now=now),
            "reply_address": board_mail.reply_address(ctx.settings.address, tag),
        }
        if base is not None:  # the board's public page at its position now
            entry["page"] = page_link(base, board.number, board.row.ply)
        entries.append(entry)
        picture = board_picture(ctx, board, seat, user)
        if picture is not None:
            pictures.append(picture)
    data: dict[str, object] = {
        "userid": user.display_id,
        "date": now.date().isoformat(),
        "boards": entries,
    }
    if base is not None:  # the player's Atom feed of the boards waiting for them (web/)
        data["feed"] = feed_link(base, user.display_id)
    # Bulk mail: it names the one mail that turns the digest off (List-Unsubscribe).
    bulk = unsubscribing.bulk_mail(bounce_key(ctx.session), user, "digest")
    ctx.notify(
        Notification(
            to=user.email,
            channel="notice",
            kind="digest",
            data=data,
            pictures=tuple(pictures),
            bulk=bulk,
        )
    )
