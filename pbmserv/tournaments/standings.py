"""Scores, tie-breaks and the standings table.

A match is one or more games between two players. Each game gives its winner 1 point and each
player half a point when drawn; the match goes to whoever has more game points, and is drawn when
they are level. The standings count match points the same way (1 win, 1/2 draw, 0 loss) plus
``bye_points`` for every bye, so with one-game matches match points are game points.

Tie-breaks: Buchholz (the Swiss systems) is the sum of the scores of the opponents met, one term
per match, a bye adding nothing; Sonneborn-Berger (round robin) is the sum, over the matches, of
the opponent's score times the match points taken from them. Players level on score and
tie-break share a rank and keep the order they were given in (seed order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pbmserv.tournaments.pairing import Pairing, PlayerId, check_unique_players

WIN, DRAW, LOSS = 1.0, 0.5, 0.0


class Tiebreak(StrEnum):
    """How players level on score are told apart."""

    NONE = "none"
    BUCHHOLZ = "buchholz"
    SONNEBORN_BERGER = "sonneborn-berger"


@dataclass(frozen=True)
class MatchResult:
    """A finished match: ``points`` is what ``first`` scored (1, 1/2 or 0); ``second`` scored
    the rest."""

    first: PlayerId
    second: PlayerId
    points: float

    def __post_init__(self) -> None:
        if self.points not in (WIN, DRAW, LOSS):
            raise ValueError(f"a match scores 1, 1/2 or 0, not {self.points}")
        if self.first == self.second:
            raise ValueError(f"{self.first} cannot play themselves")

    @property
    def winner(self) -> PlayerId | None:
        """The winner, or None for a drawn match."""
        if self.points == DRAW:
            return None
        return self.first if self.points == WIN else self.second

    def points_of(self, player: PlayerId) -> float:
        """The match points ``player`` took from this match."""
        if player == self.first:
            return self.points
        if player == self.second:
            return WIN - self.points
        raise ValueError(f"{player} did not play {self.first} v {self.second}")

    def opponent_of(self, player: PlayerId) -> PlayerId:
        """The other player of the match."""
        return Pairing(self.first, self.second).opponent_of(player)


def game_result(pairing: Pairing, winner: PlayerId | None) -> MatchResult:
    """A one-game match: ``winner`` is a player of ``pairing``, or None for a draw."""
    return match_result(pairing, [winner])


def match_result(pairing: Pairing, game_winners: Iterable[PlayerId | None]) -> MatchResult:
    """A match from the winner of each of its games (None for a drawn game)."""
    points = {pairing.first: 0.0, pairing.second: 0.0}
    games = 0
    for winner in game_winners:
        games += 1
        if winner is None:
            points[pairing.first] += DRAW
            points[pairing.second] += DRAW
        elif winner in points:
            points[winner] += WIN
        else:
            raise ValueError(f"{winner} did not play {pairing.first} v {pairing.second}")
    if not games:
        raise ValueError("a match has at least one game")
    first, second = points[pairing.first], points[pairing.second]
    outcome = WIN if first > second else LOSS if first < second else DRAW
    return MatchResult(pairing.first, pairing.second, outcome)


@dataclass(frozen=True)
class Standing:
    """One line of the standings. ``rank`` is shared by players level on score and tie-break."""

    player: PlayerId
    score: float
    tiebreak: float = 0.0
    rank: int = 1


def scores(
    players: Sequence[PlayerId],
    results: Iterable[MatchResult],
    byes: Iterable[PlayerId] = (),
    bye_points: float = WIN,
) -> dict[PlayerId, float]:
    """Each player's score: match points plus ``bye_points`` per bye (one entry per bye)."""
    total = _sum_per_match(players, results, MatchResult.points_of)
    for player in byes:
        if player in total:
            total[player] += bye_points
    return total


def buchholz(
    players: Sequence[PlayerId],
    results: Iterable[MatchResult],
    score_of: Mapping[PlayerId, float],
) -> dict[PlayerId, float]:
    """The sum of the scores of each player's opponents (one term per match played)."""
    return _sum_per_match(
        players, results, lambda result, player: score_of.get(result.opponent_of(player), 0.0)
    )


def sonneborn_berger(
    players: Sequence[PlayerId],
    results: Iterable[MatchResult],
    score_of: Mapping[PlayerId, float],
) -> dict[PlayerId, float]:
    """The sum over each player's matches of the opponent's score times the points taken."""
    return _sum_per_match(
        players,
        results,
        lambda result, player: (
            result.points_of(player) * score_of.get(result.opponent_of(player), 0.0)
        ),
    )


def _sum_per_match(
    players: Sequence[PlayerId],
    results: Iterable[MatchResult],
    term: Callable[[MatchResult, PlayerId], float],
) -> dict[PlayerId, float]:
    """For each of ``players``, the sum of ``term(result, player)`` over the matches played."""
    total = dict.fromkeys(players, 0.0)
    for result in results:
        for player in (result.first, result.second):
            if player in total:
                total[player] += term(result, player)
    return total


def compute_standings(
    players: Sequence[PlayerId],
    results: Sequence[MatchResult],
    *,
    byes: Iterable[PlayerId] = (),
    tiebreak: Tiebreak | str = Tiebreak.NONE,
    bye_points: float = WIN,
) -> tuple[Standing, ...]:
    """The standings of ``players`` (given in seed order) after ``results`` and ``byes``.

    Sorted by score, then tie-break, then the order given. Results involving players not
    listed (for example withdrawn ones) still count for their opponents.
    """
    check_unique_players(players)
    method = _TIEBREAKS[_tiebreak(tiebreak)]
    # Withdrawn players are not listed, but their scores still count in their opponents'
    # tie-breaks.
    score_of = scores(_everyone(players, results), results, byes, bye_points)
    extra = method(players, results, score_of) if method else dict.fromkeys(players, 0.0)
    seed_order = {player: i for i, player in enumerate(players)}
    ordered = sorted(players, key=lambda p: (-score_of[p], -extra[p], seed_order[p]))
    table: list[Standing] = []
    for position, player in enumerate(ordered, start=1):
        key = (score_of[player], extra[player])
        level = bool(table) and (table[-1].score, table[-1].tiebreak) == key
        table.append(Standing(player, *key, rank=table[-1].rank if level else position))
    return tuple(table)


def _tiebreak(value: Tiebreak | str) -> Tiebreak:
    try:
        return Tiebreak(value)
    except ValueError:
        choices = ", ".join(t.value for t in Tiebreak)
        raise ValueError(f"unknown tie-break {value!r}: choose one of {choices}") from None


def _everyone(players: Sequence[PlayerId], results: Sequence[MatchResult]) -> list[PlayerId]:
    listed = set(players)
    others = {p for r in results for p in (r.first, r.second) if p not in listed}
    return list(players) + sorted(others, key=str)


_TIEBREAKS = {
    Tiebreak.NONE: None,
    Tiebreak.BUCHHOLZ: buchholz,
    Tiebreak.SONNEBORN_BERGER: sonneborn_berger,
}
