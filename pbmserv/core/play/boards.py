"""A board as the service holds it (its row, its game, its live state), loaded by number and
locked for the transaction that changes it, in one order so that two never deadlock."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, joinedload

from pbmserv.core.context import CommandContext
from pbmserv.core.parser import article
from pbmserv.core.results import CommandError
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import GameRow, User
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame, Viewer


def new_game_rng(seed: int) -> random.Random:
    return random.Random(seed)


@dataclass
class Board:
    """A loaded board: its row, its game and the live state."""

    row: GameRow
    game: AnyGame
    state: Any

    @classmethod
    def loaded(cls, row: GameRow, game: AnyGame) -> Board:
        """The board of ``row``, its stored state read by ``game``: the one place a state is
        loaded from a row."""
        return cls(row=row, game=game, state=game.load(row.state))

    @property
    def number(self) -> int:
        return self.row.id

    def seat_of(self, user: User) -> int | None:
        for seat in self.row.seats:
            if seat.user_id == user.id:
                return seat.seat
        return None

    def user_at(self, seat: int) -> User:
        return next(s.user for s in self.row.seats if s.seat == seat)

    def seat_label(self, seat: int) -> str:
        return f"{self.user_at(seat).display_id} ({self.game.seat_name(self.state, seat)})"

    def diagram(self, viewer: Viewer, state: Any = None) -> str:
        """The game's text diagram of ``state`` (by default the board's own) for ``viewer``,
        told the users' names so that it can say who is who."""
        players = [s.user.display_id for s in sorted(self.row.seats, key=lambda s: s.seat)]
        return self.game.render(self.state if state is None else state, viewer, players)

    @property
    def finished(self) -> bool:
        return self.row.status != "active"

    def robot_moves_first(self) -> bool:
        """Whether the board's first move is a robot's: its board mail is then the first
        mail of the board, and a mail of the empty board a second before it is one too many."""
        to_move = self.game.to_move(self.state).seats
        return (
            self.game.move_number(self.state) == 0
            and bool(to_move)
            and all(is_robot(self.user_at(seat)) for seat in to_move)
        )


def board_of(row: GameRow, game: AnyGame | None = None) -> Board | None:
    """The board a stored row holds, its state loaded by its game (``game`` when the caller has
    it already); None when this server lacks the row's game (an operator removed one)."""
    game = game or find_game(row.game)
    return None if game is None else Board.loaded(row, game)


def parse_board_number(text: str) -> int:
    digits = text.lstrip("#")
    if not digits.isdigit() or len(digits) > 9:
        raise CommandError(f'"{text}" is not a board number (board numbers are like 17)')
    return int(digits)


#: One query for the board, its seats and their users; built once (every move loads a board,
#: and building the statement would cost more than running it).
_BOARD = select(GameRow).where(GameRow.id == bindparam("board")).options(joinedload(GameRow.seats))
#: A row lock on PostgreSQL serialises commands on one board across processes; the version
#: column catches anything that slips past it. FOR NO KEY UPDATE, the lock an UPDATE takes:
#: another transaction's row that only refers to the board (an observer, a move: FOR KEY
#: SHARE) need not wait for it, so it closes no deadlock.
_BOARD_FOR_UPDATE = _BOARD.with_for_update(of=GameRow, key_share=True)


def load_board(ctx: CommandContext, game: AnyGame, board_text: str, *, for_update: bool) -> Board:
    number = parse_board_number(board_text)
    query = _BOARD_FOR_UPDATE if for_update else _BOARD
    row = ctx.session.scalars(query, {"board": number}).unique().one_or_none()
    if row is None:
        raise CommandError(f"there is no board {number}", syntax_was_right=True)
    if row.game != game.SPEC.name:
        raise CommandError(
            f"board {number} is {article(row.game)} {row.game} game, not {game.SPEC.name}",
            hint=f"Use: {row.game} ... {number} ...",
        )
    return Board.loaded(row, game)


def boards_named(lines: Iterable[str]) -> set[int]:
    """The board numbers command lines may name (the third word: ``<game> <verb> <board>``).
    More than the commands will lock, for ``lock_boards``: a word that only looks like a
    board number (a password of digits) costs a lock not needed, nothing else."""
    named = set()
    for line in lines:
        words = line.split()
        digits = words[2].lstrip("#") if len(words) > 2 else ""
        if digits.isdigit() and len(digits) <= 9:
            named.add(int(digits))
    return named


def lock_boards(session: Session, numbers: Iterable[int]) -> None:
    """Lock the boards ``numbers`` (those that exist) in ascending order, as load_board would
    (PostgreSQL; SQLite has one writer at a time anyway).

    A transaction that may lock several boards (a batch of messages, a message with commands on
    two boards) calls this first with all of them: two transactions that each hold one board
    and wait for the other's is a deadlock, and ascending order everywhere rules it out. The
    commands' own locks after it are then already held."""
    wanted = sorted(set(numbers))
    if wanted and session.get_bind().dialect.name != "sqlite":  # SQLite locks it all at BEGIN
        query = (
            select(GameRow.id)
            .where(GameRow.id.in_(wanted))
            .order_by(GameRow.id)
            .with_for_update(key_share=True)
        )
        session.execute(query).all()


#: SQLSTATEs of a transaction the database aborted for its locks: deadlock_detected,
#: serialization_failure. The work itself was fine: it can be done again.
_LOCK_CONFLICTS = frozenset({"40P01", "40001"})


def is_lock_conflict(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is the database aborting a transaction that lost
    a race for locks: the caller redoes the work, with a warning rather than a traceback."""
    seen: BaseException | None = error
    for _depth in range(8):
        if seen is None:
            return False
        for candidate in (seen, getattr(seen, "orig", None)):
            if getattr(candidate, "sqlstate", None) in _LOCK_CONFLICTS:
                return True
        seen = seen.__cause__ or seen.__context__
    return False
