"""A board opened for a reader: found by its number (the public) or by a private link's token
(a seat's player), with its moves, and projected at a ply for that reader. Views are kept by
the board's :class:`Stamp`, so that a page asked again (a 304 above all) costs two small
queries and no projection.

Addresses are read strictly here: a board number or a ply is 1 to 9 ASCII digits, anything
else is no page (404); ``?since=`` is a ply too, or the request is bad (400).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request

from pbmserv.core.play.boards import Board, board_of
from pbmserv.core.play.positions import PositionView, project
from pbmserv.core.play.private_links import holder_of
from pbmserv.db.models import GameRow, MoveRow, Seat
from pbmserv.web.site import Site

_NUMBER = re.compile(r"[0-9]{1,9}")


def number_in(text: str) -> int | None:
    """The number ``text`` is (1 to 9 ASCII digits), else None."""
    return int(text) if _NUMBER.fullmatch(text) else None


def page_number(request: Request) -> int:
    """The ``?page=`` of a paged list (1 when none; 400 when it is not a number from 1)."""
    page = number_in(request.query_params.get("page", "1"))
    if page is None or page < 1:
        raise HTTPException(400, "A page is a number, like 2.")
    return page


def split_kind(text: str, kinds: Iterable[str]) -> tuple[str, str]:
    """``"17.json"`` -> ``("17", "json")``, ``"17"`` -> ``("17", "")``; 404 for a kind not in
    ``kinds`` ("" meaning none)."""
    stem, dot, kind = text.partition(".")
    if (kind if dot else "") not in kinds or (dot and not kind):
        raise HTTPException(404)
    return stem, kind


def since_of(request: Request) -> int | None:
    """The ``?since=`` ply, if any (400 when it is not a number)."""
    text = request.query_params.get("since")
    if text is None or text == "":
        return None
    since = number_in(text)
    if since is None:
        raise HTTPException(400, "?since= takes a move number, like ?since=12")
    return since


@dataclass(frozen=True)
class KeptMove:
    """A stored move as a projection reads it (:class:`pbmserv.core.play.positions.MoveRecord`)."""

    seat: int | None
    text: str
    public_text: str | None
    chance: dict[str, Any] | None


class MovedToPublic(Exception):
    """The board of a private link is over: everything is public, its reader goes there."""

    def __init__(self, board: int) -> None:
        super().__init__(board)
        self.board = board


@dataclass(frozen=True)
class Stamp:
    """What a board's views follow from, found by one small query: the row's version (a move,
    a take-back, an end, any change of the row bumps it) and the seats' clocks (which start
    and stop with the board mail and vacations, the row untouched). Equal stamps, equal views
    (the players' names never change)."""

    board: int
    version: int
    finished: bool
    clocks: tuple[tuple[int, float | None, datetime | None], ...]


def stamp_of(session: Session, number: int) -> Stamp:
    """Board ``number``'s stamp (404 when there is no such board)."""
    row = session.execute(
        select(GameRow.version, GameRow.status).where(GameRow.id == number)
    ).one_or_none()
    if row is None:
        raise HTTPException(404, f"There is no board {number}.")
    seats = session.execute(
        select(Seat.seat, Seat.clock_left, Seat.clock_since)
        .where(Seat.game_id == number)
        .order_by(Seat.seat)
    )
    clocks = tuple((seat, left, since) for seat, left, since in seats)
    return Stamp(number, row.version, row.status != "active", clocks)


class Opened:
    """A board as one reader sees it: the public (``seat`` None) or a seat's own player. The
    board and its moves are read when first needed (a view kept for its stamp needs neither),
    in the request's one read transaction."""

    def __init__(
        self, site: Site, session: Session, stamp: Stamp, seat: int | None, base: str
    ) -> None:
        self.site = site
        self.session = session
        self.stamp = stamp
        self.seat = seat
        self.base = base  # where its addresses begin: "/g/17" or "/p/TOKEN"

    @property
    def private(self) -> bool:
        return self.seat is not None

    @cached_property
    def board(self) -> Board:
        row = self.session.get(GameRow, self.stamp.board)
        board = None if row is None else board_of(row)
        if board is None:  # a game this server no longer has
            raise HTTPException(404, f"Board {self.stamp.board} cannot be shown.")
        return board

    @cached_property
    def moves(self) -> tuple[KeptMove, ...]:
        """The board's moves, read once a version of the board (a Core query of the four
        columns a projection reads), then kept apart from any session."""
        key = (self.stamp.board, self.stamp.version)
        moves = self.site.moves.get(key)
        if moves is None:
            rows = self.session.execute(
                select(MoveRow.seat, MoveRow.text, MoveRow.public_text, MoveRow.chance)
                .where(MoveRow.game_id == self.stamp.board, MoveRow.kind == "move")
                .order_by(MoveRow.id)
            )
            moves = tuple(KeptMove(*row) for row in rows)
            self.site.moves.put(key, moves)
        return moves

    def view(self, ply: int | None = None) -> PositionView:
        """The reader's view after ``ply`` moves (None: now); 404 beyond the last."""
        key = (self.stamp, self.seat, ply)
        view = self.site.views.get(key)
        if view is None:
            if ply is not None and ply > len(self.moves):
                raise HTTPException(404, f"Board {self.stamp.board} has no move {ply} yet.")
            state_at = self.site.states.state_at(self.board, self.moves)
            view = project(self.board, self.moves, self.seat, ply, state_at=state_at)
            self.site.views.put(key, view)
        return view


def open_public(site: Site, session: Session, board_text: str) -> Opened:
    """The board ``board_text`` names, for the public."""
    number = number_in(board_text)
    if number is None:
        raise HTTPException(404)
    return Opened(site, session, stamp_of(session, number), None, f"/g/{number}")


def open_private(site: Site, session: Session, token: str) -> Opened:
    """The board of the private link ``token``, for its seat (404 for no live link;
    :class:`MovedToPublic` once the board is over)."""
    holder = holder_of(session, token)
    if holder is None:
        raise HTTPException(404)
    stamp = stamp_of(session, holder.board)
    if stamp.finished:
        raise MovedToPublic(holder.board)
    return Opened(site, session, stamp, holder.seat, f"/p/{token}")
