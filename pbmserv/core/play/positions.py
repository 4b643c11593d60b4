"""What one viewer may see of one position of a board: the one projection every web page,
picture, record, ETag and feed is made from.

A viewer is the public (``seat=None``: anyone, an observer) or a seat's player (through their
private link). While a game with hidden information runs, each sees only what their own board
mail shows: the game's ``render``/``svg`` for that viewer, and of each move its public text
unless the viewer made it. Once the board is over, however it ended, everything is public.

A past position is the board's start replayed through the stored moves (the same chance
draws as when they were played), then projected like the present one: nothing of a stored
full state reaches a viewer except through the game's own view of it. Nothing here depends on
the time of asking, so the same position looks the same on every request (its ETag holds).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Protocol

from pbmserv.core.play import numbering
from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import replay_moves, result_text
from pbmserv.db.models import MoveRow
from pbmserv.db.times import as_utc
from pbmserv.games.base import OMNISCIENT, PUBLIC, Viewer

#: Changes whenever what a projection holds changes, so that no cache keeps an older one.
FORMAT = 1


@dataclass(frozen=True)
class MoveSeen:
    """One move of the board as the viewer may see it; it leads to position ``ply + 1``."""

    ply: int
    label: str  # "12." or "12..." as the game numbers it
    text: str
    seat: int
    player: str
    #: What chance drew with the move, where every player may see it (None: nothing).
    chance: dict[str, Any] | None


@dataclass(frozen=True)
class PlayerSeen:
    seat: int
    role: str
    userid: str


@dataclass(frozen=True)
class ClockSeen:
    """A seat's clock as it stood after the last move (static: the page says since when it
    runs, rather than a time left that would change every second)."""

    seat: int
    userid: str
    seconds_left: float
    running_since: str | None  # ISO 8601 UTC; None: stopped


@dataclass(frozen=True)
class PositionView:
    """Everything a viewer may see of the board at ``ply`` (0: the start; ``plies``: now)."""

    board: int
    game: str
    title: str
    viewer: str  # "public", "seat N" or "everyone" (a finished board)
    ply: int
    plies: int
    label: str  # the position in the game's numbering: "after move 12", "before the first move"
    diagram: str
    svg: str
    last_move: str | None
    to_move: tuple[str, ...]  # who acts in this position (empty when over)
    status: str
    finished: bool
    result: str | None
    players: tuple[PlayerSeen, ...]
    moves: tuple[MoveSeen, ...]
    clocks: tuple[ClockSeen, ...] | None  # the latest position of a clocked board only
    time_control: str | None

    @property
    def is_latest(self) -> bool:
        return self.ply == self.plies

    @cached_property
    def etag(self) -> str:
        """A strong validator of everything shown: equal views give equal tags, and a view
        that differs in anything a viewer sees gives another. (Made once a view: the view is
        immutable, and a 304 asks for nothing else.)"""
        data = json.dumps([FORMAT, repr(self)], separators=(",", ":"))
        return hashlib.sha256(data.encode()).hexdigest()[:32]

    @property
    def description(self) -> str:
        """The picture's text alternative: what it shows, in words."""
        moving = f"; {', '.join(self.to_move)} to move" if self.to_move else ""
        return f"{self.title}, board {self.board}, {self.label}{moving}."


class MoveRecord(Protocol):
    """A stored move as the projection reads it (a MoveRow, or a copy kept apart from its
    session, such as the web view's)."""

    @property
    def seat(self) -> int | None: ...
    @property
    def text(self) -> str: ...
    @property
    def public_text(self) -> str | None: ...
    @property
    def chance(self) -> dict[str, Any] | None: ...


def viewer_for(board: Board, seat: int | None) -> Viewer:
    """Who a seat (None: the public) is to the game's render and svg."""
    if board.finished and board.game.SPEC.hidden_information:
        # However the game ended (even by resignation or a ruling), nothing is secret any more.
        return OMNISCIENT
    return seat if seat is not None else PUBLIC


def moves_of(history: Sequence[MoveRow]) -> list[MoveRow]:
    """The moves among a board's history entries (not resignations and rulings), in order."""
    return [row for row in history if row.kind == "move"]


def moves_seen(board: Board, moves: Sequence[MoveRecord], seat: int | None) -> list[MoveSeen]:
    """Each move as ``seat`` (None: the public) may see it: its own moves as made, the others'
    as everyone sees them, all of them as made once the board is over."""
    spec = board.game.SPEC
    players = {s.seat: s.user.display_id for s in board.row.seats}
    everything = board.finished or not spec.hidden_information
    seen = []
    for ply, row in enumerate(moves):
        own = row.seat is not None and row.seat == seat
        text = row.text if everything or own else (row.public_text or row.text)
        mover = row.seat if row.seat is not None else -1
        seen.append(
            MoveSeen(
                ply=ply,
                label=numbering.label(spec, ply),
                text=text,
                seat=mover,
                player=players.get(mover, ""),
                chance=row.chance,
            )
        )
    return seen


#: The full state at a ply of the board (a cache may stand behind it); its secrets are only
#: ever read through the game's view for the viewer.
StateAt = Callable[[int], Any]


def replayed(board: Board, moves: Sequence[MoveRecord]) -> StateAt:
    """The state at each ply by replaying the stored moves (the board's own state at the end)."""
    texts = [row.text for row in moves]

    def state_at(ply: int) -> Any:
        return board.state if ply == len(texts) else replay_moves(board, texts[:ply])

    return state_at


def project(
    board: Board,
    moves: Sequence[MoveRecord],
    seat: int | None,
    ply: int | None = None,
    state_at: StateAt | None = None,
) -> PositionView:
    """What ``seat`` (None: the public) may see of ``board`` after ``ply`` moves (None: now).

    ``moves`` are the board's stored moves in order (:func:`moves_of`); ``state_at`` gives the
    state at a ply (default: replayed). ``ply`` must lie in 0..len(moves) (ValueError)."""
    plies = len(moves)
    at = plies if ply is None else ply
    if not 0 <= at <= plies:
        raise ValueError(f"board {board.number} has no position {at} (0..{plies})")
    game, spec = board.game, board.game.SPEC
    state = (state_at or replayed(board, moves))(at)
    viewer = viewer_for(board, seat)
    players = [s.user.display_id for s in board.row.seats]
    seen = tuple(moves_seen(board, moves, seat))
    latest = at == plies
    over = board.finished and latest
    acting = () if over else tuple(players[s] for s in sorted(game.to_move(state).seats))
    return PositionView(
        board=board.number,
        game=spec.name,
        title=spec.title,
        viewer=_viewer_name(viewer),
        ply=at,
        plies=plies,
        label=numbering.shown_at(spec, at),
        diagram=game.render(state, viewer, players),
        svg=game.svg(state, viewer),
        last_move=seen[at - 1].text if at else None,
        to_move=acting,
        status=_status(board, acting, latest),
        finished=board.finished,
        result=result_text(board) if board.finished else None,
        players=tuple(
            PlayerSeen(s.seat, game.seat_name(state, s.seat), s.user.display_id)
            for s in board.row.seats
        ),
        moves=seen,
        clocks=_clocks(board) if latest else None,
        time_control=board.row.time_control,
    )


def _viewer_name(viewer: Viewer) -> str:
    if viewer == OMNISCIENT:
        return "everyone"
    return "public" if viewer == PUBLIC else f"seat {viewer}"


def _status(board: Board, acting: tuple[str, ...], latest: bool) -> str:
    if board.finished and latest:
        return result_text(board)
    if not acting:
        return ""
    return f"waiting for {' and '.join(acting)}"


def _clocks(board: Board) -> tuple[ClockSeen, ...] | None:
    if board.row.time_control is None:
        return None
    return tuple(
        clock_seen(s.seat, s.user.display_id, s.clock_left, s.clock_since) for s in board.row.seats
    )


def clock_seen(
    seat: int, userid: str, clock_left: float | None, clock_since: datetime | None
) -> ClockSeen:
    """A seat's clock as a projection shows it, from its stored columns."""
    since = None if clock_since is None else as_utc(clock_since).isoformat(timespec="seconds")
    return ClockSeen(seat, userid, round(clock_left or 0.0, 1), since)
