"""Consent to a board (issue 48). A challenge needs no password (pbmserv's habit), so anyone
may start a board between other people; a board a player did not start therefore runs no
clock of theirs, spends none of their vacation, counts for no rating and takes none of their
robot slots until they accept it: by a move, a resignation, or ``GAME accept BOARD ...``.

Who started a board: the users of the address the challenge came from (``users_of_address``).
Their seats are accepted at once, when the From can be believed: always on a server that checks
no authentication results, else only when the receiving MTA vouched for it (a forged From must
not accept a board, and so start a clock, in its victim's name). Boards made by the operator
(the admin shell) and by a tournament the players entered count as accepted by all, and a robot
always accepts; a robot plays only the person who challenged it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import Select, select

from pbmserv.core.accounts.addresses import users_of_address
from pbmserv.core.context import CommandContext, disabled_error
from pbmserv.core.results import CommandError
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import GameRow, Seat, User


def sender_users(ctx: CommandContext) -> list[User]:
    """The users who write from the sender's address, none of them disabled: a sender whose
    users are all disabled gets only an answer saying so (CommandError)."""
    if ctx.sender is None:
        return []
    users = users_of_address(ctx.session, ctx.sender)
    enabled = [user for user in users if not user.disabled]
    if users and not enabled:
        raise disabled_error(users[0])
    return enabled


def from_believed(ctx: CommandContext) -> bool:
    """Whether the sender's From may stand for its owner: on a server that checks the
    receiving MTA's authentication results, only when they passed."""
    return ctx.sender_authenticated or not ctx.settings.trusted_authserv_ids.strip()


def accepted_at_start(
    ctx: CommandContext, players: Sequence[User], starters: Sequence[User]
) -> set[int]:
    """The user ids among ``players`` whose seats are accepted as the board is made: the
    robots, and the challenge's senders when their From is believed (the admin shell: all)."""
    if ctx.sender is None:
        return {user.id for user in players}
    started = {user.id for user in starters} if from_believed(ctx) else set()
    return {user.id for user in players if is_robot(user) or user.id in started}


def check_robot_challenge(
    ctx: CommandContext, players: Sequence[User], starters: Sequence[User]
) -> None:
    """A robot plays only the person who challenged it: a board of someone else's against a
    robot would take that person's robot slots and the robot's time without their asking."""
    if ctx.sender is None or not any(is_robot(user) for user in players):
        return
    accepted = accepted_at_start(ctx, players, starters)
    strangers = [u.display_id for u in players if not is_robot(u) and u.id not in accepted]
    if strangers and any(u.display_id == strangers[0] for u in starters):
        raise CommandError(
            "the receiving mail server could not vouch for this mail's From, and a robot "
            "board is started only by its player",
            hint="Send the challenge again from your own mail provider, signed (DKIM) or "
            "sent through its servers (SPF).",
            syntax_was_right=True,
        )
    if strangers:
        raise CommandError(
            f"only {strangers[0]} may challenge a robot for {strangers[0]}: a robot board is "
            "started from the player's own address",
            hint='Challenge the robot for yourself, or a person: see "help robots".',
            syntax_was_right=True,
        )


def started_text(ctx: CommandContext, starters: Sequence[User]) -> str:
    """Who started a board, as its first mail says it."""
    if ctx.sender is None:
        return "The server's operator started it."
    if not starters:
        return "A challenge from an address with no user id here started it."
    names = " or ".join(user.display_id for user in starters)
    return f"A challenge from the address of {names} started it."


def mark_accepted(seats: Sequence[Seat], user_ids: Collection[int] | None, now: datetime) -> None:
    """Accept the new board for ``user_ids`` (None: every player)."""
    for seat in seats:
        if user_ids is None or seat.user_id in user_ids:
            seat.accepted_at = now


def accept(row: GameRow, seat_number: int, now: datetime) -> bool:
    """The player of ``seat_number`` accepts the board (a move, a resignation, ``accept``);
    True if they had not before. The caller runs the clocks again."""
    seat = next(s for s in row.seats if s.seat == seat_number)
    if seat.accepted_at is not None:
        return False
    seat.accepted_at = now
    return True


def is_accepted(row: GameRow, seat_number: int | None) -> bool:
    """Whether the seat's player accepted the board (an observer: True)."""
    seat = next((s for s in row.seats if s.seat == seat_number), None)
    return seat is None or seat.accepted_at is not None


def unaccepted_seats(row: GameRow) -> list[int]:
    """The seats whose players have not accepted the board, in seat order."""
    return sorted(s.seat for s in row.seats if s.accepted_at is None)


def boards_not_accepted() -> Select[int]:
    """SQL: the ids of boards a player has not accepted."""
    return select(Seat.game_id).where(Seat.accepted_at.is_(None))
