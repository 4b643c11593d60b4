"""Robots: the computer players anyone can challenge, one user per strength (``robot1`` to
``robot3``, made by migration 0017). A robot takes no commands by mail and is mailed nothing:
its address is in the ``.invalid`` domain. It plays a person, never another robot, and a
person has at most ``robot_games_per_user`` boards against robots at a time.

What a robot has to do is a query (:func:`due_turns`); core.robots.moves thinks and plays.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.core.play import proposals
from pbmserv.core.play.boards import Board, load_board
from pbmserv.core.results import CommandError
from pbmserv.core.robots.identity import ROBOT_DOMAIN, is_robot
from pbmserv.db.models import GameRow, MoveRow, Seat, User
from pbmserv.games import find_game


def robots(session: Session) -> list[User]:
    """The robots, weakest first."""
    query = select(User).where(User.robot_level.is_not(None)).order_by(User.robot_level)
    return list(session.scalars(query))


def check_challenge(ctx: CommandContext, users: list[User]) -> None:
    """Refuse a challenge a robot may not take: two robots, or a person who already has as
    many boards against robots as one may."""
    robot_seats = [user for user in users if is_robot(user)]
    if not robot_seats:
        return
    people = [user for user in users if not is_robot(user)]
    if not people:
        raise CommandError(
            "robots play people, not each other: name one robot and one person",
            syntax_was_right=True,
        )
    most = ctx.settings.robot_games_per_user
    for person in people:
        if active_robot_boards(ctx.session, person) >= most:
            raise CommandError(
                f"{person.display_id} already has {most} boards against robots, the most one "
                "player may have at a time",
                hint="Finish one of them first (or resign it).",
                syntax_was_right=True,
            )


def active_robot_boards(session: Session, person: User) -> int:
    """How many active boards ``person`` has against a robot."""
    robot_seat = (
        select(Seat.game_id)
        .join(User, User.id == Seat.user_id)
        .where(User.robot_level.is_not(None))
    )
    query = (
        select(func.count())
        .select_from(Seat)
        .join(GameRow, GameRow.id == Seat.game_id)
        .where(
            Seat.user_id == person.id,
            GameRow.status == "active",
            GameRow.id.in_(robot_seat),
        )
    )
    return int(session.scalar(query) or 0)


@dataclass(frozen=True)
class RobotTurn:
    """A robot seat to act on a board: its move, or its answer to a proposal."""

    board: int
    game: str
    seat: int
    level: int
    #: The board's ply when it was seen: the move is played only at that ply.
    ply: int
    #: "move", or the kind of proposal to answer ("draw", "undo").
    task: str = "move"
    #: Whom the robot plays there: the address of the board's first person (several user
    #: ids at one address are one person), by which the robots share their time fairly
    #: (runtime.robot_fairness).
    person: str = ""


def _robot_seats(session: Session) -> list[Any]:
    """(board, game, ply, seats to act, robot seat, level) of every active board a robot
    sits at, the longest waiting first."""
    query = (
        select(
            GameRow.id,
            GameRow.game,
            GameRow.ply,
            GameRow.to_move,
            Seat.seat,
            User.robot_level,
        )
        .join(Seat, Seat.game_id == GameRow.id)
        .join(User, User.id == Seat.user_id)
        .where(GameRow.status == "active", User.robot_level.is_not(None))
        .order_by(GameRow.updated_at, GameRow.id)
    )
    return list(session.execute(query))


def _open_proposals(session: Session, boards: list[int]) -> dict[int, int]:
    """Board -> the id of its latest proposal, for the ``boards`` that have one."""
    if not boards:
        return {}
    query = (
        select(MoveRow.game_id, func.max(MoveRow.id))
        .where(MoveRow.game_id.in_(boards), MoveRow.kind == "propose")
        .group_by(MoveRow.game_id)
    )
    return {board: latest for board, latest in session.execute(query)}


def _people(session: Session, boards: list[int]) -> dict[int, str]:
    """Board -> the address of its first person (by seat), for ``boards``."""
    if not boards:
        return {}
    query = (
        select(Seat.game_id, User.email)
        .join(User, User.id == Seat.user_id)
        .where(Seat.game_id.in_(boards), User.robot_level.is_(None))
        .order_by(Seat.game_id, Seat.seat.desc())
    )
    return {board: email.lower() for board, email in session.execute(query)}


def due_turns(session: Session, limit: int | None = 20) -> list[RobotTurn]:
    """What robots have to do now (all of it with ``limit`` None), each named with the person
    it is for: proposals to answer first (a proposal gets a small budget), then moves, the
    longest waiting first. Who is served in which order is runtime.robot_fairness's choice."""
    seats = _robot_seats(session)
    proposed = _open_proposals(session, [row.id for row in seats])
    due: list[RobotTurn] = []
    for row in seats:
        task = "move"
        if row.id in proposed:
            task = _proposal_for(session, row.id, row.seat) or task
        if task != "move" or str(row.seat) in row.to_move.split(","):
            due.append(RobotTurn(row.id, row.game, row.seat, row.robot_level, row.ply, task))
    people = _people(session, [turn.board for turn in due])
    due = [replace(turn, person=people.get(turn.board, "")) for turn in due]
    due.sort(key=lambda turn: turn.task == "move")
    return due if limit is None else due[:limit]


def _proposal_for(session: Session, board: int, seat: int) -> str | None:
    """The kind of the board's open proposal waiting for ``seat``'s answer, if any."""
    standing = proposals.open_proposal_on(session, board)
    if standing is None or standing.seat == seat or seat in standing.accepted_by:
        return None
    return standing.kind


def load_turn(ctx: CommandContext, turn: RobotTurn, *, for_update: bool) -> Board | None:
    """The board of ``turn`` if the robot still has to do it there: the same ply, the robot
    still in its seat and, for a move, that seat to act."""
    game = find_game(turn.game)
    if game is None:
        return None
    try:
        board = load_board(ctx, game, str(turn.board), for_update=for_update)
    except CommandError:
        return None
    user = board.user_at(turn.seat) if turn.seat < len(board.row.seats) else None
    if board.finished or board.row.ply != turn.ply or user is None or not is_robot(user):
        return None
    if turn.task == "move" and turn.seat not in game.to_move(board.state).seats:
        return None
    return board


#: The robots' strengths, and how each is described to players.
LEVEL_NAMES = {1: "quick and weak", 2: "steady", 3: "strongest, slowest"}


def ensure_robots(session: Session, now: datetime) -> list[User]:
    """Make the robot of each level that is missing (migration 0017 makes them; an operator
    may have removed one, or a test emptied the tables): ``robotN``, or ``pbmrobotN`` where a
    person holds that id. Returns those made."""
    have = {user.robot_level for user in robots(session)}
    made = []
    for level, description in LEVEL_NAMES.items():
        if level in have:
            continue
        userid = f"robot{level}"
        if session.scalar(select(User.id).where(User.userid == userid)) is not None:
            userid = f"pbmrobot{level}"
        robot = User(
            userid=userid,
            display_id=userid,
            full_name=f"pbmserv robot, level {level} ({description})",
            email=f"{userid}@{ROBOT_DOMAIN}",
            password_hash="!robot: takes no commands by mail",
            disabled=False,
            created_at=now,
            mail_format="text",
            digest="off",
            robot_level=level,
        )
        session.add(robot)
        made.append(robot)
    session.flush()
    return made
