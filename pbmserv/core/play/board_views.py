"""What a board shows its readers: each reader's view (diagram, picture, clocks, whose move) and
the board mail to every player and observer after a move, in their own view and thread, with
links to the web view where the server has one (a player's private link in their mail alone)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.play import board_mail, consent, numbering, private_links
from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import observers, result_text, status_for
from pbmserv.core.play.positions import viewer_for
from pbmserv.core.results import MailThread, Notification
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.timing import clocks
from pbmserv.db.models import MoveRow, User
from pbmserv.games.base import (
    PUBLIC,
    Viewer,
)


def board_picture(
    ctx: CommandContext,
    board: Board,
    seat: int | None,
    user: User,
    drawn: dict[Viewer, str] | None = None,
) -> str | None:
    """The board as an SVG picture for the seat (None: an observer), for a user who takes
    board mail with pictures; None for one who takes text alone, or when the operator turned
    pictures off (``board_pictures``). ``drawn`` keeps the pictures of one mailing by viewer:
    each is drawn once, and one for all where the game draws the same for everyone."""
    if user.mail_format != "html" or not ctx.settings.board_pictures:
        return None
    viewer = PUBLIC if board.game.SPEC.one_picture_for_all else viewer_for(board, seat)
    pictures = {} if drawn is None else drawn
    if viewer not in pictures:
        pictures[viewer] = board.game.svg(board.state, viewer)
    return pictures[viewer]


def board_view(
    board: Board, seat: int | None, recipient: User | None, *, now: datetime
) -> dict[str, Any]:
    """Everything the board template shows to one viewer (the clocks as they stand at
    ``now``)."""
    game = board.game
    turn = game.to_move(board.state)
    spec = game.SPEC
    viewer = viewer_for(board, seat)
    your_turn = seat is not None and seat in turn.seats and not board.finished
    verb = next((k for k in spec.move_kinds if k.name == turn.stage), None)
    return {
        "game": spec.name,
        "title": spec.title,
        "board": board.number,
        "diagram": board.diagram(viewer),
        "players": [
            {
                "seat": s.seat,
                "role": game.seat_name(board.state, s.seat),
                "userid": s.user.display_id,
                "away": s.user.away_since is not None and not board.finished,
            }
            for s in board.row.seats
        ],
        "status": status_for(board, seat),
        "finished": board.finished,
        "result": result_text(board) if board.finished else None,
        "moves": game.move_number(board.state),
        # In the game's own numbering (a chess game numbers both sides' moves as one).
        "moves_played": numbering.played_so_far(spec, game.move_number(board.state)),
        "next_move": numbering.number_of(spec, game.move_number(board.state)),
        "last_move": game.last_move_text(board.state),
        "your_turn": your_turn,
        "prompt": turn.prompts.get(seat) if your_turn and seat is not None else None,
        "waiting_for": [board.user_at(s).display_id for s in sorted(turn.seats)],
        "userid": recipient.display_id if recipient else None,
        "has_swap": spec.has_swap,
        # The command the player replies with: "move", or the game's verb for this stage.
        "reply_verb": verb.name if verb else "move",
        "reply_args": verb.takes if verb else "MOVE",
        "time_control": board.row.time_control,
        "clocks": clocks.view(board.row, now, seat),
        "accepted": consent.is_accepted(board.row, seat) or board.finished,
    }


def movers(ctx: CommandContext, board: Board) -> list[int | None]:
    """The seat that made each move of the board, in order: the moves the web view counts its
    positions by (:func:`pbmserv.core.play.positions.moves_of`), position N after the Nth."""
    return list(
        ctx.session.scalars(
            select(MoveRow.seat)
            .where(MoveRow.game_id == board.row.id, MoveRow.kind == "move")
            .order_by(MoveRow.id)
        )
    )


def page_link(base: str, board: int, ply: int) -> str:
    """The public page of ``board`` after ``ply`` moves, on the web view at ``base``."""
    return f"{base}/g/{board}/{ply}"


def board_links(
    ctx: CommandContext,
    board: Board,
    user: User,
    seat: int | None,
    moved_by: Sequence[int | None] | None = None,
) -> dict[str, str | None] | None:
    """The web view's links in one reader's board mail; None where the server has no web view.

    ``page``: the board's public page at its position now; ``since``: the position after the
    reader's last move, the moves since marked (None: they have not moved, or nothing came
    since); ``private``: a player's own view of a board still running, their capability link,
    which goes into mail to that player alone (never to others, never into a log).
    ``moved_by``: the board's :func:`movers`, if known."""
    base = ctx.settings.web_base
    if base is None:
        return None
    seats = movers(ctx, board) if moved_by is None else moved_by
    ply = len(seats)
    links: dict[str, str | None] = {
        "page": page_link(base, board.number, ply),
        "since": None,
        "private": None,
    }
    if seat is None:
        return links
    last = max((i for i, mover in enumerate(seats) if mover == seat), default=None)
    if last is not None and last + 1 < ply:
        links["since"] = f"{page_link(base, board.number, last + 1)}?since={last + 1}"
    if not board.finished and not is_robot(user):
        token = private_links.private_token(ctx.session, board.number, user.id, seat, ctx.now())
        links["private"] = f"{base}/p/{token}/{ply}"
    return links


def notify_board(
    ctx: CommandContext,
    board: Board,
    event: str,
    private_events: Mapping[int, str] | None = None,
    *,
    new_game: bool = False,
) -> None:
    """Mail the board to every player (their own view) and every observer (public view).

    ``event`` is the public account of what happened; ``private_events`` replaces it for the
    seats that may know more (the mover of a hidden move). ``new_game``: this mail is the
    first of the board (a robot's opening move, whose board was not mailed before it).
    """
    private_events = private_events or {}
    recipients: list[tuple[User, int | None]] = [
        (s.user, s.seat) for s in board.row.seats if not s.user.disabled
    ]
    player_ids = {s.user_id for s in board.row.seats}
    recipients += [(u, None) for u in observers(ctx, board) if u.id not in player_ids]
    # A new game and a game's end come at once; other moves wait for a daily digest's users.
    news = new_game or board.finished or board.game.move_number(board.state) == 0
    recipients = [(u, seat) for u, seat in recipients if news or u.digest != "daily"]
    threads = board_mail.threads(ctx, board.row, recipients)
    drawn: dict[Viewer, str] = {}
    moved_by = movers(ctx, board) if ctx.settings.web_base and recipients else None
    for user, seat in recipients:
        seen = event if seat is None else private_events.get(seat, event)
        thread = threads[user.id]
        ctx.notify(board_notification(ctx, board, user, seat, seen, thread, drawn, moved_by))


def board_notification(
    ctx: CommandContext,
    board: Board,
    user: User,
    seat: int | None,
    event: str,
    thread: MailThread,
    drawn: dict[Viewer, str] | None = None,
    moved_by: Sequence[int | None] | None = None,
) -> Notification:
    """The board mail of ``board`` to one reader (a seat's player, or an observer), in their
    ``thread`` (which carries the seat's reply address, if any), to their own address;
    ``drawn``: the pictures of the mailing so far (see :func:`board_picture`); ``moved_by``:
    the board's :func:`movers`, if known (for the links, see :func:`board_links`)."""
    data: dict[str, Any] = {
        "view": board_view(board, seat, user, now=ctx.now()),
        "event": event,
        "reply_by_mail": thread.reply_tag is not None,
    }
    links = board_links(ctx, board, user, seat, moved_by)
    if links is not None:
        data["links"] = links
    return Notification(
        to=user.email,
        channel="board",
        kind="board",
        data=data,
        thread=thread,
        picture=board_picture(ctx, board, seat, user, drawn),
    )


def mail_own_view(ctx: CommandContext, board: Board, user: User, seat: int, event: str) -> None:
    """The board mail of ``board`` again to one of its players alone, in their own view and
    thread, at their own address (never to whoever asked, if another)."""
    thread = board_mail.thread(ctx, board.row, user, seat)
    ctx.notify(board_notification(ctx, board, user, seat, event, thread))


#: The first line of the board mail that brings a player's new private link.
NEW_LINK_EVENT = (
    "You asked for a new private link to this board: the link mailed before no longer\n"
    "works, and the one below replaces it."
)


def renew_private_link(ctx: CommandContext, board: Board, user: User, seat: int) -> bool:
    """Make the player's private link to ``board`` stop working, and mail them the board at
    once with its new one (to their own address alone). False: they had none yet."""
    had = private_links.revoke(ctx.session, board.number, user.id)
    mail_own_view(ctx, board, user, seat, NEW_LINK_EVENT)
    return had


def board_notice(
    ctx: CommandContext,
    board: Board,
    user: User,
    kind: str,
    data: dict[str, Any],
    *,
    with_picture: bool = False,
) -> None:
    """A notice about ``board`` to ``user`` (a reminder, a chat line, a proposal), in the
    user's thread of the board; ``with_picture``: it shows the board (a reminder)."""
    seat = next((s.seat for s in board.row.seats if s.user_id == user.id), None)
    thread = board_mail.thread(ctx, board.row, user, seat)
    data = {**data, "reply_by_mail": thread.reply_tag is not None}
    picture = board_picture(ctx, board, seat, user) if with_picture else None
    ctx.notify(
        Notification(
            to=user.email, channel="notice", kind=kind, data=data, thread=thread, picture=picture
        )
    )
