"""A player's ratings over time, read back from what each rated board changed: the Elo and the
Glicko-2 rating (with its deviation) after every rated result, game by game, for the web view's
charts. Read only, and one query for all of a player's games.

A point is rebuilt forward from where everyone starts (``service.START``, Glicko-2's start):
the rating after a board is the start plus the changes of every board rated until then, in the
order they were rated (as ``history.rated_boards`` orders them). A board an operator reopened or
deleted took its change back from the rating (``service.unrate``) and its row is gone: the
points that remain still add up to the rating the player holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import and_, bindparam, case, func, select
from sqlalchemy.orm import Session

from pbmserv.core.ratings import glicko2
from pbmserv.core.ratings.service import START
from pbmserv.db.models import GameRow, RatingChange, Seat, table_of


class RatedPoint(NamedTuple):
    """A player's ratings right after one rated board of a game (a tuple: a page makes
    hundreds)."""

    board: int
    rated_at: datetime  # aware, UTC
    day: str  # its date, 2024-05-17 (UTC)
    score: float  # 1 won, 1/2 drawn, 0 lost
    elo: float
    glicko: float
    rd: float

    @property
    def result(self) -> str:
        return "won" if self.score == 1.0 else "lost" if self.score == 0.0 else "drawn"


#: (board, game, score, Elo change, Glicko-2 change, RD change, when rated) for one user.
Change = tuple[int, str, float, float, float, float, datetime]


_CHANGES, _GAMES, _SEATS = table_of(RatingChange), table_of(GameRow), table_of(Seat)


def _rated(name: str) -> Any:
    """``:name``'s rating changes: found through their seats (the seats' index of users; the
    changes have none but by board)."""
    seated = select(_SEATS.c.game_id).where(_SEATS.c.user_id == bindparam(name))
    return and_(_CHANGES.c.game_id.in_(seated), _CHANGES.c.user_id == bindparam(name))


_WHEN = func.coalesce(_CHANGES.c.rated_at, _GAMES.c.updated_at)
#: Made once (a page runs it as it is): what every rated board did to ``:user``'s ratings.
_CHANGES_OF = (
    select(
        _CHANGES.c.game_id,
        _GAMES.c.game,
        _CHANGES.c.score,
        _CHANGES.c.change,
        _CHANGES.c.glicko_change,
        _CHANGES.c.glicko_rd_change,
        _WHEN,
    )
    .select_from(_CHANGES.join(_GAMES, _GAMES.c.id == _CHANGES.c.game_id))
    .where(_rated("user"))
    .order_by(_WHEN, _CHANGES.c.game_id)
)


def changes_of(session: Session, user_id: int) -> list[Change]:
    """What every rated board did to ``user_id``'s ratings, oldest first (a board rated before
    its time was kept counts as rated when last changed)."""
    return list(session.execute(_CHANGES_OF, {"user": user_id}).all())


def timelines(changes: Iterable[Change]) -> dict[str, list[RatedPoint]]:
    """Each game's points, in the order rated, from :func:`changes_of`'s changes."""
    standing: dict[str, tuple[float, float, float]] = {}
    points: dict[str, list[RatedPoint]] = {}
    for board, game, score, elo_change, glicko_change, rd_change, when in changes:
        elo, glicko, rd = standing.get(game, (START, glicko2.START_RATING, glicko2.START_RD))
        elo, glicko, rd = elo + elo_change, glicko + glicko_change, rd + rd_change
        standing[game] = (elo, glicko, rd)
        at = when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # as_utc
        line = points.get(game)
        if line is None:
            line = points[game] = []
        line.append(RatedPoint(board, at, at.date().isoformat(), score, elo, glicko, rd))
    return points


def timelines_of(session: Session, user_id: int) -> dict[str, list[RatedPoint]]:
    """``user_id``'s points in every game they have a rated board of (one query)."""
    return timelines(changes_of(session, user_id))


_THEIRS = _CHANGES.alias("theirs")
_HEAD_TO_HEAD = (
    select(
        func.sum(case((_CHANGES.c.score > _THEIRS.c.score, 1), else_=0)),
        func.sum(case((_CHANGES.c.score == _THEIRS.c.score, 1), else_=0)),
        func.sum(case((_CHANGES.c.score < _THEIRS.c.score, 1), else_=0)),
    )
    .select_from(_CHANGES.join(_THEIRS, _THEIRS.c.game_id == _CHANGES.c.game_id))
    .where(_rated("first"), _THEIRS.c.user_id == bindparam("second"))
)


def head_to_head(session: Session, first: int, second: int) -> tuple[int, int, int]:
    """The rated boards of ``first`` with ``second``, won, drawn and lost from ``first``'s side
    (on a board of more players, the one of the two who scored more took it, as Elo counts
    each pair); one query."""
    row = session.execute(_HEAD_TO_HEAD, {"first": first, "second": second}).one()
    return int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)
