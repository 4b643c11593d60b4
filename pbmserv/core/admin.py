"""What the operator may do from the shell: users, boards, inbox and outbox.

Each function runs in the caller's transaction with a CommandContext whose sender is None; a
mistake raises CommandError (nothing changes). Every change to a board is written into its
history and mailed to its players through ``ctx.notify``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, Row, Select, delete, func, select, update

from pbmserv.core.accounts import bouncing, confirmation, unreachable, unsubscribing
from pbmserv.core.accounts.passwords import hash_password
from pbmserv.core.commands.accounts import ADDRESS_PATTERN
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import article
from pbmserv.core.play import game_service as service
from pbmserv.core.play import numbering, private_links
from pbmserv.core.play.board_views import notify_board
from pbmserv.core.play.boards import Board, load_board, parse_board_number
from pbmserv.core.play.reply_rotation import rotate_reply_addresses
from pbmserv.core.ratings import service as ratings
from pbmserv.core.results import CommandError, Notification
from pbmserv.core.timing import clocks
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.models import (
    Address,
    BoardMail,
    GameRow,
    InboxMessage,
    MoveRow,
    Observer,
    OutboxMessage,
    Seat,
    User,
)
from pbmserv.games import find_game
from pbmserv.games.base import OMNISCIENT, PUBLIC, Outcome, Termination

# --- users ---------------------------------------------------------------------------------


def list_users(
    ctx: CommandContext, disabled_only: bool = False, bouncing_only: bool = False
) -> list[dict[str, Any]]:
    """The users; ``bouncing_only``: those whose address is marked bouncing
    (core.accounts.bouncing), with its count of hard bounces, since when, and the last report."""
    if bouncing_only:
        return _bouncing_users(ctx, disabled_only)
    active = (
        select(Seat.user_id, func.count().label("boards"))
        .join(GameRow, GameRow.id == Seat.game_id)
        .where(GameRow.status == "active")
        .group_by(Seat.user_id)
        .subquery()
    )
    query = select(User, func.coalesce(active.c.boards, 0)).outerjoin(
        active, active.c.user_id == User.id
    )
    return [
        {
            **_who(user),
            "name": user.full_name,
            "disabled": user.disabled,
            "active_boards": boards,
            "since": user.created_at.date().isoformat(),
            "robot": user.robot_level,  # the robot's level; None for a person
        }
        for user, boards in _listing(ctx, query, disabled_only)
    ]


def _bouncing_users(ctx: CommandContext, disabled_only: bool) -> list[dict[str, Any]]:
    query = (
        select(User, Address)
        .join(Address, Address.address == func.lower(User.email))
        .where(Address.bouncing_since.is_not(None))
    )
    return [
        {
            **_who(user),
            "bounces": address.hard_bounces,
            "bouncing_since": _stamp(address.bouncing_since),
            "last_bounce_at": _stamp(address.last_bounce_at),
            "last_bounce": address.last_bounce or "",
        }
        for user, address in _listing(ctx, query, disabled_only)
    ]


def _listing(
    ctx: CommandContext, query: Select[User, Any], disabled_only: bool
) -> Sequence[Row[User, Any]]:
    """The rows of a users listing (``query`` selects the User first): by user id, only the
    disabled ones when asked."""
    query = query.order_by(User.userid)
    if disabled_only:
        query = query.where(User.disabled.is_(True))
    return ctx.session.execute(query).all()


def _who(user: User) -> dict[str, Any]:
    return {"userid": user.display_id, "email": user.email}


def _stamp(when: datetime | None) -> str:
    return "" if when is None else when.isoformat(timespec="seconds")


def _user(ctx: CommandContext, userid: str) -> User:
    user = ctx.find_user(userid)
    if user is None:
        raise CommandError(f'there is no user "{userid}"')
    return user


def show_user(ctx: CommandContext, userid: str) -> dict[str, Any]:
    user = _user(ctx, userid)
    boards = ctx.session.execute(
        select(GameRow.id, GameRow.game, GameRow.status)
        .join(Seat, Seat.game_id == GameRow.id)
        .where(Seat.user_id == user.id)
        .order_by(GameRow.id)
    ).all()
    return {
        "userid": user.display_id,
        "email": user.email,
        "name": user.full_name,
        "disabled": user.disabled,
        "since": user.created_at.isoformat(timespec="seconds"),
        "boards": [f"{game} {number} ({status})" for number, game, status in boards],
    }


def set_disabled(ctx: CommandContext, userid: str, disabled: bool) -> str:
    user = _user(ctx, userid)
    user.disabled = disabled
    return f"{user.display_id} is {'disabled' if disabled else 'enabled'}"


#: A broadcast's subject is one short line; its text a page at most.
MAX_BROADCAST_SUBJECT = 120
MAX_BROADCAST_TEXT = 20_000


def broadcast(ctx: CommandContext, subject: str, text: str, *, playing_only: bool) -> str:
    """Mail ``text`` to every enabled user (only those with a board in play, if asked); not
    the robots, who read no mail, nor those who left broadcasts (core.accounts.unsubscribing). Each
    mail is bulk mail that names the one mail that leaves them (List-Unsubscribe)."""
    subject = " ".join(subject.split())
    if not subject or len(subject) > MAX_BROADCAST_SUBJECT:
        raise CommandError(f"the subject must be 1 to {MAX_BROADCAST_SUBJECT} characters")
    if not text.strip() or len(text) > MAX_BROADCAST_TEXT:
        raise CommandError(f"the text must be 1 to {MAX_BROADCAST_TEXT} characters")
    query = (
        select(User)
        .where(User.disabled.is_(False), User.email != "", User.robot_level.is_(None))
        .where(User.broadcasts != "off")
        .order_by(User.id)
    )
    if playing_only:
        playing = select(Seat.user_id).join(GameRow).where(GameRow.status == "active")
        query = query.where(User.id.in_(playing))
    users = list(ctx.session.scalars(query))
    data = {"subject": subject, "text": text.strip("\n")}
    key = bouncing.bounce_key(ctx.session)
    for user in users:
        bulk = unsubscribing.bulk_mail(key, user, "broadcasts")
        note = Notification(to=user.email, channel="notice", kind="broadcast", data=data, bulk=bulk)
        ctx.notify(note)
    return f"broadcast to {len(users)} user(s)"


def reset_password(ctx: CommandContext, userid: str) -> str:
    """Give the user a new random password and mail it to their address."""
    user = _user(ctx, userid)
    if ctx.is_bouncing(user.email):  # the mail would be withheld, and the password lost
        raise CommandError(
            f"mail to {user.email} bounces, so no new password could reach {user.display_id}; "
            "nothing was changed (give the user a working address with `users set-email`)"
        )
    password = secrets.token_urlsafe(9)
    user.password_hash = hash_password(password)
    rotate_reply_addresses(ctx, user)  # old reply addresses stop; new ones go out at once
    ctx.notify(
        Notification(
            to=user.email,
            # Its own outbox kind: mail that carries a secret is kept only until it is sent
            # (pbmserv.outbound.delivery.SECRET_KINDS).
            channel="password_reset",
            kind="password_reset",
            data={"userid": user.display_id, "password": password},
        )
    )
    return f"a new password for {user.display_id} was mailed to {user.email}"


def change_address(ctx: CommandContext, userid: str, address: str) -> str:
    user = _user(ctx, userid)
    if not ADDRESS_PATTERN.match(address):
        raise CommandError(f'"{address}" is not a mail address like name@example.org')
    old = user.email
    waited = ctx.is_bouncing(old)  # the boards waited for an address that did not work
    confirmation.mark_confirmed(ctx.session, address, ctx.now())  # the operator vouches for it
    bouncing.clear_bouncing(ctx, address)  # ... and mail reaches it
    ctx.forget_confirmations()
    user.email, user.pending_email = address, None
    if waited:  # the vacation the bounce began ends (core.accounts.unreachable)
        unreachable.end(ctx, [user], ctx.now())
    rotate_reply_addresses(ctx, user)  # old reply addresses stop; new ones go out at once
    context = {"userid": user.display_id, "old": old, "new": address}
    for to in dict.fromkeys([old, address]):
        ctx.notify(
            Notification(
                to=to,
                channel="notice",
                kind="address_changed",
                data=context,
            )
        )
    return f"{user.display_id} now gets mail at {address} (was {old})"


def confirm_address(ctx: CommandContext, address: str) -> str:
    """Confirm ``address`` for a player whose confirmation mail was lost: what their reply to
    the mail about their own message would have done (core.accounts.confirmation), that message then
    processed by the server. Other users' requests to use the address are not made: they wait
    for its owner's own yes (``users email`` moves a user's mail by hand)."""
    if not ADDRESS_PATTERN.match(address):
        raise CommandError(
            f'"{address}" is not a mail address like name@example.org '
            "(`admin users show USERID` shows a user's address)"
        )
    done = confirmation.confirm_by_operator(ctx, address)
    if done is None:
        raise CommandError(f"{address} is already confirmed; nothing was changed")
    waits = (
        f"; {done.waiting} other request(s) wait for its owner's own reply (or are dropped "
        f"within {confirmation.HELD_FOR.days} days)"
        if done.waiting
        else ""
    )
    return (
        f"{done.address} is confirmed: {done.released} held message(s) released for the "
        f"server to process{waits}"
    )


# --- boards --------------------------------------------------------------------------------


def load_any_board(ctx: CommandContext, number: str, *, for_update: bool = True) -> Board:
    board_id = parse_board_number(number)
    row = ctx.session.get(GameRow, board_id)
    if row is None:
        raise CommandError(f"there is no board {board_id}")
    game = find_game(row.game)
    if game is None:
        raise CommandError(
            f"board {board_id} is {article(row.game)} {row.game} game, which this server lacks"
        )
    return load_board(ctx, game, number, for_update=for_update)


def list_boards(
    ctx: CommandContext,
    game: str | None = None,
    status: str | None = None,
    player: str | None = None,
    idle_days: float | None = None,
) -> list[dict[str, Any]]:
    query = select(GameRow).order_by(GameRow.id)
    if game:
        query = query.where(GameRow.game == game.lower())
    if status:
        query = query.where(GameRow.status == status)
    if player:
        user = _user(ctx, player)
        query = query.where(GameRow.seats.any(Seat.user_id == user.id))
    if idle_days is not None:
        query = query.where(GameRow.updated_at < ctx.now() - timedelta(days=idle_days))
    rows = []
    for row in ctx.session.scalars(query):
        to_move = {int(s) for s in row.to_move.split(",") if s}
        rows.append(
            {
                "board": row.id,
                "game": row.game,
                "status": row.status,
                "players": " vs ".join(s.user.display_id for s in row.seats),
                "to_move": ", ".join(s.user.display_id for s in row.seats if s.seat in to_move),
                "moves": row.ply,
                "last_activity": row.updated_at.isoformat(timespec="minutes"),
                "result": _result_of(row),
            }
        )
    return rows


def _result_of(row: GameRow) -> str:
    """A finished board's result in few words (``alice won (resigned)``); "" while it plays."""
    if row.result is None:
        return ""
    result = row.result
    winners = [s.user.display_id for s in row.seats if s.seat in result.get("winners", [])]
    if result.get("declined"):
        head = "declined"
    else:
        head = f"{' and '.join(winners)} won" if winners else "drawn"
    reason = result.get("reason")
    return f"{head} ({reason})" if reason else head


def show_board(ctx: CommandContext, number: str, viewer: str = "omniscient") -> str:
    """The board as a seat (by user id or seat number), the public, or everything sees it."""
    board = load_any_board(ctx, number, for_update=False)
    if viewer == "omniscient":
        seen: int | str = OMNISCIENT
    elif viewer == "public":
        seen = PUBLIC
    else:
        seen = _seat_by_name(board, viewer)
    header = f"{board.game.SPEC.title}, board {board.number}: " + " vs ".join(
        board.seat_label(s.seat) for s in board.row.seats
    )
    status = (
        service.result_text(board)
        if board.finished
        else "to move: "
        + ", ".join(
            board.user_at(s).display_id for s in sorted(board.game.to_move(board.state).seats)
        )
    )
    diagram = board.diagram(seen)
    return f"{header}\nMoves: {board.row.ply}; {status}\n\n{diagram.rstrip()}\n"


def _seat_by_name(board: Board, viewer: str) -> int:
    for seat in board.row.seats:
        if viewer.lower() in (seat.user.userid, str(seat.seat)):
            return seat.seat
    raise CommandError(f'"{viewer}" is not a player or seat number of board {board.number}')


def _tell_players(ctx: CommandContext, board: Board, event: str) -> None:
    notify_board(ctx, board, event)


def undo_last(ctx: CommandContext, number: str) -> str:
    """Take back the last move, or reopen a board ended by resignation, forfeit or ruling."""
    board = load_any_board(ctx, number)
    if board.finished and board.row.match_id is not None:
        raise CommandError(
            f"board {board.number} is a finished tournament game whose result its tournament "
            "has counted; it cannot be reopened"
        )
    entries = [
        row
        for row in service.history(ctx, board)
        if row.kind in ("move", "resign", "forfeit", "time", "adjudicate")
    ]
    if not entries:
        raise CommandError(f"board {board.number} has no move to take back")
    # The entry taken back leaves the history (an "undo" entry says what it was), so the moves
    # left always replay to the board's state.
    last = entries[-1]
    ended = service.result_text(board) if board.finished else None
    unrated = board.finished and ratings.unrate(ctx, board.row)  # rated again if it ends again
    if last.kind == "move":
        service.take_back_moves(ctx, board, 1)
        taken = "took back " + numbering.named(
            board.game.SPEC, last.ply, last.public_text or last.text
        )
    else:
        ctx.session.delete(last)
        taken = f"reopened the game ended by {last.kind} ({last.text})"
    board.row.status = "active"
    board.row.result = None
    outcome = board.game.outcome(board.state)
    if outcome is not None:  # the move taken back was not the one that ended the game
        service.conclude(ctx, board, outcome)
    board.row.to_move = ",".join(str(s) for s in sorted(board.game.to_move(board.state).seats))
    board.row.updated_at = ctx.now()
    board.row.reminded_at = None
    if not board.finished:  # the clocks as they stood after the last move left, running again
        moves = [row for row in service.history(ctx, board) if row.kind == "move"]
        clocks.restore(ctx, board.row, moves[-1].clocks if moves else None)
    if ended is not None and not board.finished:
        if last.kind == "move":
            taken = f"reopened the game ({ended}) and {taken}"
        if unrated:
            taken += "; the rating change it made is taken back"
    service.record_event(ctx, board, "undo", f"the operator {taken}")
    _tell_players(ctx, board, f"The operator {taken}.")
    settle_finished(ctx)
    return f"board {board.number}: {taken}"


def adjudicate(
    ctx: CommandContext, number: str, winner: str | None, reason: str | None = None
) -> str:
    """End a board by the operator's ruling: ``winner`` a player's user id, or None (draw)."""
    board = load_any_board(ctx, number)
    if board.finished:
        raise CommandError(f"board {board.number} is already over: {service.result_text(board)}")
    winners = frozenset() if winner is None else frozenset({_seat_by_name(board, winner)})
    why = "adjudicated by the operator" + (f": {reason}" if reason else "")
    service.conclude(
        ctx, board, Outcome(winners=winners, reason=why, termination=Termination.ADJUDICATION)
    )
    board.row.updated_at = ctx.now()
    service.record_event(ctx, board, "adjudicate", why)
    result = service.result_text(board)
    _tell_players(ctx, board, f"The operator ended the game: {result}.")
    settle_finished(ctx)
    return f"board {board.number}: {result}"


def revoke_link(ctx: CommandContext, number: str, userid: str) -> str:
    """Make a player's private link to a board stop working (``userid``: theirs, or their
    seat's number); their next board mail carries a new one."""
    board = load_any_board(ctx, number, for_update=False)
    user = board.user_at(_seat_by_name(board, userid))
    if not private_links.revoke(ctx.session, board.number, user.id):
        return f"board {board.number}: {user.display_id} has no private link; nothing revoked"
    return (
        f"board {board.number}: revoked {user.display_id}'s private link (it leads nowhere "
        "now); their next board mail carries a new one"
    )


def delete_board(ctx: CommandContext, number: str) -> str:
    board = load_any_board(ctx, number)
    if board.row.match_id is not None:
        raise CommandError(
            f"board {board.number} is a tournament game: adjudicate it instead, so that its "
            "match can finish"
        )
    for seat in board.row.seats:
        ctx.notify(
            Notification(
                to=seat.user.email,
                channel="notice",
                kind="board_deleted",
                data={
                    "game": board.game.SPEC.name,
                    "board": board.number,
                    "players": [board.seat_label(s.seat) for s in board.row.seats],
                },
            )
        )
    ratings.unrate(ctx, board.row)  # a deleted board counts for nothing
    ctx.session.execute(delete(MoveRow).where(MoveRow.game_id == board.row.id))
    ctx.session.execute(delete(Observer).where(Observer.game_id == board.row.id))
    ctx.session.execute(delete(BoardMail).where(BoardMail.game_id == board.row.id))
    ctx.session.delete(board.row)
    return f"board {board.number} deleted; its players were told"


# --- inbox and outbox ----------------------------------------------------------------------

#: The states of an inbox message (pbmserv.runtime.processor, core.accounts.confirmation) and of an
#: outgoing mail (pbmserv.outbound.delivery): what `--status` may ask for.
INBOX_STATUSES = ("pending", "held", "done", "ignored", "failed")
OUTBOX_STATUSES = ("pending", "sent", "failed")


def count_box(ctx: CommandContext, box: str, status: str | None) -> int:
    """How many messages the inbox or outbox holds (in one state, if given)."""
    model = InboxMessage if box == "inbox" else OutboxMessage
    query = select(func.count()).select_from(model)
    if status:
        query = query.where(model.status == status)
    return int(ctx.session.scalar(query) or 0)


def list_inbox(ctx: CommandContext, status: str | None, limit: int) -> list[dict[str, Any]]:
    query = select(InboxMessage).order_by(InboxMessage.id.desc()).limit(limit)
    if status:
        query = query.where(InboxMessage.status == status)
    return [
        {
            "id": row.id,
            "received": row.received_at.isoformat(timespec="seconds"),
            "from": row.envelope_from or "",
            "status": row.status,
            "attempts": row.attempts,
            "result": row.error or row.summary or "",
        }
        for row in ctx.session.scalars(query)
    ]


def list_outbox(ctx: CommandContext, status: str | None, limit: int) -> list[dict[str, Any]]:
    query = select(OutboxMessage).order_by(OutboxMessage.id.desc()).limit(limit)
    if status:
        query = query.where(OutboxMessage.status == status)
    return [
        {
            "id": row.id,
            "created": row.created_at.isoformat(timespec="seconds"),
            "to": row.recipient,
            "kind": row.kind,
            "status": row.status,
            "attempts": row.attempts,
            "next_attempt": row.next_attempt_at.isoformat(timespec="seconds")
            if row.status == "pending"
            else "",
            "error": row.last_error or "",  # whole: it ends with the setting to change
        }
        for row in ctx.session.scalars(query)
    ]


def retry_inbox(ctx: CommandContext, message_id: int | None) -> int:
    """Put failed messages (one, or all with None) back in the queue; returns how many."""
    query = update(InboxMessage).where(InboxMessage.status == "failed")
    if message_id is not None:
        query = query.where(InboxMessage.id == message_id)
    result = ctx.session.execute(query.values(status="pending", attempts=0, error=None))
    return _rows(result)


def _rows(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE changed."""
    return int(cast(CursorResult[Any], result).rowcount or 0)


def retry_outbox(ctx: CommandContext, message_id: int | None) -> int:
    """Send failed mail again now (one, or all with None); returns how many."""
    query = update(OutboxMessage).where(OutboxMessage.status == "failed")
    if message_id is not None:
        query = query.where(OutboxMessage.id == message_id)
    result = ctx.session.execute(
        query.values(status="pending", attempts=0, next_attempt_at=ctx.now(), lease_until=None)
    )
    return _rows(result)


def purge_delivered(ctx: CommandContext, older_than_days: float) -> dict[str, int]:
    """Delete sent mail older than the limit, and empty processed messages as old: of those
    only the row and its deduplication key stay, so that a copy delivered again, however late,
    is still known (failed ones are kept whole for inspection)."""
    if older_than_days < 0:
        raise CommandError("the age must be 0 days or more")
    cutoff: datetime = ctx.now() - timedelta(days=older_than_days)
    outbox = ctx.session.execute(
        delete(OutboxMessage).where(
            OutboxMessage.status == "sent", OutboxMessage.created_at < cutoff
        )
    )
    inbox = ctx.session.execute(
        update(InboxMessage)
        .where(
            InboxMessage.status.in_(("done", "ignored")),
            InboxMessage.received_at < cutoff,
            InboxMessage.raw != b"",
        )
        .values(raw=b"", summary=None)
    )
    return {"outbox": _rows(outbox), "inbox": _rows(inbox)}
