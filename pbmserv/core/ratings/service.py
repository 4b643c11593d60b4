"""Ratings per game. Elo, as pbmserv keeps them: everyone starts at 1600, K is 32, and a rating
is provisional until its player has finished 20 rated boards. Beside it Glicko-2
(``core.ratings.glicko2``): a rating with its deviation, provisional while that is wide, and the
standings ordered by the rating less two deviations.

Every board that ends is rated once (resignations, forfeits and rulings included), except a
declined challenge, or a board a player never accepted (core.play.consent), which count for
nothing. What it changed is kept, so that an operator who reopens the board takes the change
back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import combinations
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from pbmserv.core.context import CommandContext
from pbmserv.core.ratings import glicko2
from pbmserv.db.models import GameRow, Rating, RatingChange, table_of
from pbmserv.db.times import as_utc

START = 1600.0
K = 32.0
PROVISIONAL_UNDER = 20


def expected_score(rating: float, opponent: float) -> float:
    """The score Elo expects of ``rating`` against ``opponent`` (0 to 1)."""
    return 1.0 / (1.0 + float(10.0 ** ((opponent - rating) / 400.0)))


def elo_changes(ratings: Sequence[float], scores: Sequence[float], k: float = K) -> list[float]:
    """Each player's rating change for a game with these ratings and scores (1 won, 0.5
    drawn, 0 lost). With more than two players every pair counts as a game between them, each
    weighted 1/(n-1), so one board moves a rating by at most ``k``."""
    n = len(ratings)
    changes = [0.0] * n
    weight = k / (n - 1) if n > 1 else 0.0
    for a, b in combinations(range(n), 2):
        # The pair's result: who scored more won it.
        actual = 0.5 if scores[a] == scores[b] else (1.0 if scores[a] > scores[b] else 0.0)
        delta = weight * (actual - expected_score(ratings[a], ratings[b]))
        changes[a] += delta
        changes[b] -= delta
    return changes


def is_rated(result: Mapping[str, Any] | None) -> bool:
    """Whether a finished board's stored result counts for ratings: not a declined one, nor
    one a player never accepted (core.play.consent)."""
    if result is None or result.get("unaccepted"):
        return False
    return not result.get("declined") and result.get("termination") != "declined"


def _ensure_rows(ctx: CommandContext, game: str, user_ids: Sequence[int]) -> None:
    """Create missing rating rows; two boards ending at once may both try (no error then)."""
    values = [
        {"game": game, "user_id": uid, "rating": START, "games": 0, "wins": 0, "losses": 0,
         "draws": 0, "updated_at": ctx.now()}
        for uid in user_ids
    ]  # fmt: skip
    dialect = ctx.session.get_bind().dialect.name
    module = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(table_of(Rating)).values(values).on_conflict_do_nothing()
    ctx.session.execute(statement)


def rate(ctx: CommandContext, row: GameRow) -> None:
    """Rate a board that has just ended (once; a declined board never)."""
    if not is_rated(row.result) or row.id is None:
        return
    rated = ctx.session.scalar(
        select(RatingChange.game_id).where(RatingChange.game_id == row.id).limit(1)
    )
    if rated is not None:
        return
    seats = sorted(row.seats, key=lambda s: s.seat)
    user_ids = [s.user_id for s in seats]
    if len(set(user_ids)) < 2:
        return
    _ensure_rows(ctx, row.game, user_ids)
    current = {
        r.user_id: r
        for r in ctx.session.scalars(
            select(Rating)
            .where(Rating.game == row.game, Rating.user_id.in_(user_ids))
            .order_by(Rating.user_id)
            .with_for_update()
        )
    }
    assert row.result is not None
    winners = set(row.result.get("winners", []))
    scores = [(1.0 if s.seat in winners else 0.0) if winners else 0.5 for s in seats]
    changes = elo_changes([current[uid].rating for uid in user_ids], scores)
    now, period = ctx.now(), ctx.settings.rating_period_days
    before = [glicko_of(current[uid]) for uid in user_ids]
    idle = [periods_since(current[uid].glicko_at, now, period) for uid in user_ids]
    after = glicko2.board_ratings(before, scores, idle)
    for uid, score, change, old, new in zip(user_ids, scores, changes, before, after, strict=True):
        rating = current[uid]
        rating.rating += change
        rating.games += 1
        _count(rating, score, +1)
        set_glicko(rating, new, now)
        rating.updated_at = now
        ctx.session.add(
            RatingChange(
                game_id=row.id,
                user_id=uid,
                score=score,
                change=change,
                glicko_change=new.rating - old.rating,
                glicko_rd_change=new.rd - old.rd,
                glicko_volatility_change=new.volatility - old.volatility,
                rated_at=now,
            )
        )


def glicko_of(rating: Rating) -> glicko2.Glicko:
    """The Glicko-2 rating as it stood after the player's last rated board."""
    return glicko2.Glicko(rating.glicko, rating.glicko_rd, rating.glicko_volatility)


def set_glicko(rating: Rating, value: glicko2.Glicko, when: datetime | None) -> None:
    rating.glicko, rating.glicko_rd = value.rating, value.rd
    rating.glicko_volatility, rating.glicko_at = value.volatility, when


def periods_since(when: datetime | None, now: datetime, period_days: float) -> float:
    """Rating periods (fractions counted) from ``when`` to ``now``; none for a newcomer."""
    if when is None:
        return 0.0
    when, now = as_utc(when), as_utc(now)
    return max((now - when) / timedelta(days=period_days), 0.0)


def glicko_now(rating: Rating, now: datetime, period_days: float) -> glicko2.Glicko:
    """The Glicko-2 rating today: its deviation grown by the periods since the last board."""
    return glicko2.aged(glicko_of(rating), periods_since(rating.glicko_at, now, period_days))


def unrate(ctx: CommandContext, row: GameRow) -> bool:
    """Take back what a board did to its players' ratings (the operator reopened it); True
    when it had changed any."""
    changes = list(ctx.session.scalars(select(RatingChange).where(RatingChange.game_id == row.id)))
    for change in changes:
        rating = ctx.session.get(Rating, (row.game, change.user_id), with_for_update=True)
        if rating is not None:
            rating.rating -= change.change
            rating.glicko -= change.glicko_change
            rating.glicko_rd = min(
                max(rating.glicko_rd - change.glicko_rd_change, 1.0), glicko2.START_RD
            )
            rating.glicko_volatility -= change.glicko_volatility_change
            rating.games -= 1
            _count(rating, change.score, -1)
            rating.updated_at = ctx.now()
    ctx.session.execute(delete(RatingChange).where(RatingChange.game_id == row.id))
    return bool(changes)


def _count(rating: Rating, score: float, step: int) -> None:
    if score == 1.0:
        rating.wins += step
    elif score == 0.0:
        rating.losses += step
    else:
        rating.draws += step


def table(ctx: CommandContext, game: str) -> list[Rating]:
    """A game's ratings, best first: by Glicko-2's conservative rating (rating less two
    deviations, as they stand today), then by Elo."""
    rows = ctx.session.scalars(
        select(Rating).where(Rating.game == game, Rating.games > 0).order_by(Rating.user_id)
    )
    now, period = ctx.now(), ctx.settings.rating_period_days
    return sorted(rows, key=lambda r: (-glicko_now(r, now, period).conservative, -r.rating))


def of_user(ctx: CommandContext, user_id: int) -> list[Rating]:
    return list(
        ctx.session.scalars(
            select(Rating).where(Rating.user_id == user_id, Rating.games > 0).order_by(Rating.game)
        )
    )
