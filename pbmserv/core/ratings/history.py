"""The rated boards of the past, in the order they were rated: replayed into Glicko-2 when the
database gains it (or the rating period changes), and by ``bench/ratings.py``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby

from sqlalchemy import Engine, exists, func, select
from sqlalchemy.orm import Session

from pbmserv.core.ratings import glicko2
from pbmserv.core.ratings.service import periods_since, set_glicko
from pbmserv.db.models import GameRow, Rating, RatingChange


@dataclass(frozen=True)
class RatedBoard:
    game_id: int
    game: str
    rated_at: datetime
    #: (user id, score) of each seat: 1 won, 1/2 drawn, 0 lost.
    scores: list[tuple[int, float]]
    changes: list[RatingChange]


def rated_boards(session: Session) -> Iterator[RatedBoard]:
    """Every rated board, oldest first (boards rated before their time was kept count as rated
    when last changed)."""
    when = func.coalesce(RatingChange.rated_at, GameRow.updated_at)
    rows = session.execute(
        select(RatingChange, GameRow.game, when)
        .join(GameRow, GameRow.id == RatingChange.game_id)
        .order_by(when, RatingChange.game_id, RatingChange.user_id)
    )
    for game_id, group in groupby(rows, key=lambda row: row[0].game_id):
        board = list(group)
        yield RatedBoard(
            game_id=game_id,
            game=board[0][1],
            rated_at=board[0][2],
            scores=[(change.user_id, change.score) for change, _, _ in board],
            changes=[change for change, _, _ in board],
        )


def needs_rebuild(session: Session) -> bool:
    """Whether players have rated boards that Glicko-2 has not seen (a database from before it)."""
    stale = exists().where(Rating.games > 0, Rating.glicko_at.is_(None))
    return bool(session.scalar(select(stale)))


def rebuild_glicko(session: Session, period_days: float) -> int:
    """Replay every rated board into Glicko-2 from scratch (Elo is left as it is); the number
    of boards replayed."""
    standing: dict[tuple[str, int], tuple[glicko2.Glicko, datetime | None]] = {}
    boards = 0
    for board in rated_boards(session):
        keys = [(board.game, user_id) for user_id, _ in board.scores]
        before = [standing.get(key, (glicko2.Glicko(), None)) for key in keys]
        idle = [periods_since(at, board.rated_at, period_days) for _, at in before]
        scores = [score for _, score in board.scores]
        after = glicko2.board_ratings([value for value, _ in before], scores, idle)
        for key, change, (old, _), new in zip(keys, board.changes, before, after, strict=True):
            change.glicko_change = new.rating - old.rating
            change.glicko_rd_change = new.rd - old.rd
            change.glicko_volatility_change = new.volatility - old.volatility
            standing[key] = (new, board.rated_at)
        boards += 1
    for rating in session.scalars(select(Rating)):
        value, when = standing.get((rating.game, rating.user_id), (glicko2.Glicko(), None))
        set_glicko(rating, value, when)
    session.flush()
    return boards


def fill_glicko(engine: Engine, period_days: float) -> int:
    """After ``pbmserv db upgrade``: a database from before Glicko-2 (0018) gets its players'
    past boards replayed into it; the number of boards replayed (0: nothing was missing)."""
    with Session(engine) as session, session.begin():
        return rebuild_glicko(session, period_days) if needs_rebuild(session) else 0
