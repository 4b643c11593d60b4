"""Glicko-2 (Glickman, "Example of the Glicko-2 system", 2013), updated after every board.

A rating is a rating, a deviation (RD: how unsure it is) and a volatility (how erratic the
player is). The paper rates in periods; here each board is a period of its own and the RD
first grows by the periods (a configured length, fractions counted) since the player's last
rated board, so a rating moves the moment a board ends and an absent player's grows unsure.

Pure maths: no I/O. (PyPI's ``glicko2`` package reads the rating where its volatility step
needs the deviation, so it is not used.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

START_RATING = 1500.0
START_RD = 350.0
START_VOLATILITY = 0.06
#: How fast volatility may change (the paper suggests 0.3 to 1.2).
TAU = 0.5
#: A rating is provisional while its RD is above this (as lichess).
PROVISIONAL_RD = 110.0
SCALE = 173.7178  # the Glicko-2 scale's unit on the Glicko scale
_CONVERGED = 1e-6


@dataclass(frozen=True)
class Glicko:
    rating: float = START_RATING
    rd: float = START_RD
    volatility: float = START_VOLATILITY

    @property
    def conservative(self) -> float:
        """The rating the player is very likely above: rating - 2 RD (standings order)."""
        return self.rating - 2.0 * self.rd

    @property
    def provisional(self) -> bool:
        return self.rd > PROVISIONAL_RD


def aged(player: Glicko, periods: float) -> Glicko:
    """The player after ``periods`` rating periods without a board: the RD grows (never beyond
    a newcomer's)."""
    if periods <= 0:
        return player
    phi = math.sqrt((player.rd / SCALE) ** 2 + periods * player.volatility**2)
    return Glicko(player.rating, min(phi * SCALE, START_RD), player.volatility)


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Glicko, opponent: Glicko) -> float:
    """The score the ratings predict for ``player`` against ``opponent`` (both deviations
    widen the prediction toward 1/2)."""
    phi = math.hypot(player.rd, opponent.rd) / SCALE
    return _expected((player.rating - opponent.rating) / SCALE, 0.0, phi)


def rated(player: Glicko, results: Sequence[tuple[Glicko, float]], periods: float) -> Glicko:
    """The player after one period with these (opponent, score) results (1 won, 1/2 drawn, 0
    lost), ``periods`` periods after their last: steps 2 to 8 of the paper."""
    mu = (player.rating - START_RATING) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not results:
        return aged(player, periods)
    terms = []
    for opponent, score in results:
        mu_j, phi_j = (opponent.rating - START_RATING) / SCALE, opponent.rd / SCALE
        expected = _expected(mu, mu_j, phi_j)
        terms.append((_g(phi_j), expected, score))
    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)
    improvement = sum(g * (s - e) for g, e, s in terms)
    delta = v * improvement
    sigma = _volatility(phi, sigma, v, delta)
    phi_star = min(math.sqrt(phi * phi + max(periods, 0.0) * sigma * sigma), START_RD / SCALE)
    phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu += phi * phi * improvement
    return Glicko(mu * SCALE + START_RATING, phi * SCALE, sigma)


def _volatility(phi: float, sigma: float, v: float, delta: float) -> float:
    """Step 5: the new volatility, by the Illinois method on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (
            x - a
        ) / (TAU * TAU)

    low = a
    if delta * delta > phi * phi + v:
        high = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        high = a - k * TAU
    f_low, f_high = f(low), f(high)
    while abs(high - low) > _CONVERGED:
        new = low + (low - high) * f_low / (f_high - f_low)
        f_new = f(new)
        if f_new * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2.0
        high, f_high = new, f_new
    return math.exp(low / 2.0)


def pair_score(score: float, other: float) -> float:
    """One seat's result against another on a board: who scored more won it."""
    return 0.5 if score == other else (1.0 if score > other else 0.0)


def board_ratings(
    players: Sequence[Glicko], scores: Sequence[float], periods: Sequence[float]
) -> list[Glicko]:
    """Every seat's rating after a board: each other seat is a game against them (as they stand
    now, ``periods`` after their last board), and the board is one period for all."""
    now = [aged(player, idle) for player, idle in zip(players, periods, strict=True)]
    return [
        rated(
            player,
            [(now[j], pair_score(scores[i], scores[j])) for j in range(len(players)) if j != i],
            periods[i],
        )
        for i, player in enumerate(players)
    ]
