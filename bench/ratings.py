"""How well each rating system predicts the next game: Elo (as pbmserv keeps it) and Glicko-2
(``core.ratings.glicko2``), side by side on the same games.

Before every game each system predicts the first player's score from the ratings as they stand
(Glicko-2's deviations grown by the time since each player's last board); the game is then
rated by both, as the server rates a board. Printed per system: the mean log-loss of those
predictions (lower is better; 0.693 is a coin toss) and the Brier score.

Two sources: ``--league`` (the default) plays synthetic correspondence leagues whose players
have known strengths: players join over the season, some improve as they play, and results
are drawn from the true strengths (a few draws). ``--db URL`` replays the rated boards stored
in a pbmserv database, oldest first (boards of more than two seats count every pair).

Goal (issue 34): Glicko-2 no worse than Elo on the synthetic league.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import combinations

from pbmserv.config import Settings
from pbmserv.core.ratings import glicko2
from pbmserv.core.ratings import service as ratings

DAY = timedelta(days=1)


@dataclass
class Score:
    """The running log-loss and Brier score of one system's predictions."""

    games: int = 0
    log_loss: float = 0.0
    brier: float = 0.0

    def add(self, predicted: float, actual: float) -> None:
        p = min(max(predicted, 1e-9), 1 - 1e-9)
        self.games += 1
        self.log_loss -= actual * math.log(p) + (1 - actual) * math.log(1 - p)
        self.brier += (predicted - actual) ** 2

    @property
    def mean_log_loss(self) -> float:
        return self.log_loss / self.games

    @property
    def mean_brier(self) -> float:
        return self.brier / self.games


@dataclass
class Systems:
    """Both systems' ratings of every player, rated board by board as the server rates them."""

    period_days: float
    elo: dict[Hashable, float] = field(default_factory=dict)
    glicko: dict[Hashable, tuple[glicko2.Glicko, datetime | None]] = field(default_factory=dict)
    elo_score: Score = field(default_factory=Score)
    glicko_score: Score = field(default_factory=Score)

    def _glicko_now(self, player: Hashable, when: datetime) -> tuple[glicko2.Glicko, float]:
        value, last = self.glicko.get(player, (glicko2.Glicko(), None))
        idle = ratings.periods_since(last, when, self.period_days)
        return value, idle

    def board(self, players: Sequence[Hashable], scores: list[float], when: datetime) -> None:
        """Predict every pair of the board, then rate it."""
        elo = [self.elo.get(p, ratings.START) for p in players]
        standing = [self._glicko_now(p, when) for p in players]
        now = [glicko2.aged(value, idle) for value, idle in standing]
        for a, b in combinations(range(len(players)), 2):
            actual = glicko2.pair_score(scores[a], scores[b])
            self.elo_score.add(ratings.expected_score(elo[a], elo[b]), actual)
            self.glicko_score.add(glicko2.expected_score(now[a], now[b]), actual)
        for player, rating, change in zip(
            players, elo, ratings.elo_changes(elo, scores), strict=True
        ):
            self.elo[player] = rating + change
        after = glicko2.board_ratings(
            [value for value, _ in standing], scores, [idle for _, idle in standing]
        )
        for player, value in zip(players, after, strict=True):
            self.glicko[player] = (value, when)


def league(seed: int, period_days: float) -> Systems:
    """One synthetic season: 120 players joining over 400 days, each playing a board every
    few days against a random opponent; a quarter of them improve steadily."""
    rng = random.Random(seed)
    systems = Systems(period_days)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    players = []
    for index in range(120):
        players.append(
            {
                "id": index,
                "strength": rng.gauss(1500, 250),
                "joins": rng.uniform(0, 300),
                "leaves": rng.uniform(350, 700),
                "gain_per_day": rng.uniform(0.5, 2.0) if rng.random() < 0.25 else 0.0,
                "every_days": rng.uniform(2, 12),
            }
        )
    for day in range(400):
        active = [p for p in players if p["joins"] <= day < p["leaves"]]
        for player in active:
            if day - player["joins"] < 0 or rng.random() > 1 / player["every_days"]:
                continue
            opponent = rng.choice([p for p in active if p is not player] or [player])
            if opponent is player:
                continue
            strengths = [p["strength"] + p["gain_per_day"] * (day - p["joins"]) for p in
                         (player, opponent)]  # fmt: skip
            win = ratings.expected_score(strengths[0], strengths[1])
            draw = 0.05
            roll = rng.random()
            score = 0.5 if roll < draw else (1.0 if roll < draw + (1 - draw) * win else 0.0)
            when = start + day * DAY + rng.random() * DAY
            systems.board([player["id"], opponent["id"]], [score, 1.0 - score], when)
    return systems


def from_database(url: str, period_days: float) -> Systems:
    from pbmserv.core.ratings.history import rated_boards
    from pbmserv.db.engine import make_engine, session_factory

    systems = Systems(period_days)
    with session_factory(make_engine(url))() as session:
        for board in rated_boards(session):
            players = [(board.game, user_id) for user_id, _ in board.scores]
            systems.board(players, [score for _, score in board.scores], board.rated_at)
    return systems


def report(title: str, runs: Iterable[Systems]) -> tuple[float, float]:
    runs = list(runs)
    elo = [r.elo_score.mean_log_loss for r in runs if r.elo_score.games]
    glicko = [r.glicko_score.mean_log_loss for r in runs if r.glicko_score.games]
    games = sum(r.elo_score.games for r in runs)
    if not games:
        print(f"{title}: no rated games")
        return math.nan, math.nan
    brier_elo = statistics.fmean(r.elo_score.mean_brier for r in runs if r.elo_score.games)
    brier_glicko = statistics.fmean(r.glicko_score.mean_brier for r in runs if r.glicko_score.games)
    print(f"{title}: {games} games predicted")
    print(f"  {'system':<10} {'log-loss':>9} {'Brier':>7}")
    print(f"  {'Elo':<10} {statistics.fmean(elo):>9.4f} {brier_elo:>7.4f}")
    print(f"  {'Glicko-2':<10} {statistics.fmean(glicko):>9.4f} {brier_glicko:>7.4f}")
    if len(runs) > 1:
        wins = sum(g <= e for g, e in zip(glicko, elo, strict=True))
        print(f"  Glicko-2 no worse than Elo in {wins} of {len(runs)} seasons")
    return statistics.fmean(elo), statistics.fmean(glicko)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="replay the rated boards of this database instead")
    parser.add_argument("--seasons", type=int, default=10, help="synthetic seasons (default 10)")
    parser.add_argument(
        "--period-days",
        type=float,
        default=Settings().rating_period_days,
        help="Glicko-2's rating period (default: the server's)",
    )
    args = parser.parse_args(argv)
    if args.db:
        report(f"database {args.db}", [from_database(args.db, args.period_days)])
        return 0
    title = f"synthetic league, {args.seasons} seasons, rating period {args.period_days:g} days"
    elo, glicko = report(title, (league(seed, args.period_days) for seed in range(args.seasons)))
    met = glicko <= elo
    print(f"goal (Glicko-2 no worse than Elo): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
